// @needs legacy_shims
// ---- Kernel compositions (shimgen/generate/routes/composition.py) ----
//
// An aten kernel written as the dispatching aten calls that compute what it
// computes (data/scalar_facts.yaml `kernel_compositions`, each proven per
// runtime, gradients included): every step is a call autograd, autocast and
// Python modes see, carrying only tensors.

/// `t` in dtype `d` (aten::_to_copy where it differs), as TensorIterator
/// casts an input to the common dtype.
template <typename = void>
inline torch::stable::Tensor to_dtype(
    const torch::stable::Tensor& t,
    ScalarType d) {
  if (t.scalar_type() == d) {
    return t;
  }
  return dispatch_tensors<7>(
      "aten::_to_copy",
      "",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(std::optional<ScalarType>(d)),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(false),
       torch::stable::detail::from(std::nullopt)});
}

/// The dtype autocast computes aten::`op`.`overload` in for tensors of
/// `t`'s dtype and device: the op dispatched on empty 0x0 tensors of that
/// dtype and device, asked for float16 and bfloat16 tensors only (the ones
/// autocast's float32 policy casts: CUDA's lists aten::pow and aten::dist,
/// CPU's neither); `t`'s own dtype where autocast leaves it alone.
template <typename = void>
inline ScalarType autocast_dtype(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& t) {
  const ScalarType d = t.scalar_type();
  if (d != ScalarType::Half && d != ScalarType::BFloat16) {
    return d;
  }
  const torch::stable::Tensor e = empty_0x0(t);
  const torch::stable::Tensor r = dispatch_tensors<2>(
      op,
      overload,
      {torch::stable::detail::from(e), torch::stable::detail::from(e)});
  return r.scalar_type();
}

/// `t` as autocast casts an argument to `d`: a floating tensor other than a
/// double one in `d` (aten::_to_copy), any other as it is.
template <typename = void>
inline torch::stable::Tensor autocast_cast(
    const torch::stable::Tensor& t,
    ScalarType d) {
  const ScalarType from = t.scalar_type();
  if (from == ScalarType::Double || !is_floating(position(from))) {
    return t;
  }
  return to_dtype(t, d);
}

/// The common dtype of two tensors, as TensorIterator computes it.
template <typename = void>
inline ScalarType common_dtype(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  const std::array<Operand, 2> operands{operand(a), operand(b)};
  return kType[result_type<2, 0>(operands, {})];
}

/// Is one of `a`, `b` a Bool tensor and the other floating or complex?
/// (Row key `cast_bool` of an equivalent: aten's add computes such a call in
/// their common dtype, the bool converted exactly, where the shim of
/// aten::subtract refuses any Bool operand.)
template <typename = void>
inline bool bool_beside_floating(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  const int pa = position(a.scalar_type());
  const int pb = position(b.scalar_type());
  const bool fa = is_floating(pa) || is_complex(pa);
  const bool fb = is_floating(pb) || is_complex(pb);
  const bool a_bool = a.scalar_type() == ScalarType::Bool;
  const bool b_bool = b.scalar_type() == ScalarType::Bool;
  return (a_bool && fb) || (b_bool && fa);
}

/// The dtype aten's activation kernels compute a dtype in (float for half
/// and bfloat16, whose kernels convert each element to float), and whether
/// aten has such a kernel at all (the floating dtypes; `integral`: also the
/// integral ones but bool).
template <typename = void>
inline bool kernel_dtype(ScalarType t, bool integral, ScalarType& compute) {
  switch (t) {
    case ScalarType::Half:
    case ScalarType::BFloat16:
      compute = ScalarType::Float;
      return true;
    case ScalarType::Float:
    case ScalarType::Double:
      compute = t;
      return true;
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      compute = t;
      return integral;
    default:
      return false;
  }
}

/// A call aten's kernel has no version for: aten raises too.
template <typename = void>
[[noreturn]] inline void no_kernel(const char* op) {
  const std::string what = std::string("shimgen: ") + op;
  throw std::runtime_error(what + ": aten has no kernel for this dtype");
}

/// aten::detach: `t` with no autograd history (a branch whose gradient aten's
/// formula gives as zero).
template <typename = void>
inline torch::stable::Tensor detached(const torch::stable::Tensor& t) {
  return dispatch_tensors<1>("aten::detach", "", {torch::stable::detail::from(t)});
}

/// aten::`op`.`overload` of two tensors (a comparison or logical op).
template <typename = void>
inline torch::stable::Tensor tensor_op(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<2>(
      op, overload, {torch::stable::detail::from(a), torch::stable::detail::from(b)});
}

