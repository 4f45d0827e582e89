// @needs matrix_norm
// ---- kernel `matrix_norm_str`: linalg_matrix_norm and linalg_norm with an
// ord string ("fro", "nuc") as aten computes them (LinearAlgebra.cpp,
// CompositeImplicitAutograd) ----
//
// "fro" is linalg_vector_norm with ord 2 over the two dims (linalg_norm with
// ord None); "nuc" is the sum of the singular values,
// linalg_svdvals(A.permute(the two dims last)).sum(-1).
// The wrappers make the same calls in the same order (routes/kernels/
// matrix_norm.py); these are aten's checks before them. The string is
// compared here, so no `str` crosses the ABI.

/// aten's check_linalg_norm_dtype: `dtype` floating point or complex, of the
/// input's kind, and the input's dtype promotes to it (no narrowing).
template <typename = void>
inline bool linalg_norm_dtype(ScalarType t, ScalarType dtype) {
  const int from = position(t);
  const int to = position(dtype);
  if (!is_floating(to) && !is_complex(to)) {
    return false;
  }
  if (is_complex(from) != is_complex(to)) {
    return false;
  }
  return promote(from, to) == to;
}

/// aten's checks of linalg_matrix_norm(A, ord, dim, keepdim, dtype) with an
/// ord string, in its order: the ord first, then _linalg_matrix_norm_checks
/// (a floating or complex input, half and bfloat16 too for "fro"; two
/// different dims; dtype=). Returns dim wrapped.
template <typename = void>
inline std::vector<int64_t> matrix_norm_str_dims(
    const char* op,
    const torch::stable::Tensor& A,
    std::string_view ord,
    torch::headeronly::IntHeaderOnlyArrayRef dim,
    std::optional<ScalarType> dtype) {
  const bool fro = ord == "fro";
  if (!fro && ord != "nuc") {
    std::string why = "linalg.matrix_norm: Order ";
    why += ord;
    why += " not supported. (aten raises)";
    fail(op, why.c_str());
  }
  if (A.dim() < 2) {
    std::string why = "linalg.matrix_norm: The input tensor A must have at ";
    why += "least 2 dimensions. (aten raises)";
    fail(op, why.c_str());
  }
  const ScalarType t = A.scalar_type();
  const bool full = t == ScalarType::Float || t == ScalarType::Double;
  const bool low = t == ScalarType::Half || t == ScalarType::BFloat16;
  const bool single = t == ScalarType::ComplexFloat;
  const bool complex = single || t == ScalarType::ComplexDouble;
  const bool low_complex = t == ScalarType::ComplexHalf;
  if (!(full || complex || (fro && (low || low_complex)))) {
    std::string why = "linalg.matrix_norm: Expected a floating point or ";
    why += "complex tensor as input (aten raises)";
    fail(op, why.c_str());
  }
  const std::vector<int64_t> wrapped = matrix_norm_pair(op, A, dim);
  if (dtype.has_value() && !linalg_norm_dtype(t, dtype.value())) {
    std::string why = "linalg.matrix_norm: dtype should be floating point or ";
    why += "complex, of the input's kind, convertible from it without ";
    why += "narrowing (aten raises)";
    fail(op, why.c_str());
  }
  return wrapped;
}

/// aten's checks of linalg_norm(X, ord, dim, keepdim, dtype) with an ord
/// string, before it calls linalg_matrix_norm: returns the dims it passes.
/// `Dims` is the wrapper's optional list of ints.
template <typename Dims>
inline std::vector<int64_t> linalg_norm_str_dims(
    const char* op,
    const torch::stable::Tensor& X,
    const Dims& dim) {
  if (dim.has_value()) {
    const size_t size = dim->size();
    if (size != 1 && size != 2) {
      std::string why = "linalg.norm: If dim is specified, it mut be of ";
      why += "length 1 or 2. (aten raises)";
      fail(op, why.c_str());
    }
    return std::vector<int64_t>(dim->begin(), dim->end());
  }
  if (X.dim() != 1 && X.dim() != 2) {
    std::string why = "linalg.norm: If dim is not specified but ord is, the ";
    why += "input must be 1D or 2D. (aten raises)";
    fail(op, why.c_str());
  }
  return {0, 1};
}

/// "fro": linalg_vector_norm with ord 2 over the two dims, as linalg_norm
/// with ord None computes it (the route of linalg_vector_norm's ord 2 too).
/// linalg_norm with an ord string computes in its own header, so the call
/// names the wrapper unqualified on T (torch::stable::Tensor): argument-
/// dependent lookup finds it where the wrapper instantiates this, whatever
/// the order of the wrappers in that header.
template <typename T, typename Dtype>
inline T matrix_norm_fro(
    const T& A,
    const std::vector<int64_t>& dims,
    bool keepdim,
    Dtype dtype) {
  return linalg_norm(A, std::nullopt, IntList(dims), keepdim, dtype);
}
