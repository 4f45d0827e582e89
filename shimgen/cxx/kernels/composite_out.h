// @needs legacy_shims compositions out_inplace
// ---- row key `composite: true` of kernel `out` (linalg_matrix_norm.out):
// aten's out= overload of a CompositeImplicitAutograd op, which is the
// functional, a dtype check, at::native::resize_output and copy_
// (shimgen/generate/routes/composition.py) ----

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0

/// aten's checkSameDevice(self, out), before it computes anything.
template <typename = void>
inline void check_out_device(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& out) {
  if (!same_device(self, out)) {
    fail(op, "out is on another device than the input (aten raises)");
  }
}

/// Refuses out sharing memory with an input (quantile's out= rows): aten's
/// out= resizes out before it computes (quantile_out_impl), so it reads an
/// input out aliases after the resize, which this composition (the
/// functional, then copy_) cannot follow.
template <typename = void>
inline void refuse_aliased_out(
    const char* op,
    const torch::stable::Tensor& out,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  for (const torch::stable::Tensor* input : inputs) {
    if (overlaps(out, *input)) {
      std::string why = "out shares memory with an input, which aten resizes ";
      why += "before it computes: this composition (the op out of place, ";
      why += "then copy_) cannot compute it as aten does: pass a copy, or ";
      why += "define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt ";
      why += "for each torch release)";
      fail(op, why.c_str());
    }
  }
}

/// The rest of aten's out= of a CompositeImplicitAutograd op, around the
/// functional's `result`: its dtype must be out's; out is resized to its
/// sizes as at::native::resize_output resizes it (aten's warning on a
/// non-empty out, a new contiguous tensor's strides: aten::where.self_out of
/// a detached contiguous copy, TensorIterator's resize_output), then
/// aten::copy_, which autograd records as it records aten's. A resize of an
/// out that autograd records is refused (aten resizes it below autograd).
template <typename = void>
inline void assign_composite_out(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result) {
  if (result.scalar_type() != out.scalar_type()) {
    fail(op, "expected out tensor dtype to be the result's (aten raises)");
  }
  if (!same_sizes(out, result)) {
    if (records_grad({&out})) {
      std::string why = "resizing an out that requires grad in grad mode, ";
      why += "which aten does below autograd: define SHIMGEN_OVERLAY and ";
      why += "link libshimgen_overlay (rebuilt for each torch release)";
      fail(op, why.c_str());
    }
    using torch::headeronly::MemoryFormat;
    const std::optional<MemoryFormat> layout = MemoryFormat::Contiguous;
    const torch::stable::Tensor value = dispatch_tensors<2>(
        "aten::clone",
        "",
        {torch::stable::detail::from(detached(result)),
         torch::stable::detail::from(layout)});
    write_resized(out, value);
  }
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(result),
       torch::stable::detail::from(false)});
}

#endif // TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0

