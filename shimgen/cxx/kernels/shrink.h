// @needs legacy_shims compositions
// ---- softshrink and the shrink / hardtanh backward kernels (kernels
// `softshrink`, `shrink_grad`, `hardtanh_backward`,
// shimgen/generate/routes/composition.py) ----

/// Does half (or bfloat16) hold `v` exactly? (11 (8) significant bits; for
/// half, subnormals down to 2^-24; for bfloat16 normal numbers only, so a
/// subnormal one counts as not held.)
template <typename = void>
inline bool reduced_holds(double v, ScalarType t) {
  const double a = std::fabs(v);
  if (a == 0) {
    return true;
  }
  const bool half = t == ScalarType::Half;
  if (!std::isfinite(a) || a > (half ? 65504.0 : 3.3895313892515355e38)) {
    return false;
  }
  if (half && a < 6.103515625e-05) {
    const double scaled = std::ldexp(a, 24);
    return scaled == std::floor(scaled);
  }
  if (!half && a < std::ldexp(1.0, -126)) {
    return false;
  }
  int e = 0;
  const double s = std::ldexp(std::frexp(a, &e), half ? 11 : 8);
  return s == std::floor(s);
}

/// A NaN in `self` of a backward kernel is refused: aten's CPU kernels
/// answer it by the element's position in their vectorized loop (0 in the
/// vectorized body, grad_output in the scalar tail: measured on every
/// runtime), which no composition can follow. As aten::isnan, aten::any and
/// aten::is_nonzero (one bool, read from any device).
template <typename = void>
inline void refuse_nan(const char* op, const torch::stable::Tensor& self) {
  const torch::stable::Tensor nan = dispatch_tensors<1>(
      "aten::isnan", "", {torch::stable::detail::from(self)});
  const torch::stable::Tensor any = dispatch_tensors<1>(
      "aten::any", "", {torch::stable::detail::from(nan)});
  std::array<StableIValue, 1> stack{torch::stable::detail::from(any)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher(
          "aten::is_nonzero", "", stack.data(), TORCH_ABI_VERSION),
      "aten::is_nonzero");
#else
  check(
      aoti_torch_call_dispatcher("aten::is_nonzero", "", stack.data()),
      "aten::is_nonzero");
#endif
  if (torch::stable::detail::to<bool>(stack[0])) {
    std::string why = "self holds a NaN, where aten's kernel gives 0 or ";
    why += "grad_output depending on the element's position in its ";
    why += "vectorized loop: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// softshrink's operands: self in the dtype aten's softshrink kernel computes
/// in (float for half and bfloat16, where lambd must be one those dtypes
/// hold exactly: reduced_holds), lambd and -lambd as 0-dim tensors of it,
/// and self's dtype. aten raises for a negative or NaN lambd and for
/// non-floating dtypes.
struct SHIMGEN_HIDDEN ShrinkOperands {
  torch::stable::Tensor x;
  torch::stable::Tensor hi;
  torch::stable::Tensor lo;
  ScalarType t;
};

template <typename = void>
inline ShrinkOperands softshrink_operands(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, false, compute)) {
    no_kernel(op);
  }
  if (lambd.is_complex()) {
    refuse(op, "lambd", lambd, "a complex number (aten raises)");
  }
  if (!(lambd.to_double() >= 0)) {
    fail(op, "lambda must be greater or equal to 0 (aten raises)");
  }
  // self's dtype: aten checks lambd against its range (from 2.10)
  if (!in_range(lambd, position(t))) {
    refuse(op, "lambd", lambd, "out of the range of self's dtype");
  }
  if (compute != t && !reduced_holds(lambd.to_double(), t)) {
    std::string why = "half and bfloat16 do not hold it exactly: aten's CPU ";
    why += "kernel computes with it as a float up to 2.13 and rounded to ";
    why += "self's dtype from 2.14 (as its CUDA kernel), so no one ";
    why += "composition equals both";
    refuse(op, "lambd", lambd, why);
  }
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor x = to_dtype(self, compute);
  const torch::stable::Tensor hi = number_tensor(lambd, compute);
  const torch::stable::Tensor lo = number_tensor(neg, compute);
  return ShrinkOperands{x, hi, lo, t};
}

