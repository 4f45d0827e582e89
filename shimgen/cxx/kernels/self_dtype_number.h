// @needs out_inplace
// ---- kernel `self_dtype_number`: an in-place op whose number aten converts
// to self's dtype first (mul_), with the number as a 0-dim tensor of it ----

/// Does aten's in-place kernel read the number as self's dtype, where this
/// kernel computes the call? A bfloat16 or float16 CPU self (aten casts its
/// wrapped number to the common dtype, which is self's), a real number (a
/// complex one makes a complex result, which aten refuses to write into
/// self), in a call autograd does not record (aten's derivative multiplies
/// by the unrounded number).
template <typename = void>
inline bool self_dtype_number_computes(
    const torch::stable::Tensor& self,
    const Scalar& number) {
  const ScalarType t = self.scalar_type();
  if (!self.is_cpu() || (t != ScalarType::BFloat16 && t != ScalarType::Half)) {
    return false;
  }
  return !number.is_complex() && !records_grad({&self});
}
