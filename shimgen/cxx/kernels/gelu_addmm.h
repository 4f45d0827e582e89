// @needs out_inplace
// ---- kernel `gelu_addmm`: gelu(x) (approximate "none") on a CPU tensor as
// aten's own CPU gelu kernel, reached with no `str` crossing the ABI ----
//
// libtorch 2.9-2.15 export aoti_torch_cpu__addmm_activation, the CPU C shim
// of aten::_addmm_activation(self, mat1, mat2, beta, alpha, use_gelu), which
// aten computes (Blas.cpp addmm_activation_out_cpu) as addmm into a new tensor,
// then at::gelu_ on it: the GeluKernel aten::gelu runs, with approximate
// "none". With an empty product (mat1 [1, 0], mat2 [0, n]) and beta 1, addmm
// copies self into a new contiguous tensor: on a contiguous x the kernel then
// runs over the same values in the same order, and in the same chunks of the
// thread pool, as aten::gelu's (its vectorized body and scalar tail alike).
// Another layout is left to the dispatcher: aten's loop over a strided x
// takes other paths (its scalar erf where the copy's would be vectorized).

/// aoti_torch_cpu__addmm_activation, as libtorch's c_shim_cpu.h declares it
/// (a function with C linkage: the one declaration names it in every scope).
extern "C" {
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu__addmm_activation(
    AtenTensorHandle self,
    AtenTensorHandle mat1,
    AtenTensorHandle mat2,
    double beta,
    double alpha,
    int32_t use_gelu,
    AtenTensorHandle* ret0);
} // extern "C"

/// Does gelu_addmm compute this call as aten::gelu does (the wrapper asks
/// only on a running libtorch before 2.14: from 2.14 the dispatcher carries
/// the op itself without leaking)? Approximate "none", a contiguous CPU tensor
/// of a floating dtype aten's CPU gelu computes, and a call autograd does not
/// record (aten::_addmm_activation has no derivative).
template <typename = void>
inline bool gelu_by_addmm(
    const torch::stable::Tensor& self,
    std::string_view approximate) {
  if (approximate != "none" || !self.is_cpu()) {
    return false;
  }
  switch (self.scalar_type()) {
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::BFloat16:
    case ScalarType::Half:
      break;
    default:
      return false;
  }
  return self.is_contiguous() && !records_grad({&self});
}

/// gelu_by_addmm for gelu.out, whose out must be contiguous too: aten
/// computes into a strided out in that out's layout, which takes its scalar
/// loop.
template <typename = void>
inline bool gelu_out_by_addmm(
    const torch::stable::Tensor& out,
    const torch::stable::Tensor& self,
    std::string_view approximate) {
  return gelu_by_addmm(self, approximate) && out.is_contiguous();
}

/// Throws libtorch's own reason where a C shim call failed (failure_reason).
template <typename = void>
inline void gelu_shim_check(AOTITorchError err) {
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
}

/// gelu(self) by aoti_torch_cpu__addmm_activation (gelu_by_addmm said it
/// may): self as a [1, n] row, the empty product, and the result viewed with
/// self's sizes (contiguous, as aten's result on a contiguous self).
template <typename = void>
inline torch::stable::Tensor gelu_addmm(const torch::stable::Tensor& self) {
  const auto sizes = self.sizes();
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  const int64_t n = self.numel();
  const std::array<int64_t, 2> row_sizes{1, n};
  const std::array<int64_t, 2> row_strides{n, 1};
  AtenTensorHandle row = nullptr;
  // the offset is added to self's own (aoti_torch__reinterpret_tensor)
  gelu_shim_check(aoti_torch__reinterpret_tensor(
      self.get(), 2, row_sizes.data(), row_strides.data(), 0, &row));
  torch::stable::Tensor flat(row);
  int32_t dtype = 0;
  int32_t device_type = 0;
  gelu_shim_check(aoti_torch_get_dtype(self.get(), &dtype));
  gelu_shim_check(aoti_torch_get_device_type(self.get(), &device_type));
  const std::array<int64_t, 2> left_sizes{1, 0};
  const std::array<int64_t, 2> left_strides{1, 1};
  const std::array<int64_t, 2> right_sizes{0, n};
  const std::array<int64_t, 2> right_strides{n, 1};
  AtenTensorHandle left = nullptr;
  AtenTensorHandle right = nullptr;
  gelu_shim_check(aoti_torch_empty_strided(
      2, left_sizes.data(), left_strides.data(), dtype, device_type, 0, &left));
  torch::stable::Tensor mat1(left);
  gelu_shim_check(aoti_torch_empty_strided(
      2, right_sizes.data(), right_strides.data(), dtype, device_type, 0, &right));
  torch::stable::Tensor mat2(right);
  AtenTensorHandle result = nullptr;
  gelu_shim_check(aoti_torch_cpu__addmm_activation(
      flat.get(), mat1.get(), mat2.get(), 1.0, 1.0, 1, &result));
  torch::stable::Tensor computed(result);
  std::vector<int64_t> out_strides(sizes.size());
  int64_t step = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    out_strides[d] = step;
    step *= sizes[d];
  }
  AtenTensorHandle out = nullptr;
  gelu_shim_check(aoti_torch__reinterpret_tensor(
      computed.get(), ndim, sizes.data(), out_strides.data(), 0, &out));
  return torch::stable::Tensor(out);
}
