// @needs out_inplace
// ---- rows with `backward_raises` (kernels `inplace`, `foreach`): calls
// whose backward aten raises for, which the composition would differentiate
// (shimgen/generate/routes/composition.py) ----

/// Does autograd record an in-place call on `self` as a node of its graph?
/// Grad mode, and self has a grad_fn (aten::is_leaf false). A leaf that
/// requires grad is left to the composition's own calls, which raise aten's
/// in-place error.
template <typename = void>
inline bool records_inplace(const torch::stable::Tensor& self) {
  return aoti_torch_grad_mode_is_enabled() && !without_grad_fn(self);
}

/// The refusal of a call autograd records whose backward aten raises for
/// (`why`): the composition's calls would record a backward that succeeds.
template <typename = void>
[[noreturn]] inline void refuse_backward(const char* op, const char* why) {
  std::string text = std::string("shimgen: ") + op + ": " + why;
  text += ", which this composition would differentiate: call it where ";
  text += "autograd does not record it (no grad mode, or on tensors that ";
  text += "do not require grad), or define SHIMGEN_OVERLAY and link ";
  text += "libshimgen_overlay (rebuilt for each torch release)";
  throw std::runtime_error(text);
}

