// @needs legacy_shims compositions
// ---- out= and in-place compositions: aten's out= rules, self saved for
// autograd (kernels `out` and `inplace`, shimgen/generate/routes/composition.py) ----

/// aten::is_leaf: has `t` no grad_fn? (Not named is_leaf: argument-dependent
/// lookup would also find torch::stable::is_leaf, the op's wrapper.)
template <typename = void>
inline bool without_grad_fn(const torch::stable::Tensor& t) {
  std::array<StableIValue, 1> stack{torch::stable::detail::from(t)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher("aten::is_leaf", "", stack.data(), TORCH_ABI_VERSION),
      "aten::is_leaf");
#else
  check(aoti_torch_call_dispatcher("aten::is_leaf", "", stack.data()), "aten::is_leaf");
#endif
  return torch::stable::detail::to<bool>(stack[0]);
}

/// Does `t` require grad? Asked only in grad mode: libtorch 2.9-2.15 exports
/// no requires_grad getter, but an alias of a tensor that requires grad is a
/// view autograd records (aten::is_leaf false), of any other a leaf.
template <typename = void>
inline bool requires_grad_in_grad_mode(const torch::stable::Tensor& t) {
  torch::stable::Tensor view = dispatch_tensors<1>(
      "aten::alias", "", {torch::stable::detail::from(t)});
  return !without_grad_fn(view);
}

/// Would autograd record a call on these tensors (grad mode, and one of them
/// requires grad)? A number rule whose op's gradient formula differs from its
/// target's is taken only where it would not (emit_cpp._number_rules).
template <typename = void>
inline bool records_grad(std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (!aoti_torch_grad_mode_is_enabled()) {
    return false;
  }
  for (const torch::stable::Tensor* t : tensors) {
    if (requires_grad_in_grad_mode(*t)) {
      return true;
    }
  }
  return false;
}

/// aten's autograd check of an out= call: in grad mode, no argument (out
/// included) may require grad.
template <typename = void>
inline void check_out_autograd(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (records_grad(tensors)) {
    std::string why = std::string("shimgen: ") + op;
    why += ": functions with out=... arguments don't support ";
    why += "automatic differentiation, but one of the arguments ";
    why += "requires grad (aten raises)";
    throw std::runtime_error(why);
  }
}

/// Row key `no_derivative: true`: aten has no derivative for the op, so in
/// grad mode with an argument that requires grad it computes the out= call
/// and leaves out requiring grad, which a composition cannot: refused.
template <typename = void>
inline void refuse_recorded_out(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (records_grad(tensors)) {
    std::string why = "autograd would record this out= call, which aten ";
    why += "computes without a derivative, leaving out requiring grad: ";
    why += "define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for ";
    why += "each torch release), or call it under no_grad";
    fail(op, why.c_str());
  }
}

/// Do `a` and `b` share any byte (the very same view included)?
template <typename = void>
inline bool overlaps(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  uintptr_t alo = 0;
  uintptr_t ahi = 0;
  uintptr_t blo = 0;
  uintptr_t bhi = 0;
  if (!byte_span(a, alo, ahi) || !byte_span(b, blo, bhi)) {
    return false;
  }
  return alo < bhi && blo < ahi;
}

/// Has `t` a dimension of size > 1 and stride 0 (elements written twice)?
template <typename = void>
inline bool written_twice(const torch::stable::Tensor& t) {
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  check(aoti_torch_get_sizes(t.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(t.get(), &strides), "aoti_torch_get_strides");
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (sizes[d] > 1 && strides[d] == 0) {
      return true;
    }
  }
  return false;
}

/// Are `a` and `b` on the same device (type and index)?
template <typename = void>
inline bool same_device(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  int32_t a_type = 0;
  int32_t b_type = 0;
  int32_t a_index = 0;
  int32_t b_index = 0;
  check(aoti_torch_get_device_type(a.get(), &a_type), "get_device_type");
  check(aoti_torch_get_device_type(b.get(), &b_type), "get_device_type");
  check(aoti_torch_get_device_index(a.get(), &a_index), "get_device_index");
  check(aoti_torch_get_device_index(b.get(), &b_index), "get_device_index");
  return a_type == b_type && a_index == b_index;
}

/// `value` written into out by aten::where.self_out(true, value, value): out
/// resized to value's shape as TensorIterator's resize_output does (aten's
/// warning where out had elements), with value's strides, as aten's
/// structured kernels restride a resized out.
template <typename = void>
inline void write_resized(
    torch::stable::Tensor& out,
    const torch::stable::Tensor& value) {
  const torch::stable::Tensor all =
      number_tensor(Scalar(true), ScalarType::Bool);
  dispatch_tensors<4>(
      "aten::where",
      "self_out",
      {torch::stable::detail::from(all),
       torch::stable::detail::from(value),
       torch::stable::detail::from(value),
       torch::stable::detail::from(out)});
}

