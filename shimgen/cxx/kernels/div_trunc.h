// ---- row key `composed: {trunc: div_trunc}` (kernel `str_value`: div.Tensor_mode, divide.Tensor_mode) ----

/// How div(a, b, "trunc") is composed on these operands, by aten's CPU kernel
/// (div_trunc_kernel) for their result dtype: 1 for an integral one (C++'s
/// truncating a / b: (a - fmod(a, b)) divides b exactly, so floor_divide of it
/// is that quotient), 2 for float, double and complex (trunc(a / b), both
/// rounded once in the dtype; aten raises for complex, as trunc does) and for
/// bfloat16 and half where b has several elements (aten's loop rounds a / b to
/// the dtype, then truncates), 3 for bfloat16 and half where b has one element
/// (aten's loop over a scalar b computes trunc(float(a) / b) in float, b's
/// original value as a float, and rounds once), 0 where it is not composed:
/// another device (a CUDA kernel may multiply by b's reciprocal), bool (aten
/// raises), other dtypes.
template <typename = void>
inline int div_trunc_case(
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& other) {
  if (!self.is_cpu() || !other.is_cpu()) {
    return 0;
  }
  const int t = result_type(
      std::array<Operand, 2>{operand(self), operand(other)},
      std::array<int, 0>{});
  if (t < 0) {
    return 0;
  }
  switch (kType[t]) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      return 1;
    case ScalarType::BFloat16:
    case ScalarType::Half:
      return other.numel() == 1 ? 3 : 2;
    default:
      return is_floating(t) || is_complex(t) ? 2 : 0;
  }
}

/// The result dtype of div(a, b) (div_trunc_case took it: it has one).
template <typename = void>
inline ScalarType div_trunc_dtype(
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& other) {
  const int t = result_type(
      std::array<Operand, 2>{operand(self), operand(other)},
      std::array<int, 0>{});
  return kType[t];
}