/// aten::`op`.`overload` of a tensor and a dimension.
template <typename = void>
inline torch::stable::Tensor dim_op(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& t,
    int64_t dim) {
  return dispatch_tensors<2>(
      op,
      overload,
      {torch::stable::detail::from(t), torch::stable::detail::from(dim)});
}

/// Do `a` and `b` have the same sizes?
template <typename = void>
inline bool same_sizes(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  if (a.dim() != b.dim()) {
    return false;
  }
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (as[d] != bs[d]) {
      return false;
    }
  }
  return true;
}

/// `t` broadcast to `like`'s shape, in its dtype (`t` itself where it has
/// them already).
template <typename = void>
inline torch::stable::Tensor broadcast_as(
    const torch::stable::Tensor& t,
    const torch::stable::Tensor& like) {
  if (t.scalar_type() == like.scalar_type() && same_sizes(t, like)) {
    return t;
  }
  const torch::stable::Tensor expanded =
      tensor_op("aten::expand_as", "", t, like);
  return tensor_op("aten::type_as", "", expanded, like);
}

/// aten's conversion of an add's integer alpha to the result's integral dtype
/// (Scalar::to, c10's overflows): a value the dtype cannot hold raises aten's
/// own error; an unsigned dtype also takes a negative value its maximum
/// bounds (uint8: -255..255, `a - b` as `a + 255 * b`). aten's sub is add
/// with `-alpha` (`negated`), negated as c10::Scalar negates: the integer's
/// 64 bits, wrapping (an unsigned alpha above int64's range included).
template <typename = void>
inline void integral_alpha_fits(
    const Scalar& alpha,
    ScalarType t,
    bool negated) {
  const char* name = "int64_t";
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  if (t == ScalarType::Byte) {
    name = "uint8_t";
    lo = -255;
    hi = 255;
  } else if (t == ScalarType::Char) {
    name = "int8_t";
    lo = std::numeric_limits<int8_t>::min();
    hi = std::numeric_limits<int8_t>::max();
  } else if (t == ScalarType::Short) {
    name = "int16_t";
    lo = std::numeric_limits<int16_t>::min();
    hi = std::numeric_limits<int16_t>::max();
  } else if (t == ScalarType::Int) {
    name = "int";
    lo = std::numeric_limits<int32_t>::min();
    hi = std::numeric_limits<int32_t>::max();
  }
  // c10::Scalar's negation, for a sub: the integer's 64 bits, wrapping
  int64_t v = alpha.to_int64();
  if (negated) {
    v = static_cast<int64_t>(uint64_t(0) - static_cast<uint64_t>(v));
  }
  const bool int_kind = alpha.kind() == Scalar::Kind::Int;
  const bool uint_kind = alpha.kind() == Scalar::Kind::UInt;
  if (!(int_kind || (negated && uint_kind)) || v < lo || v > hi) {
    std::string text = "value cannot be converted to type ";
    text += name;
    text += " without overflow";
    throw std::runtime_error(text);
  }
}

/// aten's add (`subtract` false) or sub (true) of two integral or bool
/// tensors with an integer alpha: `a + alpha * b` / `a - alpha * b` in the
/// result dtype, wrapping on overflow (number rules `kernel: integral_add`:
/// alpha 1 on integral and bool tensors, any integer alpha on integral ones).
/// libtorch carries no integral alpha (its C shims take a double, which aten
/// refuses for integral tensors), so: aten::mul gives the result's shape,
/// dtype and strides (the same TensorIterator as add's, with its errors), an
/// alpha other than 1 is converted to the result dtype as aten converts it
/// (integral_alpha_fits) and multiplies b there (aten::mul by a 0-dim tensor
/// of that dtype: the product wraps as aten's `alpha * b`), aten::diff of the
/// operands stacked along a new dimension gives the values (`x - y`, as
/// aten::sub computes; an add subtracts the negation, exact in two's
/// complement), and copy_ writes them there. bool + bool is aten::logical_or.
template <typename = void>
inline torch::stable::Tensor integral_add_select(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b,
    bool subtract,
    const Scalar& alpha = Scalar(1)) {
  torch::stable::Tensor result = tensor_op("aten::mul", "Tensor", a, b);
  if (result.scalar_type() == ScalarType::Bool) {
    return tensor_op("aten::logical_or", "", a, b);
  }
  const torch::stable::Tensor x =
      dim_op("aten::unsqueeze", "", broadcast_as(a, result), 0);
  torch::stable::Tensor y = broadcast_as(b, result);
  if (!is_int(alpha, 1)) {
    integral_alpha_fits(alpha, result.scalar_type(), subtract);
    y = tensor_op(
        "aten::mul", "Tensor", y, number_tensor(alpha, result.scalar_type()));
  }
  if (!subtract) {
    y = dispatch_tensors<1>("aten::neg", "", {torch::stable::detail::from(y)});
  }
  const std::optional<torch::stable::Tensor> before =
      dim_op("aten::unsqueeze", "", y, 0);
  const torch::stable::Tensor stacked_diff = dispatch_tensors<5>(
      "aten::diff",
      "",
      {torch::stable::detail::from(x),
       torch::stable::detail::from(int64_t(1)),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(before),
       torch::stable::detail::from(std::nullopt)});
  const torch::stable::Tensor values =
      dim_op("aten::squeeze", "dim", stacked_diff, 0);
  return dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(result),
       torch::stable::detail::from(values),
       torch::stable::detail::from(false)});
}

