// ---- kernel `fft_norm`: the one-dimensional fft ops with a norm string as
// aten computes them (SpectralOps.cpp, CompositeImplicitAutograd: fft_c2c,
// fft_r2c, fft_c2r) ----
//
// The input promoted (an integer one to the default dtype, a real one to
// complex for c2r), resized to n (sliced, or zero-padded at its end), then
// aten::_fft_c2c, _fft_r2c or _fft_c2r with the normalization as a number,
// and the conjugate view where aten takes it. The string is compared here, so
// no `str` crosses the ABI. The calls name the wrappers unqualified on T
// (torch::stable::Tensor): argument-dependent lookup finds them where the
// wrapper instantiates the template (the row's `calls`).

/// aten's error, its text with "(aten raises)", as a shimgen: error.
template <typename = void>
[[noreturn]] inline void fft_fail(const char* op, std::string text) {
  text += " (aten raises)";
  fail(op, text.c_str());
}

/// aten's norm_from_string: 0 none, 1 by_root_n, 2 by_n.
template <typename = void>
inline int64_t fft_norm_mode(
    const char* op,
    std::optional<std::string_view> norm,
    bool forward) {
  if (!norm.has_value() || *norm == "backward") {
    return forward ? 0 : 2;
  }
  if (*norm == "forward") {
    return forward ? 2 : 0;
  }
  if (*norm == "ortho") {
    return 1;
  }
  std::string text = "Invalid normalization mode: \"";
  text += *norm;
  text += "\"";
  fft_fail(op, text);
}

/// Whether the wrapper computes an input of dtype t: aten's promotion of a
/// half or bfloat16 input depends on the device and the release, so such a
/// call takes the dispatcher.
template <typename = void>
inline bool fft_computes(ScalarType t) {
  return t != ScalarType::Half && t != ScalarType::BFloat16;
}

/// aten's promote_tensor_fft for the dtypes fft_computes takes: an integer
/// or bool input to the default dtype, and with `complex` a real one to its
/// complex dtype.
template <typename T>
inline T fft_promoted(const T& x, bool complex) {
  const ScalarType from = x.scalar_type();
  const int kind = position(from);
  if (is_complex(kind)) {
    return x;
  }
  ScalarType to_type = is_floating(kind) ? from : default_dtype();
  if (complex) {
    const bool single = to_type == ScalarType::Float;
    to_type = single ? ScalarType::ComplexFloat : ScalarType::ComplexDouble;
  }
  if (to_type == from) {
    return x;
  }
  return to(x, to_type);
}

/// aten's maybe_wrap_dim(dim, x.dim(), /*wrap_scalar=*/false).
template <typename = void>
inline int64_t fft_dim(const char* op, int64_t dim, int64_t rank) {
  if (rank == 0) {
    std::string text = "Dimension specified as " + std::to_string(dim);
    text += " but tensor has no dimensions";
    fft_fail(op, text);
  }
  if (dim < -rank || dim >= rank) {
    std::string text = "Dimension out of range (expected to be in range of [";
    text += std::to_string(-rank) + ", " + std::to_string(rank - 1);
    text += "], but got " + std::to_string(dim) + ")";
    fft_fail(op, text);
  }
  return dim < 0 ? dim + rank : dim;
}

/// aten's check of the number of data points.
template <typename = void>
inline void fft_points(const char* op, int64_t n) {
  if (n < 1) {
    std::string text = "Invalid number of data points (";
    text += std::to_string(n) + ") specified";
    fft_fail(op, text);
  }
}

/// aten's resize_fft_input for one dim: sliced to n, or zero-padded at its
/// end to n.
template <typename T>
inline T fft_resized(const T& x, int64_t dim, int64_t n) {
  const int64_t size = x.size(dim);
  if (size > n) {
    return slice(x, dim, int64_t{0}, n, int64_t{1});
  }
  if (size < n) {
    std::vector<int64_t> pad(static_cast<size_t>(2 * x.dim()), 0);
    pad[pad.size() - 2 * static_cast<size_t>(dim) - 1] = n - size;
    return constant_pad_nd(x, IntList(pad));
  }
  return x;
}

/// The one-dimensional fft of `x`: `transform` 0 complex to complex (or real
/// to complex for a real input), 1 real to complex, 2 complex to real, with
/// aten's `forward` and `onesided` for the op.
template <typename T>
inline T fft_norm_compute(
    const char* op,
    const T& self,
    std::optional<int64_t> n,
    int64_t dim,
    std::optional<std::string_view> norm,
    int transform,
    bool forward,
    bool onesided) {
  const bool complex_input = is_complex(position(self.scalar_type()));
  if (transform == 0 && !complex_input) {
    transform = 1;
  }
  if (transform == 0) {
    const int64_t d = fft_dim(op, dim, self.dim());
    fft_points(op, n.value_or(self.size(d)));
    const T x = n.has_value() ? fft_resized(self, d, *n) : self;
    const int64_t mode = fft_norm_mode(op, norm, forward);
    return _fft_c2c(x, IntList(d), mode, forward);
  }
  if (transform == 1) {
    if (complex_input) {
      std::string text = op;
      text += " expects a real input tensor";
      fft_fail(op, text);
    }
    const T promoted = fft_promoted(self, false);
    const int64_t d = fft_dim(op, dim, promoted.dim());
    fft_points(op, n.value_or(promoted.size(d)));
    const T x = n.has_value() ? fft_resized(promoted, d, *n) : promoted;
    const int64_t mode = fft_norm_mode(op, norm, forward);
    const T result = _fft_r2c(x, IntList(d), mode, onesided);
    if (forward) {
      return result;
    }
    return conj(result);
  }
  const T promoted = fft_promoted(self, true);
  const int64_t d = fft_dim(op, dim, promoted.dim());
  const int64_t points = n.value_or(2 * (promoted.size(d) - 1));
  fft_points(op, points);
  T x = promoted;
  if (n.has_value()) {
    x = fft_resized(promoted, d, points / 2 + 1);
  }
  const int64_t mode = fft_norm_mode(op, norm, forward);
  if (forward) {
    x = conj(x);
  }
  return _fft_c2r(x, IntList(d), mode, points);
}
