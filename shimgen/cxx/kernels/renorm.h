// @needs legacy_shims compositions out_inplace backward_raises
// ---- kernel `renorm_two`: renorm with p = 2 as aten computes it (its
// structured kernel, Normalization.cpp renorm_out) ----
//
// aten: norm = linalg_vector_norm(self, p, every dim but `dim`, keepdim, the
// accumulate dtype for half / bfloat16); its scale factor kernel, in norm's
// dtype, `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` (cast to self's dtype
// where that differs); then self * factor into a new contiguous tensor. The
// wrappers make those calls (composition.py _renorm_body), the factor kernel
// as aten::gt, aten::add, aten::div and aten::where on 0-dim tensors of
// norm's dtype (maxnorm and 1e-7 cast as the kernel casts them: IEEE
// operations, which round alike). aten's derivative is renorm's own, so a
// call autograd records is refused.

/// aten's checks of renorm(self, p, dim, maxnorm) (its meta function, then
/// dim wrapped), in its order, then this route's refusals; returns the dims
/// the norm reduces.
template <typename = void>
inline std::vector<int64_t> renorm_dims(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& p,
    int64_t dim,
    const Scalar& maxnorm) {
  if (p.is_complex()) {
    fail(op, "renorm: p must be real-valued (aten raises)");
  }
  if (!(p.to_double() > 0.0)) {
    fail(op, "renorm: non-positive-norm not supported (aten raises)");
  }
  if (maxnorm.is_complex()) {
    fail(op, "renorm: maxnorm must be real-valued (aten raises)");
  }
  if (!(maxnorm.to_double() >= 0.0)) {
    fail(op, "renorm: expected maxnorm to be >= 0 (aten raises)");
  }
  const int64_t n = self.dim();
  if (n <= 1) {
    fail(op, "renorm: input needs at least 2 dimensions (aten raises)");
  }
  if (dim < -n || dim >= n) {
    std::string why = "Dimension out of range (expected to be in range of [";
    why += std::to_string(-n);
    why += ", ";
    why += std::to_string(n - 1);
    why += "], but got ";
    why += std::to_string(dim);
    why += ") (aten raises)";
    fail(op, why.c_str());
  }
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  if (p.to_double() != 2.0) {
    std::string why = "only p = 2 has a libtorch route (aten computes the ";
    why += "norm with linalg_vector_norm of that p, which libtorch carries ";
    why += "for 2 alone)";
    refuse(op, "p", p, why + remedy);
  }
  if (n > 3) {
    std::string why = "a tensor of more than 3 dimensions: the norm over ";
    why += "more than 2 dims has no libtorch route";
    fail(op, (why + remedy).c_str());
  }
  const ScalarType t = self.scalar_type();
  const bool half = t == ScalarType::Half || t == ScalarType::BFloat16;
  const bool single = t == ScalarType::Float || t == ScalarType::Double;
  const bool cfloat = t == ScalarType::ComplexFloat;
  const bool complex = cfloat || t == ScalarType::ComplexDouble;
  if (!half && !single && !complex) {
    std::string why = "a tensor of this dtype (aten raises for integers and ";
    why += "bool; complex32 and float8 were not proven)";
    fail(op, (why + remedy).c_str());
  }
  if (records_grad({&self})) {
    std::string why = "autograd records this call (aten's derivative is ";
    why += "renorm's own)";
    refuse_backward(op, why.c_str());
  }
  const int64_t wrapped = dim < 0 ? dim + n : dim;
  std::vector<int64_t> reduce;
  for (int64_t i = 0; i < n; ++i) {
    if (i != wrapped) {
      reduce.push_back(i);
    }
  }
  return reduce;
}

/// aten's accumulate dtype of renorm's norm (toAccumulateType with is_cuda
/// true): float for half and bfloat16; the norm's own dtype otherwise.
template <typename = void>
inline std::optional<ScalarType> renorm_norm_dtype(ScalarType t) {
  if (t == ScalarType::Half || t == ScalarType::BFloat16) {
    return ScalarType::Float;
  }
  return std::nullopt;
}

/// Whether `result` has the strides of a new contiguous tensor of its sizes
/// (at::empty's: a size-1 or empty dim counts as 1).
template <typename = void>
inline bool new_contiguous(const torch::stable::Tensor& result) {
  int64_t expected = 1;
  for (int64_t i = result.dim() - 1; i >= 0; --i) {
    if (result.stride(i) != expected) {
      return false;
    }
    expected *= std::max<int64_t>(result.size(i), 1);
  }
  return true;
}

