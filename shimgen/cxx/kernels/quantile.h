// @needs out_inplace
// ---- kernel `quantile`: quantile and nanquantile with an interpolation
// string as libtorch 2.9-2.13 compute them (Sorting.cpp,
// CompositeImplicitAutograd: quantile_checks, quantile_compute) ----
//
// On a running libtorch before 2.14 the wrapper makes aten's calls in aten's
// order: the checks, q's range on a CPU tensor, a sort of the input (flat, or
// with the reduced dimension last), ranks in the input's dtype (q times the
// last index, or the count of values that are not NaN), rounded as the
// interpolation asks, two gathers and a lerp. The string is compared here, so
// no `str` crosses the ABI. From 2.14 aten computes ranks in float64 and
// selects without sorting on CPU: the wrapper takes the dispatcher there
// (aten's own op). The calls name the wrappers unqualified on T
// (torch::stable::Tensor): argument-dependent lookup finds them where the
// wrapper instantiates the template (the row's `calls`).

/// aten's quantile error, its text with "(aten raises)", as a shimgen: error.
template <typename = void>
[[noreturn]] inline void quantile_fail(const char* op, std::string text) {
  text += " (aten raises)";
  fail(op, text.c_str());
}

/// aten's get_quantile_interpolation_mode: 0 linear, 1 lower, 2 higher,
/// 3 midpoint, 4 nearest.
template <typename = void>
inline int quantile_mode(const char* op, std::string_view interpolation) {
  if (interpolation == "linear") {
    return 0;
  }
  if (interpolation == "lower") {
    return 1;
  }
  if (interpolation == "higher") {
    return 2;
  }
  if (interpolation == "midpoint") {
    return 3;
  }
  if (interpolation == "nearest") {
    return 4;
  }
  std::string text = "quantile() interpolation must be one of linear, ";
  text += "lower, higher, midpoint or nearest, but got ";
  text += interpolation;
  quantile_fail(op, text);
}

/// aten's range check of a number q (the .scalar overloads), before
/// aten::scalar_tensor makes it a tensor of the input's dtype and device.
template <typename = void>
inline void quantile_number(const char* op, double q) {
  if (!(q >= 0 && q <= 1)) {
    char number[32];
    std::snprintf(number, sizeof(number), "%g", q);
    std::string text = "quantile() q must be in the range [0, 1] but got ";
    text += number;
    quantile_fail(op, text);
  }
}

/// aten's quantile_checks, in its order.
template <typename T>
inline void quantile_checks(const char* op, const T& self, const T& q) {
  if (self.numel() == 0) {
    quantile_fail(op, "quantile() input tensor must be non-empty");
  }
  if (q.dim() > 1) {
    quantile_fail(op, "quantile() q must be a scalar or 1D tensor");
  }
  const ScalarType t = self.scalar_type();
  if (t != ScalarType::Float && t != ScalarType::Double) {
    std::string text = "quantile() input tensor must be either float or ";
    text += "double dtype";
    quantile_fail(op, text);
  }
  if (q.scalar_type() != t) {
    std::string text = "quantile() q tensor must be same dtype as the ";
    text += "input tensor";
    quantile_fail(op, text);
  }
  if (!same_device(self, q)) {
    std::string text = "quantile() q tensor must be on the same device as ";
    text += "the input tensor";
    quantile_fail(op, text);
  }
}

/// aten's maybe_wrap_dim(dim.value_or(0), self.dim()): a 0-dim input takes
/// -1 and 0.
template <typename = void>
inline int64_t quantile_dim(const char* op, int64_t d, int64_t rank) {
  const int64_t n = rank > 0 ? rank : 1;
  if (d < -n || d >= n) {
    std::string text = "Dimension out of range (expected to be in range of [";
    text += std::to_string(-n) + ", " + std::to_string(n - 1);
    text += "], but got " + std::to_string(d) + ")";
    quantile_fail(op, text);
  }
  return d < 0 ? d + n : d;
}

/// aten's quantile_output_shape: q's size, then the input's sizes reduced.
template <typename T>
inline std::vector<int64_t> quantile_shape(
    const T& self,
    const T& q,
    std::optional<int64_t> dim,
    bool keepdim,
    int64_t wrapped) {
  std::vector<int64_t> shape;
  if (dim.has_value() && self.dim() > 0) {
    for (int64_t i = 0; i < self.dim(); ++i) {
      shape.push_back(self.size(i));
    }
    if (keepdim) {
      shape[static_cast<size_t>(wrapped)] = 1;
    } else {
      shape.erase(shape.begin() + wrapped);
    }
  } else if (keepdim) {
    shape.assign(static_cast<size_t>(self.dim()), 1);
  }
  if (q.dim() > 0) {
    shape.insert(shape.begin(), q.numel());
  }
  return shape;
}

