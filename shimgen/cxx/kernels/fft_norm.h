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

/// aten's resize_fft_input: each transformed dim sliced to its size, and
/// those shorter zero-padded at their end by one constant_pad_nd.
template <typename T>
inline T fftn_resized(
    const T& input,
    const std::vector<int64_t>& dims,
    const std::vector<int64_t>& sizes) {
  T x = input;
  bool padded = false;
  std::vector<int64_t> pad(static_cast<size_t>(2 * input.dim()), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t size = input.size(dims[i]);
    if (size < sizes[i]) {
      padded = true;
      pad[pad.size() - 2 * static_cast<size_t>(dims[i]) - 1] = sizes[i] - size;
    }
    if (size > sizes[i]) {
      x = slice(x, dims[i], int64_t{0}, sizes[i], int64_t{1});
    }
  }
  if (padded) {
    return constant_pad_nd(x, IntList(pad));
  }
  return x;
}

/// aten's resize_fft_input for one dim: sliced to n, or zero-padded at its
/// end to n.
template <typename T>
inline T fft_resized(const T& x, int64_t dim, int64_t n) {
  const std::vector<int64_t> dims{dim};
  const std::vector<int64_t> sizes{n};
  return fftn_resized(x, dims, sizes);
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

/// A list argument of the n-dimensional ops as aten reads it: an optional
/// list (s, fftn's dim; Opt: the wrapper's optional list type) as given, or
/// None.
template <typename Opt>
inline std::optional<std::vector<int64_t>> fftn_list(const Opt& list) {
  if (!list.has_value()) {
    return std::nullopt;
  }
  return std::vector<int64_t>(list->begin(), list->end());
}

/// A list argument of the n-dimensional ops that is never None (fft2's dim).
template <typename = void>
inline std::optional<std::vector<int64_t>> fftn_list(const IntList& list) {
  return std::vector<int64_t>(list.begin(), list.end());
}

/// aten's canonicalize_fft_shape_and_dim_args: the dims transformed, wrapped
/// and unique, and the signal's size in each (s's, -1 the input's; without
/// s the input's sizes in dim, or in every dim).
template <typename T>
inline void fftn_dims(
    const char* op,
    const T& x,
    const std::optional<std::vector<int64_t>>& s,
    const std::optional<std::vector<int64_t>>& dim,
    std::vector<int64_t>& dims,
    std::vector<int64_t>& shape) {
  const int64_t rank = x.dim();
  dims.clear();
  shape.clear();
  if (dim.has_value()) {
    for (const int64_t d : *dim) {
      dims.push_back(fft_dim(op, d, rank));
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (dims[i] == dims[j]) {
          fft_fail(op, "FFT dims must be unique");
        }
      }
    }
  }
  if (s.has_value()) {
    const int64_t given = static_cast<int64_t>(s->size());
    if (dim.has_value() && dim->size() != s->size()) {
      std::string text = "When given, dim and shape arguments must have the ";
      text += "same length";
      fft_fail(op, text);
    }
    if (given > rank) {
      std::string text = "Got shape with " + std::to_string(given);
      text += " values but input tensor only has " + std::to_string(rank);
      text += " dimensions.";
      fft_fail(op, text);
    }
    for (int64_t i = 0; !dim.has_value() && i < given; ++i) {
      dims.push_back(rank - given + i);
    }
    for (int64_t i = 0; i < given; ++i) {
      const int64_t n = (*s)[static_cast<size_t>(i)];
      shape.push_back(n == -1 ? x.size(dims[static_cast<size_t>(i)]) : n);
    }
  } else {
    for (int64_t d = 0; !dim.has_value() && d < rank; ++d) {
      dims.push_back(d);
    }
    for (const int64_t d : dims) {
      shape.push_back(x.size(d));
    }
  }
  for (const int64_t n : shape) {
    fft_points(op, n);
  }
}

/// The size of a complex-to-real transform's last dim (aten's
/// canonicalize_fft_c2r_shape_and_dim_args): s's last, or twice the input's
/// less one; the input's last dim is then resized to its half plus one.
template <typename T>
inline int64_t fftn_c2r_size(
    const char* op,
    const T& self,
    const std::optional<std::vector<int64_t>>& s,
    const std::vector<int64_t>& dims,
    std::vector<int64_t>& shape) {
  const bool given = s.has_value() && s->back() != -1;
  const int64_t last = given ? shape.back() : 2 * (self.size(dims.back()) - 1);
  fft_points(op, last);
  shape.back() = last / 2 + 1;
  return last;
}

/// The n-dimensional fft of `self` as aten computes it (fftn, rfftn, irfftn,
/// hfftn, ihfftn; the 2-D ops are these with their dims): `transform` 0
/// complex to complex (a real input promoted to complex), 1 real to complex
/// (onesided), 2 complex to real, 3 hfftn's (complex to complex over all but
/// the last dim, then its conjugate complex to real), 4 ihfftn's (real to
/// complex over the last dim, then the physical conjugate complex to complex
/// over the rest); `forward` aten's for the op.
template <typename T, typename S, typename D>
inline T fftn_norm_compute(
    const char* op,
    const T& self,
    const S& s_arg,
    const D& dim_arg,
    std::optional<std::string_view> norm,
    int transform,
    bool forward) {
  const std::optional<std::vector<int64_t>> s = fftn_list(s_arg);
  const bool complex_input = is_complex(position(self.scalar_type()));
  if (transform == 1 && complex_input) {
    std::string text = op;
    text += " expects a real-valued input tensor";
    fft_fail(op, text);
  }
  std::vector<int64_t> dims;
  std::vector<int64_t> shape;
  fftn_dims(op, self, s, fftn_list(dim_arg), dims, shape);
  if (transform != 0 && shape.empty()) {
    std::string text = op;
    text += " must transform at least one axis";
    fft_fail(op, text);
  }
  int64_t last = 0;
  if (transform == 2 || transform == 3) {
    last = fftn_c2r_size(op, self, s, dims, shape);
  }
  const bool complex = transform == 0 || transform == 2 || transform == 3;
  const T x = fftn_resized(fft_promoted(self, complex), dims, shape);
  const int64_t mode = fft_norm_mode(op, norm, forward);
  const IntList all(dims);
  if (transform == 0) {
    return _fft_c2c(x, all, mode, forward);
  }
  if (transform == 1) {
    return _fft_r2c(x, all, mode, true);
  }
  if (transform == 2) {
    return _fft_c2r(x, all, mode, last);
  }
  const IntList rest(dims.data(), dims.size() - 1);
  const IntList back(dims.back());
  if (transform == 3) {
    const T c2c = dims.size() > 1 ? _fft_c2c(x, rest, mode, true) : x;
    return _fft_c2r(conj(c2c), back, mode, last);
  }
  const T r2c = _fft_r2c(x, back, mode, true);
  if (dims.size() == 1) {
    return conj(r2c);
  }
  return _fft_c2c(conj_physical(r2c), rest, mode, false);
}
