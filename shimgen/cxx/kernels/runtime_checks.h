// @needs legacy_shims
// ---- kernels `assert_scalar` and `constrain_range`: torch.compile's runtime
// checks (_assert_scalar, sym_constrain_range and their _functional_ and
// _for_size forms) called eagerly with a concrete number: aten's checks, in
// its order and words, with no aten call but dependency token's clone ----

/// aten::clone(t): the dependency token a _functional_ form returns.
template <typename = void>
inline torch::stable::Tensor clone_token(const torch::stable::Tensor& t) {
  return dispatch_tensors<2>(
      "aten::clone",
      "",
      {torch::stable::detail::from(t), torch::stable::detail::from(std::nullopt)});
}

/// aten::_assert_scalar: raises `assert_msg` where the number is false (zero;
/// NaN is true, as its conversion to bool).
template <typename = void>
inline void assert_scalar_select(
    const char* op,
    const Scalar& self,
    std::string_view assert_msg) {
  if (!self.to_bool()) {
    fail(op, (std::string(assert_msg) + " (aten raises)").c_str());
  }
}

template <typename = void>
inline torch::stable::Tensor functional_assert_scalar_select(
    const char* op,
    const Scalar& self,
    std::string_view assert_msg,
    const torch::stable::Tensor& dep_token) {
  assert_scalar_select(op, self, assert_msg);
  return clone_token(dep_token);
}

/// aten::sym_constrain_range: size (as an int64) within [min, max], each
/// bound absent meaning int64's extreme. A floating-point, complex or
/// unsigned size is refused: aten converts it with checks of its own.
template <typename = void>
inline void constrain_range_select(
    const char* op,
    const Scalar& size,
    std::optional<int64_t> min,
    std::optional<int64_t> max) {
  if (size.kind() != Scalar::Kind::Int && size.kind() != Scalar::Kind::Bool) {
    std::string why = "a size that is not an integer or a bool: define ";
    why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
    why += "torch release)";
    fail(op, why.c_str());
  }
  const int64_t lo = min.value_or(std::numeric_limits<int64_t>::min());
  const int64_t hi = max.value_or(std::numeric_limits<int64_t>::max());
  const int64_t v = size.to_int64();
  if (hi < lo) {
    std::string why = "Max must be greater than or equal to min. Got min=";
    why += std::to_string(lo) + " max=" + std::to_string(hi) + " (aten raises)";
    fail(op, why.c_str());
  }
  if (v < lo || v > hi) {
    std::string why = "Invalid value range for " + std::to_string(v);
    why += " between [" + std::to_string(lo) + ", " + std::to_string(hi);
    why += "]. (aten raises)";
    fail(op, why.c_str());
  }
}

/// aten::sym_constrain_range_for_size: min defaults to 0, a max of 2 or less
/// raises, then sym_constrain_range.
template <typename = void>
inline void constrain_range_for_size_select(
    const char* op,
    const Scalar& size,
    std::optional<int64_t> min,
    std::optional<int64_t> max) {
  if (max.has_value() && *max <= 2) {
    std::string why = "Max value to constrain_range_for_size must be greater ";
    why += "than 2. got: " + std::to_string(*max) + " (aten raises)";
    fail(op, why.c_str());
  }
  constrain_range_select(op, size, min.value_or(0), max);
}

template <typename = void>
inline torch::stable::Tensor functional_constrain_range_select(
    const char* op,
    const Scalar& size,
    std::optional<int64_t> min,
    std::optional<int64_t> max,
    const torch::stable::Tensor& dep_token) {
  constrain_range_select(op, size, min, max);
  return clone_token(dep_token);
}

template <typename = void>
inline torch::stable::Tensor functional_constrain_range_for_size_select(
    const char* op,
    const Scalar& size,
    std::optional<int64_t> min,
    std::optional<int64_t> max,
    const torch::stable::Tensor& dep_token) {
  constrain_range_for_size_select(op, size, min, max);
  return clone_token(dep_token);
}

