// ---- row key `composed: {trunc: div_trunc}` (kernel `str_value`: div.Tensor_mode, divide.Tensor_mode) ----

/// How div(a, b, "trunc") is composed on these operands, by aten's CPU kernel
/// (div_trunc_kernel) for their result dtype: 1 for an integral one (C++'s
/// truncating a / b: (a - fmod(a, b)) divides b exactly, so floor_divide of it
/// is that quotient), 2 for float, double and complex (trunc(a / b), both
/// rounded once in the dtype; aten raises for complex, as trunc does), 0 where
/// it is not composed: another device (a CUDA kernel may multiply by b's
/// reciprocal), bfloat16 and half (aten's vectorized loop rounds a / b to the
/// dtype before trunc, its loop over a 0-dim b does not), bool (aten raises),
/// other dtypes.
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
      return 0;
    default:
      return is_floating(t) || is_complex(t) ? 2 : 0;
  }
}
