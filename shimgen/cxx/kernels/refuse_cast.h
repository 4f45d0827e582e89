// @needs compositions
// ---- row key `refuse_cast: true` (kernel `inplace`: _add_relu_.Tensor) ----

/// Where the result's dtype casts to self's (`target`) but is not it, aten
/// (add_relu_impl) writes it there and returns a temporary of the result's
/// dtype instead of self: refused. A result that does not cast is left to
/// aten's own error (assign_inplace).
template <typename = void>
inline void refuse_cast(
    const char* op,
    const torch::stable::Tensor& target,
    const torch::stable::Tensor& result) {
  const ScalarType from = result.scalar_type();
  const ScalarType to = target.scalar_type();
  if (from != to && can_cast(from, to)) {
    std::string why = "the result's dtype is not the output's, where aten ";
    why += "returns a temporary of the result's dtype instead of the output: ";
    why += "define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for ";
    why += "each torch release)";
    fail(op, why.c_str());
  }
}