/// aten's pow(x, 3) (number rule `kernel: cube`): pow_tensor_scalar computes
/// an exponent of 3 as `x * x * x` ((x * x) * x, rounded in the tensor's
/// dtype at each step, the integral kernel wrapping on overflow); here as two
/// aten::mul calls in that order.
template <typename = void>
inline torch::stable::Tensor cube_select(const torch::stable::Tensor& x) {
  const torch::stable::Tensor square = tensor_op("aten::mul", "Tensor", x, x);
  return tensor_op("aten::mul", "Tensor", square, x);
}

/// aten::where.self(condition, a, b).
template <typename = void>
inline torch::stable::Tensor where_select(
    const torch::stable::Tensor& condition,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<3>(
      "aten::where",
      "self",
      {torch::stable::detail::from(condition),
       torch::stable::detail::from(a),
       torch::stable::detail::from(b)});
}

/// aten's threshold kernel (threshold_stub): `x <= threshold ? value : other`
/// over the common dtype of x and other (each input cast to it first, as
/// TensorIterator does), the threshold compared in that dtype (in float for
/// half and bfloat16) and the value converted to it; as aten::le.Tensor,
/// aten::where.self and aten::_to_copy. aten's kernel exists for the integral
/// and floating dtypes (not bool, complex or the unsigned ones beyond uint8);
/// a number outside the dtype's range is refused.
template <typename = void>
inline torch::stable::Tensor threshold_select(
    const char* op,
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& other,
    const Scalar& threshold,
    const Scalar& value) {
  const ScalarType ct = common_dtype(x, other);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, true, cmp)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(threshold, position(cmp))) {
    refuse(op, "threshold", threshold, why);
  }
  if (!in_range(value, position(ct))) {
    refuse(op, "value", value, why);
  }
  torch::stable::Tensor xc = to_dtype(to_dtype(x, ct), cmp);
  torch::stable::Tensor mask =
      tensor_op("aten::le", "Tensor", xc, number_tensor(threshold, cmp));
  return where_select(mask, number_tensor(value, ct), to_dtype(other, ct));
}

/// aten's leaky_relu kernels: `x > 0 ? other : other * negative_slope` over
/// the common dtype of x and other (each input cast to it first, as
/// TensorIterator does; leaky_relu: other is x; leaky_relu_backward: other is
/// grad_output), in float for half and bfloat16, the slope converted to that
/// dtype; as aten::gt.Tensor, aten::mul.Tensor, aten::where.self and
/// aten::_to_copy.
template <typename = void>
inline torch::stable::Tensor leaky_relu_select(
    const char* op,
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& other,
    const Scalar& negative_slope,
    bool self_is_result) {
  const ScalarType ct = common_dtype(x, other);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, false, cmp)) {
    no_kernel(op);
  }
  if (!in_range(negative_slope, position(cmp))) {
    const std::string why = "out of the range of the dtype aten computes it in";
    refuse(op, "negative_slope", negative_slope, why);
  }
  if (self_is_result && negative_slope.to_double() < 0) {
    const std::string what = std::string("shimgen: ") + op;
    const std::string why = ": in-place backward, negative slope (aten raises)";
    throw std::runtime_error(what + why);
  }
  torch::stable::Tensor xc = to_dtype(to_dtype(x, ct), cmp);
  torch::stable::Tensor mask =
      tensor_op("aten::gt", "Tensor", xc, number_tensor(Scalar(0), cmp));
  torch::stable::Tensor o = to_dtype(to_dtype(other, ct), cmp);
  // `other` at the result's shape first: a broadcast operand's gradient then
  // reaches it as one reduction of the elementwise sum of both branches, as
  // aten's formula gives it (two reductions, one per branch, round otherwise).
  o = tensor_op("aten::expand_as", "", o, where_select(mask, o, o));
  torch::stable::Tensor scaled = dispatch_tensors<2>(
      "aten::mul",
      "Tensor",
      {torch::stable::detail::from(o),
       torch::stable::detail::from(number_tensor(negative_slope, cmp))});
  torch::stable::Tensor r = where_select(mask, o, scaled);
  return to_dtype(r, ct);
}

