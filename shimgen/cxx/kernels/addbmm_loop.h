// @needs legacy_shims out_inplace
// ---- kernel `addbmm_loop`: aten's CPU addbmm (addbmm, addbmm_, addbmm.out),
// which is itself a loop of addmm_ (LinearAlgebra.cpp addbmm_impl_): the same
// calls in the same order, each addmm_ as libtorch's legacy addmm_out shim
// with out = self = the result (the very call addmm_ makes) ----

/// The size of `t`'s dimension `dim` (not negative), with aten's error where
/// t has no such dimension (c10's maybe_wrap_dim).
template <typename = void>
inline int64_t dim_size(
    const char* op,
    const torch::stable::Tensor& t,
    int64_t dim) {
  const int64_t n = t.dim();
  if (n == 0) {
    std::string why = "Dimension specified as " + std::to_string(dim);
    why += " but tensor has no dimensions (aten raises)";
    fail(op, why.c_str());
  }
  if (dim >= n) {
    std::string why = "Dimension out of range (expected to be in range of [";
    why += std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got ";
    why += std::to_string(dim) + ") (aten raises)";
    fail(op, why.c_str());
  }
  return t.size(dim);
}

/// Where autocast computes a matrix product of `like`'s dtype in another
/// dtype (aten::mm's autocast policy, addbmm's too, probed on empty tensors
/// like `like`): an empty tensor of that dtype and like's device, for
/// autocast_like; nullopt where there is no autocast (like's own dtype, or a
/// dtype autocast leaves alone: no probe).
template <typename = void>
inline std::optional<torch::stable::Tensor> autocast_target(
    const torch::stable::Tensor& like) {
  const ScalarType t = like.scalar_type();
  if (!is_floating(position(t)) || t == ScalarType::Double) {
    return std::nullopt;
  }
  torch::stable::Tensor out = dispatch_probe("aten::mm", like, like);
  if (out.scalar_type() == t) {
    return std::nullopt;
  }
  return out;
}

// Lists cross the dispatcher from 2.10 (the addbmm wrappers exist from then).
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's empty({0}, self.options()): the functional form's result before
/// it is resized (aten::new_empty).
template <typename = void>
inline torch::stable::Tensor new_empty_of(const torch::stable::Tensor& self) {
  return dispatch_tensors<6>(
      "aten::new_empty",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(std::vector<int64_t>{0}),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt)});
}

#endif

/// Batch `b` of `t` (aten::select.int(t, 0, b)).
template <typename = void>
inline torch::stable::Tensor batch_of(
    const torch::stable::Tensor& t,
    int64_t b) {
  return dispatch_tensors<3>(
      "aten::select",
      "int",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(b)});
}

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's addbmm_out(self, batch1, batch2, beta, alpha, result) on the CPU up
/// to its loop: self expanded to the product's shape (expand_size), aten's
/// checks in its order and words, result resized as the expanded self and
/// given its values where beta is not zero; for no batch, result * beta
/// (zeros for beta 0; a beta other than 0 or 1 is refused there). Returns the
/// number of batches, for which the wrapper then calls addmm.out's wrapper
/// (libtorch's legacy addmm_out shim) with out = self = result, beta for the
/// first and 1 after: the addmm_ calls aten makes. A call autograd records
/// (aten's derivative is addbmm's own; the shim is an out= call) and a tensor
/// not on the CPU (CUDA computes one gemm) are refused.
template <typename = void>
inline int64_t addbmm_prepare(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& batch1,
    const torch::stable::Tensor& batch2,
    const Scalar& beta,
    const torch::stable::Tensor& result,
    bool result_is_self) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link libshimgen_overlay ";
  remedy += "(rebuilt for each torch release)";
  const bool cpu = self.is_cpu() && batch1.is_cpu() && batch2.is_cpu();
  if (!cpu || !result.is_cpu()) {
    std::string why = "a tensor not on the CPU, where aten computes addbmm as ";
    why += "one gemm and this route is proven on the CPU only" + remedy;
    fail(op, why.c_str());
  }
  if (records_grad({&self, &batch1, &batch2, &result})) {
    std::string why = "autograd would record the call (grad mode, an input ";
    why += "requiring grad): aten's derivative is addbmm's own, this ";
    why += "route's calls are out= calls; run it under torch.no_grad()";
    why += remedy;
    fail(op, why.c_str());
  }
  const int64_t rows = dim_size(op, batch1, 1);
  const int64_t cols = dim_size(op, batch2, 2);
  const torch::stable::Tensor expanded = dispatch_tensors<3>(
      "aten::expand",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(std::vector<int64_t>{rows, cols}),
       torch::stable::detail::from(false)});
  if (batch1.dim() != 3) {
    fail(op, "batch1 must be a 3D tensor (aten raises)");
  }
  if (batch2.dim() != 3) {
    fail(op, "batch2 must be a 3D tensor (aten raises)");
  }
  if (batch1.size(0) != batch2.size(0)) {
    std::string why = "batch1 and batch2 must have same number of batches, ";
    why += "got " + std::to_string(batch1.size(0)) + " and ";
    why += std::to_string(batch2.size(0)) + " (aten raises)";
    fail(op, why.c_str());
  }
  if (batch1.size(2) != batch2.size(1)) {
    std::string why = "Incompatible matrix sizes for bmm (";
    why += std::to_string(batch1.size(1)) + "x";
    why += std::to_string(batch1.size(2)) + " and ";
    why += std::to_string(batch2.size(1)) + "x";
    why += std::to_string(batch2.size(2)) + ") (aten raises)";
    fail(op, why.c_str());
  }
  const bool shaped = self.dim() == 2 && self.size(0) == rows;
  if (result_is_self && !(shaped && self.size(1) == cols)) {
    std::string why = "self does not have the product's shape, where aten ";
    why += "resizes self to its own expansion" + remedy;
    fail(op, why.c_str());
  }
  const torch::stable::Tensor resized = dispatch_tensors<3>(
      "aten::resize_as_",
      "",
      {torch::stable::detail::from(result),
       torch::stable::detail::from(expanded),
       torch::stable::detail::from(std::nullopt)});
  const std::complex<double> b = beta.to_complex();
  const bool beta_zero = b == std::complex<double>(0.0, 0.0);
  if (!beta_zero && !result_is_self) {
    const torch::stable::Tensor copied = dispatch_tensors<3>(
        "aten::copy_",
        "",
        {torch::stable::detail::from(result),
         torch::stable::detail::from(expanded),
         torch::stable::detail::from(false)});
  }
  const int64_t batches = batch1.size(0);
  if (batches == 0 && beta_zero) {
    const torch::stable::Tensor zeros =
        dispatch_tensors<1>("aten::zero_", "", {torch::stable::detail::from(result)});
  }
  if (batches == 0 && !beta_zero && b != std::complex<double>(1.0, 0.0)) {
    std::string why = "no batch and a beta other than 0 or 1, which aten ";
    why += "multiplies self by as a wrapped number" + remedy;
    fail(op, why.c_str());
  }
  return batches;
}
#endif

