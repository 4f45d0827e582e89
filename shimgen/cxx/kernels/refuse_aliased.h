// @needs legacy_shims compositions out_inplace backward_raises
// ---- row keys `refuse_aliased` and `autograd: refused` (kernel `inplace`:
// addmm_ over addmm.default, whose legacy out= shim autograd refuses)
// (shimgen/generate/routes/composition.py) ----

/// aten's in-place error for a leaf `self` that requires grad, raised by aten
/// itself (grad mode only): aten::copy_ of self onto itself, whose autograd
/// check comes before the copy.
template <typename = void>
inline void inplace_leaf_check(const torch::stable::Tensor& self) {
  if (!aoti_torch_grad_mode_is_enabled() || records_inplace(self)) {
    return;
  }
  if (!requires_grad_in_grad_mode(self)) {
    return;
  }
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(self),
       torch::stable::detail::from(false)});
}

/// Refuses self sharing any byte with an input, the very same view included:
/// aten's kernel reads the inputs while it writes self (addmm_ with self as
/// mat1 gives another result than addmm), which the composition (the op out
/// of place, then copy_) cannot follow.
template <typename = void>
inline void refuse_aliased(
    const char* op,
    const torch::stable::Tensor& self,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  for (const torch::stable::Tensor* input : inputs) {
    if (overlaps(self, *input)) {
      std::string why = std::string("shimgen: ") + op;
      why += ": self shares memory with an input, which aten's kernel reads ";
      why += "while it writes self: this composition (the op out of place, ";
      why += "then copy_) cannot compute it as aten does: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a copy";
      throw std::runtime_error(why);
    }
  }
}

/// `t`'s sizes as aten prints them: [2, 3].
template <typename = void>
inline std::string sizes_text(const torch::stable::Tensor& t) {
  int64_t* sizes = nullptr;
  check(aoti_torch_get_sizes(t.get(), &sizes), "aoti_torch_get_sizes");
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) {
    text += (d > 0 ? ", " : "") + std::to_string(sizes[d]);
  }
  return text + "]";
}

/// aten's in-place error for a self of other sizes than the result; refuses
/// a self of the result's sizes but other strides (row key
/// `refuse_strides`): aten computes in self's layout (addmm_ on a transposed
/// self runs the transposed product, which rounds otherwise), the composition
/// in the result's.
template <typename = void>
inline void refuse_strides(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& result) {
  if (!same_sizes(self, result)) {
    std::string why = "Bad in-place call: input tensor size ";
    why += sizes_text(self) + " and output tensor size ";
    why += sizes_text(result) + " should match (aten raises)";
    fail(op, why.c_str());
  }
  int64_t* a = nullptr;
  int64_t* b = nullptr;
  check(aoti_torch_get_strides(self.get(), &a), "aoti_torch_get_strides");
  check(aoti_torch_get_strides(result.get(), &b), "aoti_torch_get_strides");
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (a[d] != b[d]) {
      std::string why = std::string("shimgen: ") + op;
      why += ": self is not laid out as a new contiguous tensor, and aten ";
      why += "computes in self's layout, which rounds otherwise: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a contiguous self";
      throw std::runtime_error(why);
    }
  }
}

