// @needs legacy_shims compositions
// ---- Kernel compositions of functional Scalar ops ----
//
// aten ops whose numbers aten itself turns into tensors (wrapped numbers), or
// whose kernel is a select over comparisons (hardtanh, hardshrink): the same
// dispatching calls, the numbers as 0-dim tensors of the dtype aten computes
// them in.

/// The dtype aten gives wrapped numbers among `tensors` (ATen's result_type:
/// a floating-point number counts as the default dtype), for ops that wrap
/// their Scalars with scalar_to_tensor / wrapped_scalar_tensor and call their
/// Tensor overload (where.Scalar, searchsorted.Scalar, bucketize.Scalar).
template <typename = void>
inline ScalarType wrapped_numbers_dtype(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors,
    std::initializer_list<const Scalar*> numbers) {
  int dim = kUndefined;
  int zero = kUndefined;
  int wrapped = kUndefined;
  for (const torch::stable::Tensor* t : tensors) {
    if (t->dim() == 0) {
      zero = promote(zero, position(t->scalar_type()));
    } else {
      dim = promote(dim, position(t->scalar_type()));
    }
  }
  std::optional<int> default_float;
  for (const Scalar* s : numbers) {
    wrapped = promote(wrapped, wrapped_dtype(*s, default_float));
  }
  const int t = combine_categories(dim, combine_categories(zero, wrapped));
  if (t < 0) {
    fail(op, "no dtype promotion for these arguments (aten raises)");
  }
  return kType[t];
}

/// aten::result_type.Scalar_Tensor and .Scalar_Scalar (kernel
/// `result_type_numbers`): no dispatcher carries their numbers, and the answer
/// is ATen's result_type over the tensor and the numbers as wrapped numbers,
/// which wrapped_numbers_dtype computes from shimgen's promotion table (the
/// measured torch.promote_types) and libtorch's default dtype.
template <typename = void>
inline ScalarType result_type_numbers_select(
    const char* op,
    const Scalar& scalar,
    const torch::stable::Tensor& tensor) {
  if (scalar.is_complex() && tensor.scalar_type() == ScalarType::BFloat16) {
    std::string why = "a complex number with a bfloat16 tensor: aten's ";
    why += "answer changed in 2.14 (ComplexFloat before, a complex bfloat16 ";
    why += "type from 2.14), so no stable route gives it: define ";
    why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
    why += "torch release)";
    fail(op, why.c_str());
  }
  return wrapped_numbers_dtype(op, {&tensor}, {&scalar});
}

template <typename = void>
inline ScalarType result_type_numbers_select(
    const char* op,
    const Scalar& scalar1,
    const Scalar& scalar2) {
  return wrapped_numbers_dtype(op, {}, {&scalar1, &scalar2});
}

/// The 0-dim tensor aten computes a wrapped number as: its value in dtype `t`
/// (as aten casts the wrapped tensor to the common dtype), on `like`'s device
/// (scalar_to_tensor's device); a number out of `t`'s range is refused.
template <typename = void>
inline torch::stable::Tensor wrapped_number_tensor(
    const char* op,
    const char* arg,
    const Scalar& s,
    ScalarType t,
    const torch::stable::Tensor& like) {
  if (!in_range(s, position(t))) {
    refuse(op, arg, s, "out of the range of the dtype aten computes it in");
  }
  // on like's device as a fill (on_device_of), not a copy that waits for it
  return on_device_of(number_tensor(s, t), like);
}

/// A hardtanh bound as the 0-dim tensor aten's clamp kernel compares with: in
/// self's dtype, truncated to an integer first for an integral self (as
/// hardtanh_out does); one aten cannot convert (overflow, a negative bound for
/// uint8, a NaN or infinity) is refused.
template <typename = void>
inline torch::stable::Tensor clamp_bound(
    const char* op,
    const char* arg,
    const Scalar& s,
    ScalarType t) {
  const std::string why = "out of the range of the dtype aten computes it in";
  Scalar b = s;
  if (!is_floating(position(t))) {
    const bool real = !s.is_complex() && s.kind() != Scalar::Kind::UInt;
    if (!real || !(std::fabs(s.to_double()) < 9.2e18)) {
      refuse(op, arg, s, why);
    }
    // toward zero, as Scalar::toLong
    b = Scalar(s.to_int64());
  }
  if (!in_range(b, position(t))) {
    refuse(op, arg, s, why);
  }
  return number_tensor(b, t);
}

