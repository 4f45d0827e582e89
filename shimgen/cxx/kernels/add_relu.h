// @needs legacy_shims compositions out_inplace shrink
// ---- kernel `add_relu` (_add_relu.Tensor; its out=, in-place and Scalar
// forms through kernels `out`, `inplace`, `wrapped_numbers`): aten's
// add_relu with alpha 1 ----

/// _add_relu's bounds as 0-dim tensors of the common dtype (0, and the
/// largest value of self's dtype, converted as aten's Scalar::to does), and
/// the alpha 1 that aten::add.Tensor's wrapper takes for that dtype (an
/// integer one for integral tensors, a double for floating ones).
struct SHIMGEN_HIDDEN AddReluOperands {
  Scalar one;
  torch::stable::Tensor lo;
  torch::stable::Tensor hi;
  ScalarType t;
};

/// One bool of a tensor of bools: aten::any, then aten::is_nonzero (read
/// from any device).
template <typename = void>
inline bool any_true(const torch::stable::Tensor& mask) {
  const torch::stable::Tensor any =
      dispatch_tensors<1>("aten::any", "", {torch::stable::detail::from(mask)});
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
  return torch::stable::detail::to<bool>(stack[0]);
}

/// aten's checks of add_relu in its order (the broadcast, self's dtype among
/// int8/16/32/64, float and double, the common dtype among the ones its
/// kernel has, the upper bound's conversion), then this route's refusals: an
/// alpha other than 1 (aten's vectorized body computes `a + alpha * b` as a
/// fused multiply-add, which no composition rounds alike) and a call
/// autograd records (aten has no derivative for _add_relu: its backward
/// raises, where the composition's would compute one).
template <typename = void>
inline AddReluOperands add_relu_operands(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& other,
    const Scalar& alpha) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  check_broadcast(self, other);
  int64_t int_limit = 0;
  double float_limit = 0;
  switch (self.scalar_type()) {
    case ScalarType::Char:
      int_limit = std::numeric_limits<int8_t>::max();
      break;
    case ScalarType::Short:
      int_limit = std::numeric_limits<int16_t>::max();
      break;
    case ScalarType::Int:
      int_limit = std::numeric_limits<int32_t>::max();
      break;
    case ScalarType::Long:
      int_limit = std::numeric_limits<int64_t>::max();
      break;
    case ScalarType::Float:
      float_limit = std::numeric_limits<float>::max();
      break;
    case ScalarType::Double:
      float_limit = std::numeric_limits<double>::max();
      break;
    default:
      fail(op, "Unsupported datatype for add_relu (aten raises)");
  }
  const ScalarType t = common_dtype(self, other);
  ScalarType compute = t;
  if (!kernel_dtype(t, true, compute) || compute != t) {
    no_kernel(op);
  }
  const bool floating = t == ScalarType::Float || t == ScalarType::Double;
  Scalar hi(int64_t(0));
  const double float_max = std::numeric_limits<float>::max();
  // a double self, a float common dtype
  if (t == ScalarType::Float && float_limit > float_max) {
    std::string why = "value cannot be converted to type float without ";
    why += "overflow (aten raises)";
    fail(op, why.c_str());
  }
  // a floating self: a floating common dtype; an integral self's limit
  // converted to a floating one; or an integral one
  if (float_limit != 0) {
    hi = Scalar(float_limit);
  } else if (t == ScalarType::Float) {
    hi = Scalar(static_cast<double>(static_cast<float>(int_limit)));
  } else if (floating) {
    hi = Scalar(static_cast<double>(int_limit));
  } else {
    hi = Scalar(int_limit);
    if (!in_range(hi, position(t))) {
      std::string why = "value cannot be converted to the result's type ";
      why += "without overflow (aten raises)";
      fail(op, why.c_str());
    }
  }
  if (alpha.is_complex() || alpha.to_double() != 1) {
    std::string why = "only alpha=1 has a libtorch route: aten's vectorized ";
    why += "body computes `self + alpha * other` as a fused multiply-add, ";
    why += "which no composition rounds alike";
    refuse(op, "alpha", alpha, why + remedy);
  }
  if (records_grad({&self, &other})) {
    std::string why = "an input requires grad in grad mode: aten has no ";
    why += "derivative for it (its backward raises), where the composition ";
    why += "would compute one";
    fail(op, (why + remedy).c_str());
  }
  const Scalar one = floating ? Scalar(1.0) : Scalar(int64_t(1));
  const torch::stable::Tensor lo = number_tensor(Scalar(int64_t(0)), t);
  return AddReluOperands{one, lo, number_tensor(hi, t), t};
}

/// aten's add_clamp kernel with alpha 1: `min(max(self + other, 0), hi)`
/// over the common dtype, given `sum` (self + other by aten::add.Tensor's
/// wrapper); as aten::clamp.Tensor. A floating sum holding a NaN or -0.0 is
/// refused: aten's kernel gives 0 for them in its scalar tail and NaN / -0.0
/// in its vectorized body (aten::isnan, aten::eq, aten::signbit,
/// aten::logical_and, aten::logical_or, aten::any and aten::is_nonzero).
template <typename = void>
inline torch::stable::Tensor add_relu_select(
    const char* op,
    const AddReluOperands& s,
    const torch::stable::Tensor& sum) {
  if (s.t == ScalarType::Float || s.t == ScalarType::Double) {
    const torch::stable::Tensor nan = dispatch_tensors<1>(
        "aten::isnan", "", {torch::stable::detail::from(sum)});
    const torch::stable::Tensor negative_zero = tensor_op(
        "aten::logical_and",
        "",
        tensor_op("aten::eq", "Tensor", sum, s.lo),
        dispatch_tensors<1>(
            "aten::signbit", "", {torch::stable::detail::from(sum)}));
    if (any_true(tensor_op("aten::logical_or", "", nan, negative_zero))) {
      std::string why = "self + other holds a NaN or -0.0, where aten's ";
      why += "kernel gives 0 or NaN / -0.0 depending on the element's ";
      why += "position in its vectorized loop: define SHIMGEN_OVERLAY ";
      why += "and link libshimgen_overlay (rebuilt for each torch release)";
      fail(op, why.c_str());
    }
  }
  const std::optional<torch::stable::Tensor> lo(s.lo);
  const std::optional<torch::stable::Tensor> hi(s.hi);
  return dispatch_tensors<3>(
      "aten::clamp",
      "Tensor",
      {torch::stable::detail::from(sum),
       torch::stable::detail::from(lo),
       torch::stable::detail::from(hi)});
}

