// @needs compositions out_inplace
// ---- kernel `scalars_tensor`: an op as its _foreach_ sibling's `.Tensor`
// overload on one-element lists (addcmul, addcdiv and their in-place forms;
// shimgen/generate/routes/composition.py) ----
//
// aten's CPU kernel of _foreach_X.Tensor(self, tensor1, tensor2, Tensor
// scalars) converts each element of the packed 1-D `scalars` tensor back to
// a c10::Scalar of the tensor's own type (convert_tensor_to_scalar_list) and
// calls aten::X(self[i], tensor1[i], tensor2[i], that Scalar): a number held
// by a tensor of its own type (bool, int64, float64, complex128) reaches
// aten's own kernel unchanged, which no double-carrying C shim can promise.

/// The number as a 1-D CPU tensor of one element of its own type, which
/// aten's convert_tensor_to_scalar_list reads back as the very same Scalar.
/// An unsigned number above int64's range is refused (aten reads no uint64
/// tensor back).
template <typename = void>
inline torch::stable::Tensor scalars_tensor(
    const char* op,
    const char* arg,
    const Scalar& s) {
  if (s.kind() == Scalar::Kind::UInt) {
    std::string why = "aten's packed-scalars kernel reads no uint64 tensor ";
    why += "back: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    refuse(op, arg, s, why);
  }
  return dim_op("aten::unsqueeze", "", number_tensor(s, natural_type(s)), 0);
}

/// What the route cannot serve, refused before any call: a call autograd
/// records (grad mode, and an input requiring grad: aten's _foreach_X.Tensor
/// has no derivative, where aten::X has one), and a tensor not on the CPU
/// (other backends' foreach kernels take a fused path computed otherwise; the
/// route is proven on CPU only).
template <typename = void>
inline void check_scalars_route(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  for (const torch::stable::Tensor* t : tensors) {
    if (!t->is_cpu()) {
      std::string why = "a tensor not on the CPU: its libtorch route (the ";
      why += "_foreach_ kernel on one-element lists) is proven on CPU ";
      why += "tensors only";
      fail(op, (why + remedy).c_str());
    }
  }
  if (records_grad(tensors)) {
    std::string why = "an input requires grad in grad mode: its libtorch ";
    why += "route (the _foreach_ kernel on one-element lists) has no ";
    why += "derivative (run it under torch.no_grad(), as optimizers do)";
    fail(op, (why + remedy).c_str());
  }
}

