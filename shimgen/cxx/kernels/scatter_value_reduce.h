// @needs compositions
// ---- kernel `scatter_value_reduce`: scatter's number with reduce "add" /
// "multiply" (scatter.value_reduce, scatter_.value_reduce,
// scatter.value_reduce_out; shimgen/generate/routes/composition.py) ----

/// The number as the `src` aten's scatter.reduce reads where its scalar
/// kernel reads the number: a 0-dim tensor of self's dtype expanded to
/// index's shape (its strides all 0: TensorIterator orders the loop as for no
/// src, so the reductions run in aten's order). A number that does not
/// convert exactly to self's dtype is refused, as is a self not on the CPU.
template <typename = void>
inline torch::stable::Tensor scatter_value_src(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& index,
    const Scalar& value) {
  if (!self.is_cpu()) {
    std::string why = "self is not on the CPU, where this composition is ";
    why += "proven only: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    fail(op, why.c_str());
  }
  const int t = position(self.scalar_type());
  if (t < 0 || !in_range(value, t)) {
    refuse(op, "value", value, "it does not convert exactly to self's dtype");
  }
  const torch::stable::Tensor number = number_tensor(value, self.scalar_type());
  return tensor_op("aten::expand_as", "", number, index);
}