/// c10::canCast: may aten write a result of dtype `from` into an output of
/// dtype `to`? (Not complex into non-complex, floating into integral, or
/// anything but bool into bool.)
template <typename = void>
inline bool can_cast(ScalarType from, ScalarType to) {
  const int f = position(from);
  const int t = position(to);
  if (is_complex(f) && !is_complex(t)) {
    return false;
  }
  if (is_floating(f) && !(is_floating(t) || is_complex(t))) {
    return false;
  }
  return from == ScalarType::Bool || to != ScalarType::Bool;
}

/// The bytes [lo, hi) a tensor's elements span (false: it has none).
template <typename = void>
inline bool byte_span(
    const torch::stable::Tensor& t,
    uintptr_t& lo,
    uintptr_t& hi) {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  void* data = nullptr;
  int32_t dtype = 0;
  AtenTensorHandle h = t.get();
  check(aoti_torch_get_dim(h, &dim), "aoti_torch_get_dim");
  check(aoti_torch_get_sizes(h, &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(h, &strides), "aoti_torch_get_strides");
  check(aoti_torch_get_data_ptr(h, &data), "aoti_torch_get_data_ptr");
  check(aoti_torch_get_dtype(h, &dtype), "aoti_torch_get_dtype");
  int64_t last = 0;
  for (int64_t d = 0; d < dim; ++d) {
    if (sizes[d] == 0) {
      return false;
    }
    last += (sizes[d] - 1) * strides[d];
  }
  const auto size = static_cast<uintptr_t>(aoti_torch_dtype_element_size(dtype));
  lo = reinterpret_cast<uintptr_t>(data);
  hi = lo + (static_cast<uintptr_t>(last) + 1) * size;
  return true;
}

/// Are `a` and `b` the very same view (data, dtype, sizes and strides)?
template <typename = void>
inline bool same_view(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.dim() != b.dim()) {
    return false;
  }
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  int64_t* at = nullptr;
  int64_t* bt = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(a.get(), &at), "aoti_torch_get_strides");
  check(aoti_torch_get_strides(b.get(), &bt), "aoti_torch_get_strides");
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (as[d] != bs[d] || at[d] != bt[d]) {
      return false;
    }
  }
  return true;
}

/// Do `a` and `b` share memory other than as the very same view (aten's full
/// overlap, which an in-place op allows)?
template <typename = void>
inline bool shares_memory(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  uintptr_t alo = 0;
  uintptr_t ahi = 0;
  uintptr_t blo = 0;
  uintptr_t bhi = 0;
  if (!byte_span(a, alo, ahi) || !byte_span(b, blo, bhi)) {
    return false;
  }
  if (ahi <= blo || bhi <= alo) {
    return false;
  }
  return alo != blo || !same_view(a, b);
}

/// An in-place op as aten's in-place rules around its functional overload's
/// `result`: the result dtype must cast to self's (c10::canCast), self may
/// share memory with no input other than as the very same view (aten computes
/// in place element by element; the result was computed out of place, so such
/// a call is refused), then aten::copy_ writes it into self.
template <typename = void>
inline torch::stable::Tensor assign_inplace(
    const char* op,
    torch::stable::Tensor self,
    const torch::stable::Tensor& result,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  const std::string what = std::string("shimgen: ") + op;
  if (!can_cast(result.scalar_type(), self.scalar_type())) {
    const std::string why = ": the result's dtype cannot be cast to self's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  for (const torch::stable::Tensor* input : inputs) {
    if (shares_memory(self, *input)) {
      std::string why = what;
      why += ": self shares memory with an input, which this composition ";
      why += "(the op out of place, then copy_) cannot compute as aten does ";
      why += "in place: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
      why += "(rebuilt for each torch release), or pass a copy";
      throw std::runtime_error(why);
    }
  }
  return dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(result),
       torch::stable::detail::from(false)});
}

