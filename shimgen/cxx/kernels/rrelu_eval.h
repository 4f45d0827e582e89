// @needs legacy_shims compositions
// ---- kernel `rrelu_eval` (rrelu, rrelu_, rrelu_with_noise and its out=,
// in-place and backward overloads): aten's rrelu in eval mode is leaky_relu
// with the slope (lower + upper) / 2; training draws random noise, refused
// (shimgen/generate/routes/composition.py) ----

/// training=true: aten draws the slopes from its generator, which no
/// composition reproduces.
template <typename = void>
inline void rrelu_refuse_training(const char* op, bool training) {
  if (!training) {
    return;
  }
  std::string why = "training=true draws random slopes from aten's ";
  why += "generator, which no libtorch route carries: pass training=false ";
  why += "(eval mode), or define SHIMGEN_OVERLAY and link libshimgen_overlay ";
  why += "(rebuilt for each torch release)";
  fail(op, why.c_str());
}

/// aten's rrelu and rrelu_ check lower <= upper (as doubles: a NaN fails);
/// `finite` (rrelu): torch 2.15 also requires finite bounds, which earlier
/// releases compute with, so a non-finite bound is refused.
template <typename = void>
inline void rrelu_check_bounds(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool finite) {
  const char* names[2] = {"lower", "upper"};
  const Scalar* numbers[2] = {&lower, &upper};
  std::string why = "torch 2.15 raises for a bound that is not finite, ";
  why += "earlier releases compute with it";
  for (int i = 0; i < 2; ++i) {
    const Scalar& n = *numbers[i];
    const bool finite_number = !n.is_complex() && std::isfinite(n.to_double());
    if (finite && !finite_number) {
      refuse(op, names[i], n, why);
    }
  }
  if (lower.is_complex() || upper.is_complex()) {
    return;
  }
  if (!(lower.to_double() <= upper.to_double())) {
    std::string text = "Lower bound should be less than or equal to the ";
    text += "upper bound (aten raises)";
    fail(op, text.c_str());
  }
}

/// The slope aten's rrelu kernel computes in eval mode: (lower + upper) / 2
/// over 0-dim tensors of the numbers (scalar_to_tensor: a double as float64,
/// an integer as int64), which with a floating lower or upper is that sum in
/// double. Two integers (the default dtype's division), a bool or complex
/// number, or an integer no double holds are refused.
template <typename = void>
inline Scalar rrelu_slope(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool training) {
  rrelu_refuse_training(op, training);
  const char* names[2] = {"lower", "upper"};
  const Scalar* numbers[2] = {&lower, &upper};
  const std::string why = "aten computes the slope in its dtype, not a double";
  for (int i = 0; i < 2; ++i) {
    const Scalar& n = *numbers[i];
    const bool integral = n.is_integral();
    const bool held = n.is_floating_point() || (integral && fits_double(n));
    if (!held) {
      refuse(op, names[i], n, why);
    }
  }
  if (!lower.is_floating_point() && !upper.is_floating_point()) {
    std::string text = "with an integer lower and upper aten divides in the ";
    text += "default dtype: pass a floating lower or upper";
    refuse(op, "lower", lower, text);
  }
  return Scalar((lower.to_double() + upper.to_double()) / 2);
}

/// The slope aten's rrelu_with_noise_backward uses in eval mode:
/// (lower.toDouble() + upper.toDouble()) / 2. A complex number is refused.
template <typename = void>
inline Scalar rrelu_backward_slope(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool training) {
  rrelu_refuse_training(op, training);
  if (lower.is_complex()) {
    refuse(op, "lower", lower, "a complex number");
  }
  if (upper.is_complex()) {
    refuse(op, "upper", upper, "a complex number");
  }
  return Scalar((lower.to_double() + upper.to_double()) / 2.);
}

/// aten's check of the noise tensor: self's sizes.
template <typename = void>
inline void rrelu_noise_check(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& noise) {
  if (!same_sizes(self, noise)) {
    fail(op, "noise tensor shape must match self tensor shape (aten raises)");
  }
}

/// `result` laid out as a new contiguous tensor, as aten's rrelu kernel
/// allocates its output (empty_like with LEGACY_CONTIGUOUS_MEMORY_FORMAT):
/// where its strides differ, aten::copy_ into one (autograd records the copy,
/// whose gradient is the identity).
template <typename = void>
inline torch::stable::Tensor contiguous_result(const torch::stable::Tensor& result) {
  const int64_t n = result.dim();
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  check(aoti_torch_get_sizes(result.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(result.get(), &strides), "aoti_torch_get_strides");
  std::vector<int64_t> want(static_cast<size_t>(n));
  int64_t step = 1;
  bool same = true;
  for (int64_t d = n - 1; d >= 0; --d) {
    want[static_cast<size_t>(d)] = step;
    same = same && strides[d] == step;
    step *= sizes[d] > 1 ? sizes[d] : 1;
  }
  if (same) {
    return result;
  }
  int32_t device_type = 0;
  int32_t device_index = 0;
  check(aoti_torch_get_device_type(result.get(), &device_type), "get_device_type");
  check(aoti_torch_get_device_index(result.get(), &device_index), "get_device_index");
  const int32_t dtype = torch::stable::detail::to<int32_t>(
      torch::stable::detail::from(result.scalar_type()));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          n, sizes, want.data(), dtype, device_type, device_index, &h),
      "aoti_torch_empty_strided");
  torch::stable::Tensor out(h);
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(result),
       torch::stable::detail::from(false)});
  return out;
}

