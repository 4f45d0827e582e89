// @needs legacy_shims compositions out_inplace shrink
// ---- kernel `elu_grad`: aten's elu_backward kernel with is_result=true
// (elu_backward.default; its out= through kernel `out`) ----

/// elu_backward's operands in the dtype aten's kernel computes in (the
/// common dtype of grad_output and self_or_result; float for half and
/// bfloat16), with its coefficients as 0-dim tensors of that dtype:
/// input_scale, scale, and -(alpha * scale) (the product rounded there, as
/// aten's `negcoef`; negated exactly, for aten::sub.Tensor to add it back).
struct SHIMGEN_HIDDEN EluGradOperands {
  torch::stable::Tensor grad;
  torch::stable::Tensor x;
  torch::stable::Tensor negiptcoef;
  torch::stable::Tensor poscoef;
  torch::stable::Tensor minus_negcoef;
  ScalarType t;
};

/// aten's checks and this route's refusals, in aten's order: a negative alpha
/// with is_result (aten raises), then is_result=false (refused: that kernel
/// computes exp in its vectorized body and std::exp in its scalar tail, which
/// no dispatching op reproduces position by position), the broadcast, the
/// dtype (aten has floating kernels only), the numbers (in range of the
/// compute dtype), a call autograd records (refused: aten's derivative of
/// elu_backward is elu_double_backward, not the composition's), and a NaN in
/// self_or_result (refused: aten gives grad_output * scale in its scalar tail
/// and NaN in its vectorized body).
template <typename = void>
inline EluGradOperands elu_grad_operands(
    const char* op,
    const torch::stable::Tensor& grad_output,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale,
    bool is_result,
    const torch::stable::Tensor& self_or_result) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  const std::string complex = "a complex number (aten converts it)";
  if (alpha.is_complex()) {
    refuse(op, "alpha", alpha, complex);
  }
  if (scale.is_complex()) {
    refuse(op, "scale", scale, complex);
  }
  if (input_scale.is_complex()) {
    refuse(op, "input_scale", input_scale, complex);
  }
  if (is_result && !(alpha.to_double() >= 0)) {
    std::string why = "In-place elu backward calculation is triggered with a ";
    why += "negative slope which is not supported (aten raises)";
    fail(op, why.c_str());
  }
  if (!is_result) {
    std::string why = "is_result=false: aten's kernel computes exp in its ";
    why += "vectorized body and std::exp in its scalar tail, which no ";
    why += "libtorch route reproduces element by element";
    fail(op, (why + remedy).c_str());
  }
  check_broadcast(grad_output, self_or_result);
  const ScalarType ct = common_dtype(grad_output, self_or_result);
  ScalarType compute = ct;
  if (!kernel_dtype(ct, false, compute)) {
    no_kernel(op);
  }
  const std::string range = "out of the range of the dtype aten computes it in";
  if (!in_range(alpha, position(compute))) {
    refuse(op, "alpha", alpha, range);
  }
  if (!in_range(scale, position(compute))) {
    refuse(op, "scale", scale, range);
  }
  if (!in_range(input_scale, position(compute))) {
    refuse(op, "input_scale", input_scale, range);
  }
  if (records_grad({&grad_output, &self_or_result})) {
    std::string why = "an input requires grad in grad mode: aten's derivative ";
    why += "of elu_backward (elu_double_backward) is not the composition's";
    fail(op, (why + remedy).c_str());
  }
  const torch::stable::Tensor x =
      to_dtype(to_dtype(self_or_result, ct), compute);
  refuse_nan(op, x);
  const torch::stable::Tensor negcoef = tensor_op(
      "aten::mul",
      "Tensor",
      number_tensor(alpha, compute),
      number_tensor(scale, compute));
  const torch::stable::Tensor minus_negcoef = dispatch_tensors<1>(
      "aten::neg", "", {torch::stable::detail::from(negcoef)});
  const torch::stable::Tensor grad =
      to_dtype(to_dtype(grad_output, ct), compute);
  const torch::stable::Tensor negiptcoef = number_tensor(input_scale, compute);
  const torch::stable::Tensor poscoef = number_tensor(scale, compute);
  return EluGradOperands{grad, x, negiptcoef, poscoef, minus_negcoef, ct};
}

/// aten's elu_backward kernel with is_result=true: `x <= 0 ? grad *
/// input_scale * (x + alpha * scale) : grad * scale` in the operands' dtype,
/// converted to the common dtype; `shifted` is x - (-(alpha * scale)), which
/// IEEE computes as x + alpha * scale, by aten::sub.Tensor's wrapper. As
/// aten::mul.Tensor, aten::le.Tensor, aten::where.self and aten::_to_copy:
/// each step rounds as aten's does (no transcendental function, no fused
/// multiply-add), in its vectorized body and its scalar tail alike.
template <typename = void>
inline torch::stable::Tensor elu_grad_select(
    const EluGradOperands& s,
    const torch::stable::Tensor& shifted) {
  const torch::stable::Tensor negative = tensor_op(
      "aten::mul",
      "Tensor",
      tensor_op("aten::mul", "Tensor", s.grad, s.negiptcoef),
      shifted);
  const torch::stable::Tensor positive =
      tensor_op("aten::mul", "Tensor", s.grad, s.poscoef);
  const ScalarType compute = s.x.scalar_type();
  const torch::stable::Tensor mask =
      tensor_op("aten::le", "Tensor", s.x, number_tensor(Scalar(0), compute));
  // written into `negative`, whose layout is aten's result's: its operands
  // derive from grad_output's and self_or_result's in aten's order, which
  // TensorIterator orders dimensions by (a where.self would follow the mask)
  const torch::stable::Tensor r = dispatch_tensors<4>(
      "aten::where",
      "self_out",
      {torch::stable::detail::from(mask),
       torch::stable::detail::from(negative),
       torch::stable::detail::from(positive),
       torch::stable::detail::from(negative)});
  return to_dtype(r, s.t);
}

