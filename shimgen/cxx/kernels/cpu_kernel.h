// @needs out_inplace compositions addbmm_loop
// ---- kernel `cpu_kernel`: an op libtorch ships no C shim for, whose Scalar
// no released boxed dispatcher carries (baddbmm, addmv, histc), computed on
// CPU tensors by aten's own CPU kernel through libtorch's CPU C shim (every
// release 2.9-2.15 exports aoti_torch_cpu_*: data/device_shims.json), after
// what aten's dispatcher does above that kernel for such a call: negative
// and conjugate views resolved, autocast's cast where the row says (the
// route's `autocast`), and a call autograd would record refused ----

/// libtorch's CPU C shims the rows call, as its c_shim_cpu.h declares them
/// (functions with C linkage: one declaration names each in every scope; a
/// shim another section declares already is declared there alone).
extern "C" {
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_baddbmm_out(
    AtenTensorHandle out,
    AtenTensorHandle self,
    AtenTensorHandle batch1,
    AtenTensorHandle batch2,
    double beta,
    double alpha);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_addmv(
    AtenTensorHandle self,
    AtenTensorHandle mat,
    AtenTensorHandle vec,
    double beta,
    double alpha,
    AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_histc(
    AtenTensorHandle self,
    int64_t bins,
    double min,
    double max,
    AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(
    AtenTensorHandle out,
    AtenTensorHandle self,
    int64_t dim,
    AtenTensorHandle index,
    AtenTensorHandle src,
    const char* reduce,
    int32_t include_self);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_index_reduce(
    AtenTensorHandle self,
    int64_t dim,
    AtenTensorHandle index,
    AtenTensorHandle source,
    const char* reduce,
    int32_t include_self,
    AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_searchsorted_Tensor(
    AtenTensorHandle sorted_sequence,
    AtenTensorHandle self,
    int32_t out_int32,
    int32_t right,
    const char** side,
    AtenTensorHandle* sorter,
    AtenTensorHandle* ret0);
} // extern "C"

/// Refuses, by name, a call aten's CPU kernel reached through libtorch's CPU
/// C shim would not compute as aten::<op> does: a tensor not on the CPU (the
/// shim calls the CPU kernel), and, where `differentiable` (aten's op has a
/// derivative: its result requires grad), a call autograd would record (the
/// shim records no gradient).
template <typename = void>
inline void cpu_kernel_check(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors,
    bool differentiable) {
  for (const torch::stable::Tensor* t : tensors) {
    if (!t->is_cpu()) {
      std::string why = "libtorch ships no C shim for this op and no released ";
      why += "boxed dispatcher carries its Scalar, so it is computed only on ";
      why += "CPU tensors (aten's CPU kernel, libtorch's CPU C shim), and a ";
      why += "tensor is not on the CPU: call torch::stable::cuda:: from ";
      why += "<torch/csrc/stable/cuda/ops.h> where autograd and autocast need ";
      why += "not see the call, or define SHIMGEN_OVERLAY and link ";
      why += "libshimgen_overlay (rebuilt for each torch release)";
      fail(op, why.c_str());
    }
  }
  if (differentiable && records_grad(tensors)) {
    std::string why = "autograd would record the call (grad mode, an input ";
    why += "requires grad), and libtorch's CPU C shim records no gradient: ";
    why += "call it under no_grad, or define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// cpu_kernel_check as a question, for a str row: where the running
/// libtorch's dispatcher `leaks` the str, does the CPU kernel compute this
/// call as aten does (every tensor on the CPU, and autograd not recording it
/// where `differentiable`)? Where not, the call takes the dispatcher's
/// guarded form.
template <typename = void>
inline bool cpu_kernel_serves(
    std::initializer_list<const torch::stable::Tensor*> tensors,
    bool differentiable,
    bool leaks) {
  if (!leaks) {
    return false;
  }
  for (const torch::stable::Tensor* t : tensors) {
    if (!t->is_cpu()) {
      return false;
    }
  }
  return !(differentiable && records_grad(tensors));
}

/// `t` as aten's dispatcher hands it to a CPU kernel: a negative or
/// conjugate view resolved (the Negative and Conjugate fallbacks); `t`
/// itself where it is neither.
template <typename = void>
inline torch::stable::Tensor cpu_kernel_operand(const torch::stable::Tensor& t) {
  const torch::stable::Tensor n = dispatch_tensors<1>(
      "aten::resolve_neg", "", {torch::stable::detail::from(t)});
  return dispatch_tensors<1>(
      "aten::resolve_conj", "", {torch::stable::detail::from(n)});
}

/// Refuses a call on integer tensors only (none floating or complex):
/// libtorch's CPU C shim carries the numbers as doubles, with which aten's
/// kernel computes otherwise there (an empty product scales self by a
/// double, which an integer tensor cannot hold).
template <typename = void>
inline void cpu_kernel_integral(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  for (const torch::stable::Tensor* t : tensors) {
    const int p = position(t->scalar_type());
    if (is_floating(p) || is_complex(p)) {
      return;
    }
  }
  std::string why = "integer tensors: libtorch's CPU C shim carries the ";
  why += "numbers as doubles, with which aten's kernel computes otherwise ";
  why += "on them: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
  why += "(rebuilt for each torch release)";
  fail(op, why.c_str());
}

/// A copy of `t` in its own layout (aten::clone, preserve_format), for an
/// in-place call computed as aten computes it in self.
template <typename = void>
inline torch::stable::Tensor cpu_kernel_copy(const torch::stable::Tensor& t) {
  return dispatch_tensors<2>(
      "aten::clone",
      "",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(std::nullopt)});
}

/// Refuses a negative or conjugate out: aten writes it through its
/// fallback, and the shim would write its stored values.
template <typename = void>
inline void cpu_kernel_plain_out(
    const char* op,
    const torch::stable::Tensor& out) {
  if (cpu_kernel_operand(out).data_ptr() != out.data_ptr()) {
    std::string why = "out is a negative or conjugate view, which aten ";
    why += "writes through its fallback: pass a plain tensor, or define ";
    why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
    why += "torch release)";
    fail(op, why.c_str());
  }
}

/// out, written by aten's CPU kernel through the shim, as aten's dispatcher
/// leaves it: its version counter bumped (aten::copy_ of out onto itself,
/// whose kernel returns at once), so that autograd sees the write.
template <typename = void>
inline void cpu_kernel_written(const torch::stable::Tensor& out) {
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(out),
       torch::stable::detail::from(false)});
}

/// aten computes an out= (or in-place) call into an out (self) of the
/// result's sizes in that tensor's own layout, whose kernel may take other
/// paths (a strided gemv) than the contiguous result's: such a tensor that
/// is not contiguous is refused by name (an out aten resizes is restrided
/// contiguous, as the result is).
template <typename = void>
inline void cpu_kernel_out_layout(
    const char* op,
    const char* name,
    const torch::stable::Tensor& out,
    const torch::stable::Tensor& result) {
  if (same_sizes(out, result) && !out.is_contiguous()) {
    std::string why = name;
    why += " is not contiguous, and aten computes into it in ";
    why += "its own layout, which this composition (aten's CPU kernel into ";
    why += "a new tensor, then copy_) does not: pass a contiguous tensor, or ";
    why += "define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for ";
    why += "each torch release)";
    fail(op, why.c_str());
  }
}
