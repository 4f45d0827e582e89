// ---- kernel `trapezoid_dx`: trapezoid.dx and cumulative_trapezoid.dx as aten
// computes them (Integration.cpp, CompositeImplicitAutograd) ----
//
// The wrappers call the same aten ops in the same order (composition.py
// _trapezoid_body); these are aten's own checks before them, and the sizes of
// the zeros aten returns for an empty dimension.

/// aten's checks of trapezoid(y, dx) / cumulative_trapezoid(y, dx), in its
/// order: a bool `y`, then a complex or bool `dx`.
template <typename = void>
inline void trapezoid_check(
    const char* op,
    const char* name,
    const torch::stable::Tensor& y,
    const Scalar& dx) {
  if (y.scalar_type() == ScalarType::Bool) {
    std::string why = name;
    why += ": received a bool input for `y`, but bool is not supported ";
    why += "(aten raises)";
    fail(op, why.c_str());
  }
  if (dx.is_complex() || dx.is_boolean()) {
    std::string why = name;
    why += ": Currently, we only support dx as a real number (aten raises)";
    fail(op, why.c_str());
  }
}

/// y's sizes without dimension `dim` (aten's zeros_like_except; `dim` was
/// checked by y.size(dim) first, as aten's y.sym_size(dim) checks it).
template <typename = void>
inline std::vector<int64_t> sizes_except(
    const torch::stable::Tensor& y,
    int64_t dim) {
  const int64_t n = y.dim();
  const int64_t wrapped = dim < 0 ? dim + n : dim;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < n; ++i) {
    if (i != wrapped) {
      sizes.push_back(y.size(i));
    }
  }
  return sizes;
}