/// aten's softshrink kernel: `x > lambd ? x - lambd : x < -lambd ? x + lambd
/// : 0` (NaN stays NaN) over softshrink_operands, given its two subtractions
/// `minus` (x - lambd) and `plus` (x - (-lambd), which IEEE computes as
/// x + lambd) by aten::sub.Tensor's wrapper; as aten::ge, aten::le, aten::gt,
/// aten::logical_and, aten::where.self and aten::_to_copy.
template <typename = void>
inline torch::stable::Tensor softshrink_select(
    const ShrinkOperands& s,
    const torch::stable::Tensor& minus,
    const torch::stable::Tensor& plus) {
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", s.x, s.lo),
      tensor_op("aten::le", "Tensor", s.x, s.hi));
  const torch::stable::Tensor shrunk =
      where_select(tensor_op("aten::gt", "Tensor", s.x, s.hi), minus, plus);
  const ScalarType compute = s.x.scalar_type();
  return to_dtype(
      where_select(inside, number_tensor(Scalar(0), compute), shrunk), s.t);
}

/// A common dtype `via`'s kernel has no version for where the op's own
/// kernel has one (a wrapped_numbers row's `refuse_dtypes`): refused.
template <typename = void>
inline void refuse_dtype(
    const char* op,
    const char* via,
    ScalarType dtype,
    ScalarType refused) {
  if (dtype == refused) {
    std::string why = std::string("aten::") + via + " has no kernel for this ";
    why += "dtype, which aten computes: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// TensorIterator's broadcast check of two operands in aten's order, with its
/// message (aten's infer_size): the composition's own calls meet them in
/// another order, which would name them the other way round.
template <typename = void>
inline void check_broadcast(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  const int64_t n = a.dim() > b.dim() ? a.dim() : b.dim();
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t da = a.dim() - n + i;
    const int64_t db = b.dim() - n + i;
    const int64_t sa = da >= 0 ? as[da] : 1;
    const int64_t sb = db >= 0 ? bs[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      std::string why = "The size of tensor a (" + std::to_string(sa);
      why += ") must match the size of tensor b (" + std::to_string(sb);
      why += ") at non-singleton dimension " + std::to_string(i);
      throw std::runtime_error(why);
    }
  }
}

/// aten's shrink_backward kernel (hardshrink_backward, softshrink_backward):
/// `-lambd <= self <= lambd ? 0 : grad_output` over the common dtype of the
/// two (each input cast to it first, as TensorIterator does), lambd
/// converted to that dtype (half and bfloat16 too); as aten::ge, aten::le,
/// aten::logical_and, aten::where.self and aten::_to_copy. A NaN in self is
/// refused (refuse_nan).
template <typename = void>
inline torch::stable::Tensor shrink_grad_select(
    const char* op,
    const torch::stable::Tensor& grad_output,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  check_broadcast(grad_output, self);
  const ScalarType ct = common_dtype(grad_output, self);
  ScalarType compute = ct;
  if (!kernel_dtype(ct, false, compute)) {
    no_kernel(op);
  }
  if (!in_range(lambd, position(ct))) {
    refuse(op, "lambd", lambd, "out of the range of the dtype aten computes it in");
  }
  const torch::stable::Tensor x = to_dtype(self, ct);
  refuse_nan(op, x);
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", x, number_tensor(neg, ct)),
      tensor_op("aten::le", "Tensor", x, number_tensor(lambd, ct)));
  return where_select(
      inside, number_tensor(Scalar(0), ct), to_dtype(grad_output, ct));
}

/// aten's hardtanh_backward kernel: `min_val < self < max_val ? grad_output
/// : 0` over the common dtype of the two, compared in float for half and
/// bfloat16 with the bounds as floats; as aten::gt, aten::lt,
/// aten::logical_and, aten::where.self and aten::_to_copy. A NaN in self is
/// refused (refuse_nan).
template <typename = void>
inline torch::stable::Tensor hardtanh_backward_select(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& grad_output,
    const Scalar& min_val,
    const Scalar& max_val) {
  check_broadcast(grad_output, self);
  const ScalarType ct = common_dtype(grad_output, self);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, false, cmp)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(min_val, position(cmp))) {
    refuse(op, "min_val", min_val, why);
  }
  if (!in_range(max_val, position(cmp))) {
    refuse(op, "max_val", max_val, why);
  }
  const torch::stable::Tensor x = to_dtype(to_dtype(self, ct), cmp);
  refuse_nan(op, x);
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::gt", "Tensor", x, number_tensor(min_val, cmp)),
      tensor_op("aten::lt", "Tensor", x, number_tensor(max_val, cmp)));
  return where_select(
      inside, to_dtype(grad_output, ct), number_tensor(Scalar(0), ct));
}