/// The input sorted along the reduced dimension, which comes last, viewed as
/// the output's sizes (q's first) with the reduced size last.
template <typename T>
inline T quantile_sorted(
    const T& self,
    std::optional<int64_t> dim,
    int64_t wrapped,
    std::vector<int64_t> shape) {
  T moved = self;
  if (!dim.has_value()) {
    moved = flatten(self, 0, -1);
  } else if (wrapped != self.dim() - 1) {
    moved = transpose(unsqueeze(self, -1), wrapped, -1);
  }
  T sorted = std::get<0>(sort(moved, -1, false));
  const int64_t reduced = sorted.size(-1);
  shape.back() = reduced;
  return view(sorted, IntList(shape));
}

/// aten's ranks of q in each row of `sorted`, in q's dtype: q times the last
/// index (that index where the row holds a NaN), or for nanquantile q times
/// the count of values that are not NaN less one (0 where none is).
template <typename T>
inline T quantile_ranks(const T& sorted, const T& q, bool ignore_nan) {
  if (ignore_nan) {
    T valid = sum(logical_not_(isnan(sorted)), IntList(-1), true);
    T ranks = mul(q, sub(valid, Scalar(int64_t{1})));
    masked_fill_(ranks, lt(ranks, Scalar(int64_t{0})), Scalar(int64_t{0}));
    return ranks;
  }
  const int64_t last = sorted.size(-1) - 1;
  std::vector<T> pair;
  pair.push_back(mul(q, Scalar(last)));
  pair.push_back(any(isnan(sorted), int64_t{-1}, true));
  std::vector<T> wide = broadcast_tensors(
      torch::headeronly::HeaderOnlyArrayRef<T>(pair.data(), pair.size()));
  return masked_fill(wide[0], wide[1], Scalar(last));
}

/// aten's quantile_compute after quantile_checks: q's range on a CPU tensor,
/// the sort, the ranks rounded as `mode` asks, the gathers and the lerp, then
/// the quantiles moved first.
template <typename T>
inline T quantile_compute(
    const char* op,
    const T& self,
    const T& q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation,
    bool ignore_nan) {
  const int mode = quantile_mode(op, interpolation);
  quantile_checks(op, self, q);
  const int64_t wrapped = quantile_dim(op, dim.value_or(0), self.dim());
  std::vector<int64_t> shape = quantile_shape(self, q, dim, keepdim, wrapped);
  if (self.is_cpu()) {
    const T at_least = ge(q, Scalar(int64_t{0}));
    const T inside = logical_and_(at_least, le(q, Scalar(int64_t{1})));
    bool all_inside = false;
    check(aoti_torch_item_bool(all(inside).get(), &all_inside), "item_bool");
    if (!all_inside) {
      quantile_fail(op, "quantile() q values must be in the range [0, 1]");
    }
  }
  if (q.dim() == 0) {
    shape.insert(shape.begin(), q.numel());
  }
  std::vector<int64_t> rows(shape.begin() + 1, shape.end());
  rows.push_back(0);
  const T sorted = quantile_sorted(self, dim, wrapped, rows);
  if (sorted.size(-1) > (int64_t{1} << 24)) {
    quantile_fail(op, "quantile() input tensor is too large");
  }
  T ranks = quantile_ranks(sorted, q, ignore_nan);
  if (mode == 1) {
    floor_(ranks);
  } else if (mode == 2) {
    ceil_(ranks);
  } else if (mode == 4) {
    round_(ranks);
  }
  const T below = to(ranks, ScalarType::Long);
  T values = gather(sorted, -1, below);
  if (mode == 0 || mode == 3) {
    T weights = ranks;
    if (mode == 3) {
      weights = full_like(ranks, Scalar(0.5));
    } else {
      weights = sub(ranks, below);
    }
    const T above = to(ceil_(ranks), ScalarType::Long);
    lerp_(values, gather(sorted, -1, above), weights);
  }
  if (q.dim() == 0) {
    return squeeze_(values, -1);
  }
  return squeeze_(transpose_(unsqueeze_(values, 0), 0, -1), -1);
}
