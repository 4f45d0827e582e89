// ---- libtorch's legacy C shims (shimgen/generate/routes/legacy_shim.py) ----
//
// shim.h's older AOTInductor shims (aoti_torch_addmm_out, ...) call
// at::<op>_out through the dispatcher and carry a Scalar as a `float`.

/// Does a `float` hold the number exactly? (A bool or complex number never
/// crosses as one.)
template <typename = void>
inline bool fits_float(const Scalar& s) {
  if (s.is_floating_point()) {
    const double d = s.to_double();
    return static_cast<double>(static_cast<float>(d)) == d;
  }
  if (s.kind() != Scalar::Kind::Int) {
    return false;
  }
  const int64_t v = s.to_int64();
  constexpr int64_t limit = int64_t(1) << 53;
  if (v < -limit || v > limit) {
    return false;
  }
  return static_cast<int64_t>(static_cast<float>(v)) == v;
}

/// Does a legacy shim's float carry `s` exactly for tensor `t`? `cells` is
/// the proven (tensor category, number kind) mask of data/legacy_shims.yaml:
/// bit 4 * category + kind, category 0 bool, 1 integral, 2 floating,
/// 3 complex; kind 1 integer, 2 floating-point.
template <typename = void>
inline bool float_carries(
    const Scalar& s,
    const torch::stable::Tensor& t,
    uint32_t cells) {
  if (!fits_float(s)) {
    return false;
  }
  const int p = position(t.scalar_type());
  int category = 1;
  if (is_complex(p)) {
    category = 3;
  } else if (is_floating(p)) {
    category = 2;
  } else if (t.scalar_type() == ScalarType::Bool) {
    category = 0;
  }
  const int kind = s.is_floating_point() ? 2 : 1;
  return (cells >> (4 * category + kind)) & 1u;
}

/// An empty 0x0 tensor of `like`'s dtype and device.
template <typename = void>
inline torch::stable::Tensor empty_0x0(const torch::stable::Tensor& like) {
  int32_t dtype = 0;
  int32_t device_type = 0;
  int32_t device_index = 0;
  AtenTensorHandle h = like.get();
  check(aoti_torch_get_dtype(h, &dtype), "aoti_torch_get_dtype");
  check(aoti_torch_get_device_type(h, &device_type), "get_device_type");
  check(aoti_torch_get_device_index(h, &device_index), "get_device_index");
  const std::array<int64_t, 2> sizes{0, 0};
  const std::array<int64_t, 2> strides{1, 1};
  AtenTensorHandle out = nullptr;
  check(
      aoti_torch_empty_strided(
          2,
          sizes.data(),
          strides.data(),
          dtype,
          device_type,
          device_index,
          &out),
      "aoti_torch_empty_strided");
  return torch::stable::Tensor(out);
}

/// aten::`op` through the boxed dispatcher, its stack given; a failure raises
/// aten's own error where libtorch hands it over (2.13+), as SHIMGEN_CHECK.
template <size_t N>
inline torch::stable::Tensor dispatch_tensors(
    const char* op,
    const char* overload,
    std::array<StableIValue, N> stack) {
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  const AOTITorchError err =
      torch_call_dispatcher(op, overload, stack.data(), TORCH_ABI_VERSION);
#else
  const AOTITorchError err =
      aoti_torch_call_dispatcher(op, overload, stack.data());
#endif
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
  return torch::stable::detail::to<torch::stable::Tensor>(stack[0]);
}

/// The result of dispatching aten::`op` on empty 0x0 tensors of `a`'s and
/// `b`'s dtype and device: a tensor of the dtype and device aten's dispatch
/// gives that op (autocast included) for those inputs.
template <typename = void>
inline torch::stable::Tensor dispatch_probe(
    const char* op,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<2>(
      op,
      "",
      {torch::stable::detail::from(empty_0x0(a)),
       torch::stable::detail::from(empty_0x0(b))});
}

/// `t` as autocast hands it to an op whose result aten's dispatch gives in
/// dtype `out` (dispatch_probe): autocast's lower-precision policy
/// (cached_cast) casts a floating-point operand on the autocast device that
/// is not float64 to that dtype (aten::_to_copy, as its .to() does), and
/// leaves every other one alone. Where `out` is t's own dtype (no autocast),
/// `t` itself.
template <typename = void>
inline torch::stable::Tensor autocast_like(
    const torch::stable::Tensor& t,
    const torch::stable::Tensor& out) {
  const ScalarType from = t.scalar_type();
  const ScalarType to = out.scalar_type();
  if (from == to || from == ScalarType::Double) {
    return t;
  }
  if (!is_floating(position(from))) {
    return t;
  }
  int32_t t_device = 0;
  int32_t out_device = 0;
  check(aoti_torch_get_device_type(t.get(), &t_device), "get_device_type");
  check(aoti_torch_get_device_type(out.get(), &out_device), "get_device_type");
  if (t_device != out_device) {
    return t;
  }
  return dispatch_tensors<7>(
      "aten::_to_copy",
      "",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(std::optional<ScalarType>(to)),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(false),
       torch::stable::detail::from(std::nullopt)});
}

/// A legacy shim call that failed: aten's reason (libtorch's message from
/// 2.13; before, libtorch logged it on stderr), and the remedy where autograd
/// refused the out= call.
template <typename = void>
[[noreturn]] inline void legacy_failed(const char* op, const char* function) {
  std::string reason = failure_reason();
  if (aoti_torch_grad_mode_is_enabled()) {
    reason += " (shimgen: ";
    reason += op;
    reason += " went through libtorch's out= shim ";
    reason += function;
    reason += ", which autograd refuses where an input requires grad in ";
    reason += "grad mode: call it with grad mode off (as a custom op's ";
    reason += "forward under torch.library.register_autograd runs), or ";
    reason += "define SHIMGEN_OVERLAY and link libshimgen_overlay, rebuilt ";
    reason += "for each torch release)";
  }
  throw std::runtime_error(reason);
}

