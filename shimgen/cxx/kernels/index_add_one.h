// @needs legacy_shims compositions out_inplace
// ---- kernel `index_add_one`: index_add with alpha 1 as scatter_add
// (index_add.default, index_add_.default, index_add.out;
// shimgen/generate/routes/composition.py) ----

/// Raises aten's index_add error (its message, then "(aten raises)").
template <typename = void>
[[noreturn]] inline void index_add_fails(const char* op, const char* why) {
  std::string text = std::string("shimgen: ") + op + ": index_add_(): ";
  throw std::runtime_error(text + why + " (aten raises)");
}

/// The index aten::scatter_add reads where aten's index_add adds source's
/// slice i into self's slice index[i] along dim: index as int64, unsqueezed
/// around dim and expanded to source's shape, then laid out contiguously (an
/// expanded index would take scatter_add's sorted fast path, which sums in
/// another order). First aten's index_add checks, in its order and with its
/// messages, and the route's refusals: alpha other than 1 (aten fuses
/// `self + alpha * source` in one rounding), half, bfloat16 and complex (aten
/// adds the former in float per step, multiplies the latter by alpha: inf
/// becomes nan), a tensor not on the CPU, and `written` (self in place, out)
/// sharing memory with index.
template <typename = void>
inline torch::stable::Tensor index_add_index(
    const char* op,
    const torch::stable::Tensor* written,
    const torch::stable::Tensor& self,
    int64_t dim,
    const torch::stable::Tensor& index,
    const torch::stable::Tensor& source,
    const Scalar& alpha) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link libshimgen_overlay";
  remedy += " (rebuilt for each torch release)";
  if (!(is_int(alpha, 1) || is_double(alpha, 1.0))) {
    std::string why = "only alpha=1 has a libtorch route (aten::scatter_add, ";
    why += "which adds as aten's index_add does; aten computes self + alpha * ";
    why += "source in one rounding)";
    refuse(op, "alpha", alpha, why + remedy);
  }
  const ScalarType t = self.scalar_type();
  bool rounds = t == ScalarType::Half || t == ScalarType::BFloat16;
  rounds = rounds || t == ScalarType::ComplexHalf;
  rounds = rounds || t == ScalarType::ComplexFloat;
  rounds = rounds || t == ScalarType::ComplexDouble;
  if (rounds) {
    std::string why = "a half, bfloat16 or complex self: aten's index_add ";
    why += "rounds each addition of reduced types its own way, and multiplies ";
    why += "complex source by alpha (inf * (1+0j) is nan)";
    fail(op, (why + remedy).c_str());
  }
  const bool cpu = self.is_cpu() && index.is_cpu() && source.is_cpu();
  if (!cpu) {
    std::string why = "a tensor not on the CPU: the route is proven on CPU";
    why += " only";
    fail(op, (why + remedy).c_str());
  }
  const int64_t sdim = self.dim() > 0 ? self.dim() : 1;
  if (dim < -sdim || dim >= sdim) {
    index_add_fails(op, "Dimension out of range");
  }
  const int64_t d = dim < 0 ? dim + sdim : dim;
  if (index.dim() > 1) {
    index_add_fails(op, "Index is supposed to be a vector");
  }
  const ScalarType it = index.scalar_type();
  if (it != ScalarType::Long && it != ScalarType::Int) {
    index_add_fails(op, "Expected dtype int32/int64 for index");
  }
  if (source.scalar_type() != t) {
    index_add_fails(op, "self and source must have the same scalar type");
  }
  if (!(d == 0 || d < source.dim())) {
    index_add_fails(op, "Indexing dim is out of bounds of source");
  }
  int64_t* ss = nullptr;
  int64_t* xs = nullptr;
  check(aoti_torch_get_sizes(source.get(), &ss), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(self.get(), &xs), "aoti_torch_get_sizes");
  const int64_t wanted = source.dim() == 0 ? 1 : ss[d];
  if (index.numel() != wanted) {
    index_add_fails(op, "Number of indices should equal source.size(dim)");
  }
  // aten compares the sizes with dim left out where both have dims, else all
  bool shapes = self.dim() == source.dim();
  for (int64_t k = 0; shapes && k < self.dim(); ++k) {
    shapes = k == d || xs[k] == ss[k];
  }
  if (!shapes) {
    index_add_fails(op, "source slice shape mismatch");
  }
  if (written != nullptr && overlaps(*written, index)) {
    std::string why = "the tensor written shares memory with index";
    fail(op, (why + remedy).c_str());
  }
  torch::stable::Tensor idx = to_dtype(index, ScalarType::Long);
  if (source.dim() == 0 && idx.dim() == 1) {
    idx = dim_op("aten::squeeze", "dim", idx, 0);
  }
  if (source.dim() > 0 && idx.dim() == 0) {
    idx = dim_op("aten::unsqueeze", "", idx, 0);
  }
  for (int64_t k = 0; source.dim() > 0 && k < d; ++k) {
    idx = dim_op("aten::unsqueeze", "", idx, 0);
  }
  for (int64_t k = d + 1; k < source.dim(); ++k) {
    idx = dim_op("aten::unsqueeze", "", idx, -1);
  }
  if (source.dim() > 0) {
    idx = tensor_op("aten::expand_as", "", idx, source);
  }
  const StableIValue none = torch::stable::detail::from(std::nullopt);
  return dispatch_tensors<2>(
      "aten::clone", "", {torch::stable::detail::from(idx), none});
}