/// aten's hardtanh: clamp(self, min_val, max_val) in self's dtype (clamp's
/// scalar kernel; bool and the dtypes clamp has no kernel for raise), with
/// hardtanh's gradient (zero where self is on or beyond a bound):
/// `min_val < self < max_val ? self : clamp(detach(self), min_val, max_val)`
/// as aten::gt, aten::lt, aten::logical_and, aten::clamp.Tensor and
/// aten::where.self.
template <typename = void>
inline torch::stable::Tensor clamp_select(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& min_val,
    const Scalar& max_val) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, true, compute)) {
    no_kernel(op);
  }
  // aten::clamp.Tensor's CUDA kernel checks devices: the bounds go to self's
  // device (on_device_of)
  const torch::stable::Tensor lo =
      on_device_of(clamp_bound(op, "min_val", min_val, t), self);
  const torch::stable::Tensor hi =
      on_device_of(clamp_bound(op, "max_val", max_val, t), self);
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::gt", "Tensor", self, lo),
      tensor_op("aten::lt", "Tensor", self, hi));
  const torch::stable::Tensor clamped = dispatch_tensors<3>(
      "aten::clamp",
      "Tensor",
      {torch::stable::detail::from(detached(self)),
       torch::stable::detail::from(std::optional<torch::stable::Tensor>(lo)),
       torch::stable::detail::from(std::optional<torch::stable::Tensor>(hi))});
  return where_select(inside, self, clamped);
}

/// aten's hardshrink kernel: `-lambd <= self <= lambd ? 0 : self` in self's
/// dtype (half and bfloat16 too), lambd converted to it; as aten::ge,
/// aten::le, aten::logical_and and aten::where.self. aten's kernel exists for
/// the floating dtypes.
template <typename = void>
inline torch::stable::Tensor hardshrink_select(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, false, compute)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(lambd, position(t))) {
    refuse(op, "lambd", lambd, why);
  }
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", self, number_tensor(neg, t)),
      tensor_op("aten::le", "Tensor", self, number_tensor(lambd, t)));
  return where_select(inside, number_tensor(Scalar(0), t), self);
}

/// Is `t` an unsigned integer dtype?
template <typename = void>
inline bool is_unsigned(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
      return true;
    default:
      return false;
  }
}

/// The number as the double a `float` parameter of `op`'s `via` carries, where
/// aten converting that double to self's dtype gives what converting the
/// number itself gives: a floating-point or bool number, or an integer a
/// double holds exactly and, for an unsigned self, not negative (aten wraps
/// such an integer, and raises for the double). Otherwise refused.
template <typename = void>
inline double exact_double(
    const char* op,
    const char* arg,
    const Scalar& s,
    const torch::stable::Tensor& self) {
  if (s.is_complex() || !float_exact(s)) {
    refuse(op, arg, s, "no double holds it exactly");
  }
  const bool negative = s.kind() == Scalar::Kind::Int && s.to_int64() < 0;
  if (negative && is_unsigned(self.scalar_type())) {
    std::string why = "aten wraps a negative integer into an unsigned dtype";
    why += " (the double would raise)";
    refuse(op, arg, s, why);
  }
  return s.to_double();
}

/// aten::constant_pad_nd's own checks of `pad`, with its messages: aten::pad
/// checks the same with other words before it computes constant_pad_nd, so
/// the composition asks them first (row field `check`).
template <class Ints>
inline void constant_pad_check(
    const torch::stable::Tensor& self,
    const Ints& pad) {
  const int64_t length = static_cast<int64_t>(pad.size());
  if (length % 2 != 0) {
    std::string why = "Length of pad must be even but instead it equals ";
    why += std::to_string(length);
    throw std::runtime_error(why);
  }
  if (self.dim() < length / 2) {
    std::string why = "Length of pad should be no more than twice the number ";
    why += "of dimensions of the input. Pad length is ";
    why += std::to_string(length) + "while the input has ";
    why += std::to_string(self.dim()) + "dimensions.";
    throw std::runtime_error(why);
  }
}

/// aten's scatter with a number (scatter_fill): the number converted to
/// self's dtype, written where `index` says along `dim`; as aten::scatter.src
/// with a 0-dim tensor of it expanded to index's shape (aten::expand_as). A
/// number outside self's dtype (out of range; not whole for an integral
/// dtype) is refused.
template <typename = void>
inline torch::stable::Tensor scatter_fill_select(
    const char* op,
    const torch::stable::Tensor& self,
    int64_t dim,
    const torch::stable::Tensor& index,
    const Scalar& value) {
  const int t = position(self.scalar_type());
  if (t < 0 || !in_range(value, t)) {
    refuse(op, "value", value, "it does not convert exactly to self's dtype");
  }
  // aten::scatter.src's CUDA kernel checks devices: the number goes to self's
  // device (on_device_of)
  const torch::stable::Tensor number =
      number_tensor_on(value, self.scalar_type(), self);
  const torch::stable::Tensor src =
      tensor_op("aten::expand_as", "", number, index);
  return dispatch_tensors<4>(
      "aten::scatter",
      "src",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(dim),
       torch::stable::detail::from(index),
       torch::stable::detail::from(src)});
}

