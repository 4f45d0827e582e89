// ---- kernel `foreach`: a _foreach_ op as aten's CPU kernel computes it (its
// slow path: the per-tensor op on each element in order), on CPU tensors
// alone ----

/// Refuses, by name, a _foreach_ call with a tensor not on the CPU. aten
/// computes such a call on CUDA with fused multi-tensor kernels, which this
/// composition is not proven equal to (it is on the CPU, where aten's kernel
/// is the per-tensor op on each element): a division there divides by the
/// number, where div's own CUDA kernel multiplies by its reciprocal, and a
/// norm is reduced in another order. No libtorch route carries the op's
/// number, so the remedy named is the per-tensor op (`per_tensor`) itself.
template <typename = void>
inline void foreach_on_cpu(
    const char* op,
    torch::headeronly::HeaderOnlyArrayRef<torch::stable::Tensor> tensors,
    const char* per_tensor) {
  for (const torch::stable::Tensor& t : tensors) {
    if (!t.is_cpu()) {
      std::string why = "a tensor is not on the CPU, where aten computes ";
      why += "this op with fused multi-tensor kernels that this composition ";
      why += "(aten's CPU kernel: the per-tensor op on each element) is not ";
      why += "proven equal to: call torch::stable::";
      why += per_tensor;
      why += " on each tensor";
      fail(op, why.c_str());
    }
  }
}
