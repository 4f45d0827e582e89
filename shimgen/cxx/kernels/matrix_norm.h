// ---- kernel `matrix_norm_two`: linalg_matrix_norm with a number ord as aten
// computes it (LinearAlgebra.cpp, CompositeImplicitAutograd) ----
//
// For ord = 2 or -2 aten computes the largest or smallest singular value:
// amax / amin(linalg_svdvals(A.permute(the two dims last)), -1). The wrappers
// make the same calls in the same order (composition.py _matrix_norm_body);
// these are aten's checks before them and its two permutations. Its other
// orders (1, -1, inf, -inf) take linalg_vector_norm with ord 1, which no
// libtorch route carries: they raise an error naming the remedy.

/// Whether aten's linalg_matrix_norm takes `dtype` for an input of dtype `t`
/// (float, double, complex64 or complex128): of the input's kind and
/// convertible from it without narrowing (check_linalg_norm_dtype).
template <typename = void>
inline bool matrix_norm_dtype(ScalarType t, ScalarType dtype) {
  if (t == ScalarType::Float) {
    return dtype == ScalarType::Float || dtype == ScalarType::Double;
  }
  if (t == ScalarType::ComplexFloat) {
    const bool wider = dtype == ScalarType::ComplexDouble;
    return wider || dtype == t;
  }
  return dtype == t;
}

/// aten's checks of linalg_matrix_norm's dim, in its order: two dims, each in
/// range, different once wrapped. Returns them wrapped.
template <typename = void>
inline std::vector<int64_t> matrix_norm_pair(
    const char* op,
    const torch::stable::Tensor& A,
    torch::headeronly::IntHeaderOnlyArrayRef dim) {
  if (dim.size() != 2) {
    fail(op, "linalg.matrix_norm: dim must be a 2-tuple. (aten raises)");
  }
  const int64_t n = A.dim();
  std::vector<int64_t> wrapped;
  for (size_t i = 0; i < dim.size(); ++i) {
    const int64_t d = dim[i];
    if (d < -n || d >= n) {
      std::string why = "Dimension out of range (expected to be in range of [";
      why += std::to_string(-n);
      why += ", ";
      why += std::to_string(n - 1);
      why += "], but got ";
      why += std::to_string(d);
      why += ") (aten raises)";
      fail(op, why.c_str());
    }
    wrapped.push_back(d < 0 ? d + n : d);
  }
  if (wrapped[0] == wrapped[1]) {
    fail(op, "linalg.matrix_norm: dims must be different. (aten raises)");
  }
  return wrapped;
}

/// aten's checks of linalg_matrix_norm(A, ord, dim, keepdim, dtype), in its
/// order, for ord = 2 or -2 (the others raise): returns dim wrapped. ord = 2
/// on an empty matrix raises too: aten raises there before 2.10 and returns
/// zeros from 2.10 on (the prover found it).
template <typename = void>
inline std::vector<int64_t> matrix_norm_dims(
    const char* op,
    const torch::stable::Tensor& A,
    const Scalar& ord,
    torch::headeronly::IntHeaderOnlyArrayRef dim,
    std::optional<ScalarType> dtype) {
  if (ord.is_complex()) {
    std::string why = "linalg.matrix_norm: Expected a non-complex scalar as ";
    why += "the order of norm. (aten raises)";
    fail(op, why.c_str());
  }
  const double size = std::abs(ord.to_double());
  if (!(size == 2.0 || size == 1.0 || size == INFINITY)) {
    std::string why = "linalg.matrix_norm: Order ";
    why += ord.repr();
    why += " not supported. (aten raises)";
    fail(op, why.c_str());
  }
  if (size != 2.0) {
    std::string why = "only ord = 2 and -2 have a libtorch route (aten ";
    why += "computes the others with linalg_vector_norm's ord 1, which no ";
    why += "libtorch route carries): define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    refuse(op, "ord", ord, why);
  }
  if (A.dim() < 2) {
    std::string why = "linalg.matrix_norm: The input tensor A must have at ";
    why += "least 2 dimensions. (aten raises)";
    fail(op, why.c_str());
  }
  const ScalarType t = A.scalar_type();
  const bool real = t == ScalarType::Float || t == ScalarType::Double;
  const bool single = t == ScalarType::ComplexFloat;
  const bool complex = single || t == ScalarType::ComplexDouble;
  if (!real && !complex) {
    std::string why = "linalg.matrix_norm: Expected a floating point or ";
    why += "complex tensor as input (aten raises)";
    fail(op, why.c_str());
  }
  const std::vector<int64_t> wrapped = matrix_norm_pair(op, A, dim);
  if (dtype.has_value() && !matrix_norm_dtype(t, dtype.value())) {
    std::string why = "linalg.matrix_norm: dtype should be floating point or ";
    why += "complex, of the input's kind, convertible from it without ";
    why += "narrowing (aten raises)";
    fail(op, why.c_str());
  }
  const bool empty = A.size(wrapped[0]) == 0 || A.size(wrapped[1]) == 0;
  if (empty && ord.to_double() > 0) {
    std::string why = "the norm of an empty matrix: aten's answer changed in ";
    why += "2.10 (an error before, zeros after): define SHIMGEN_OVERLAY and ";
    why += "link libshimgen_overlay (rebuilt for each torch release)";
    refuse(op, "ord", ord, why);
  }
  return wrapped;
}

/// aten's create_dim_backshift_permutation: every dimension but the two, in
/// order, then dim0 and dim1.
template <typename = void>
inline std::vector<int64_t> backshift_permutation(
    int64_t dim0,
    int64_t dim1,
    int64_t n) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (i != dim0 && i != dim1) {
      order.push_back(i);
    }
  }
  order.push_back(dim0);
  order.push_back(dim1);
  return order;
}

/// aten's create_reverse_permutation: the permutation that undoes `order`.
template <typename = void>
inline std::vector<int64_t> reverse_permutation(
    const std::vector<int64_t>& order) {
  std::vector<int64_t> reverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    reverse[order[i]] = static_cast<int64_t>(i);
  }
  return reverse;
}