/// An out= op as aten's out= rules around its functional overload's
/// `result`: out on the result's device; the result dtype must cast to out's
/// (c10::canCast; `same_dtype`: must be out's, as aten's unary ops check);
/// out sharing memory with an input other than as the very same view, or
/// being resized while it shares memory with one, or writing an element
/// twice, is refused (aten computes such calls element by element). Then,
/// where out's shape differs, aten::where.self_out writes the result into
/// it: TensorIterator's resize_output (aten's warning on a non-empty out
/// included) and the result's strides, as aten's structured kernels
/// restride a resized out; otherwise aten::copy_.
template <typename = void>
inline void assign_out(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result,
    std::initializer_list<const torch::stable::Tensor*> inputs,
    bool same_dtype) {
  const std::string what = std::string("shimgen: ") + op;
  if (!same_device(out, result)) {
    const std::string why = ": out is on another device than the result";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (same_dtype && result.scalar_type() != out.scalar_type()) {
    const std::string why = ": out's dtype differs from the result's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (!can_cast(result.scalar_type(), out.scalar_type())) {
    const std::string why = ": the result's dtype cannot be cast to out's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  const bool resize = !same_sizes(out, result);
  std::string refused;
  if (written_twice(out)) {
    refused = "out writes an element twice";
  }
  for (const torch::stable::Tensor* input : inputs) {
    if (resize && overlaps(out, *input)) {
      refused = "out shares memory with an input";
    }
    if (shares_memory(out, *input)) {
      refused = "out shares memory with an input";
    }
  }
  if (!refused.empty()) {
    std::string why = what + ": " + refused;
    why += ", which this composition (the op out of place, then copy_) ";
    why += "cannot compute as aten does: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release), or pass ";
    why += "a copy";
    throw std::runtime_error(why);
  }
  if (!resize) {
    dispatch_tensors<3>(
        "aten::copy_",
        "",
        {torch::stable::detail::from(out),
         torch::stable::detail::from(result),
         torch::stable::detail::from(false)});
    return;
  }
  write_resized(out, to_dtype(result, out.scalar_type()));
}

/// aten's meta of an out= overload that sizes out [0] before its kernel
/// redispatches (row key `empty_first`: isin.Scalar_Tensor_out): out's device
/// and dtype checked against the result's, then out resized to [0] by
/// aten::where.self_out over an empty tensor of the result's (TensorIterator's
/// resize: aten's warning where out had elements). An out writing an element
/// twice is refused first (TensorIterator would raise where aten resizes it).
template <typename = void>
inline void empty_out_first(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result) {
  const std::string what = std::string("shimgen: ") + op;
  if (!same_device(out, result)) {
    const std::string why = ": out is on another device than the result";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (result.scalar_type() != out.scalar_type()) {
    const std::string why = ": out's dtype differs from the result's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (written_twice(out)) {
    std::string why = what + ": out writes an element twice, which this ";
    why += "composition cannot resize as aten does: define SHIMGEN_OVERLAY ";
    why += "and link libshimgen_overlay (rebuilt for each torch release), or ";
    why += "pass a copy";
    throw std::runtime_error(why);
  }
  if (out.dim() == 1 && out.size(0) == 0) {
    return;
  }
  const torch::stable::Tensor one = dim_op("aten::unsqueeze", "", result, 0);
  const torch::stable::Tensor none = dispatch_tensors<5>(
      "aten::slice",
      "Tensor",
      {torch::stable::detail::from(one),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(std::optional<int64_t>(0)),
       torch::stable::detail::from(std::optional<int64_t>(0)),
       torch::stable::detail::from(int64_t(1))});
  write_resized(out, none);
}

/// The self an in-place composition computes from: where autograd records
/// the call (grad mode, and self or another input requires grad) a clone
/// (aten::clone), so that what autograd saves of it is not the tensor
/// aten::copy_ then overwrites (mul_'s backward needs the original self);
/// otherwise self itself.
template <typename = void>
inline torch::stable::Tensor saved_self(
    const torch::stable::Tensor& self,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  if (!aoti_torch_grad_mode_is_enabled()) {
    return self;
  }
  bool recorded = requires_grad_in_grad_mode(self);
  for (const torch::stable::Tensor* input : inputs) {
    recorded = recorded || requires_grad_in_grad_mode(*input);
  }
  if (!recorded) {
    return self;
  }
  return dispatch_tensors<2>(
      "aten::clone",
      "",
      {torch::stable::detail::from(self), torch::stable::detail::from(std::nullopt)});
}

