//
// Opt-in helpers for porting an ATen extension to torch::stable (`shimgen port`
// names them): ATen's Tensor operators over torch::stable::Tensor, item<T>(),
// and the headeronly accessors. Include it where a ported file uses them:
//
//   #include <torch/csrc/stable/shimgen/operators.h>
//
// Each operator calls the aten op ATen's operator calls
// (ATen/TensorOperators.h, ATen/core/TensorBody.h) through the torch::stable
// wrappers, with their guarantees: `a - b` is torch::stable::sub(a, b), `x
// * 2.0` is torch::stable::mul(x, 2.0), `2.0 - x` is
// empty_like(x).fill_(2.0).sub_(x), `a += b` is add_(a, b). A wrapper is found
// where it is used (the op must be in [tool.shimgen] ops); an operator whose op
// is not generated stops the build with a static_assert naming the op to add.
//
// Kept as written (shimgen.generate.emit.fmt.UNFORMATTED).

#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/shimgen/scalar.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/TensorAccessor.h>
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Exception.h>
#include <torch/headeronly/util/Float8_e4m3fn.h>
#include <torch/headeronly/util/Float8_e4m3fnuz.h>
#include <torch/headeronly/util/Float8_e5m2.h>
#include <torch/headeronly/util/Float8_e5m2fnuz.h>
#include <torch/headeronly/util/Half.h>
#include <torch/headeronly/util/complex.h>

namespace shimgen::port_detail {

// A Tensor made a dependent expression, so that the wrapper an operator calls
// is looked up where the operator is used (argument-dependent lookup in
// torch::stable), not where this header is parsed.
template <typename Lazy>
inline const torch::stable::Tensor& lazy(const torch::stable::Tensor& t) {
  return t;
}

// a number an operator takes beside a Tensor: a C++ number, a Scalar, or a
// reduced floating type (a kernel's scalar_t: Half, BFloat16)
template <typename T>
inline constexpr bool number_v = std::is_arithmetic_v<T> ||
    std::is_same_v<T, shimgen::Scalar> || std::is_same_v<T, c10::Half> ||
    std::is_same_v<T, c10::BFloat16>;

template <typename>
inline constexpr bool missing = false;

} // namespace shimgen::port_detail

namespace shimgen {

// ATen's at::opmath_type<T> (ATen/OpMathType.h, not a stable header): the
// type a kernel computes a T in, float for the reduced floating types (Half,
// BFloat16, the Float8 types), complex<float> for complex<Half>, T otherwise
template <typename T>
struct OpMathType {
  using type = T;
};
template <>
struct OpMathType<c10::Half> {
  using type = float;
};
template <>
struct OpMathType<c10::BFloat16> {
  using type = float;
};
template <>
struct OpMathType<c10::Float8_e5m2> {
  using type = float;
};
template <>
struct OpMathType<c10::Float8_e4m3fn> {
  using type = float;
};
template <>
struct OpMathType<c10::Float8_e5m2fnuz> {
  using type = float;
};
template <>
struct OpMathType<c10::Float8_e4m3fnuz> {
  using type = float;
};
template <>
struct OpMathType<c10::complex<c10::Half>> {
  using type = c10::complex<float>;
};
template <typename T>
using opmath_type = typename OpMathType<T>::type;

} // namespace shimgen

// SHIMGEN_PORT_OP(op, name): a trait telling whether torch::stable::name is
// generated for these arguments, and the static_assert naming it.
#define SHIMGEN_PORT_HAS(NAME)                                         \
  namespace shimgen::port_detail {                                     \
  template <typename Lazy, typename A, typename B, typename = void>    \
  struct has2_##NAME : std::false_type {};                             \
  template <typename Lazy, typename A, typename B>                     \
  struct has2_##NAME<                                                  \
      Lazy,                                                            \
      A,                                                               \
      B,                                                               \
      std::void_t<decltype(NAME(                                       \
          lazy<Lazy>(std::declval<const torch::stable::Tensor&>()),    \
          std::declval<B>()))>> : std::true_type {};                   \
  template <typename Lazy, typename = void>                            \
  struct has1_##NAME : std::false_type {};                             \
  template <typename Lazy>                                             \
  struct has1_##NAME<                                                  \
      Lazy,                                                            \
      std::void_t<decltype(NAME(                                       \
          lazy<Lazy>(std::declval<const torch::stable::Tensor&>())))>> \
      : std::true_type {};                                             \
  }

#define SHIMGEN_PORT_NEEDS2(NAME, B)                                      \
  static_assert(                                                          \
      shimgen::port_detail::has2_##NAME<Lazy, torch::stable::Tensor, B>:: \
          value,                                                          \
      "this Tensor operator calls aten::" #NAME ": add \"" #NAME          \
      "\" to [tool.shimgen] ops")

#define SHIMGEN_PORT_NEEDS1(NAME)                                \
  static_assert(                                                 \
      shimgen::port_detail::has1_##NAME<Lazy>::value,            \
      "this Tensor operator calls aten::" #NAME ": add \"" #NAME \
      "\" to [tool.shimgen] ops")

SHIMGEN_PORT_HAS(add)
SHIMGEN_PORT_HAS(sub)
SHIMGEN_PORT_HAS(mul)
SHIMGEN_PORT_HAS(div)
SHIMGEN_PORT_HAS(remainder)
SHIMGEN_PORT_HAS(bitwise_and)
SHIMGEN_PORT_HAS(bitwise_or)
SHIMGEN_PORT_HAS(bitwise_xor)
SHIMGEN_PORT_HAS(lt)
SHIMGEN_PORT_HAS(le)
SHIMGEN_PORT_HAS(gt)
SHIMGEN_PORT_HAS(ge)
SHIMGEN_PORT_HAS(eq)
SHIMGEN_PORT_HAS(ne)
SHIMGEN_PORT_HAS(add_)
SHIMGEN_PORT_HAS(sub_)
SHIMGEN_PORT_HAS(mul_)
SHIMGEN_PORT_HAS(div_)
SHIMGEN_PORT_HAS(remainder_)
SHIMGEN_PORT_HAS(bitwise_and_)
SHIMGEN_PORT_HAS(bitwise_or_)
SHIMGEN_PORT_HAS(bitwise_xor_)
SHIMGEN_PORT_HAS(fill_)
SHIMGEN_PORT_HAS(empty_like)
SHIMGEN_PORT_HAS(neg)
SHIMGEN_PORT_HAS(bitwise_not)
SHIMGEN_PORT_HAS(item)
SHIMGEN_PORT_HAS(clone)

namespace torch::stable {

// Tensor op Tensor, Tensor op number: x.NAME(y).
#define SHIMGEN_PORT_BINARY_LEFT(OP, NAME)                                \
  template <typename Lazy = void>                                         \
  inline Tensor operator OP(const Tensor& x, const Tensor& y) {           \
    SHIMGEN_PORT_NEEDS2(NAME, const Tensor&);                             \
    return NAME(shimgen::port_detail::lazy<Lazy>(x), y);                  \
  }                                                                       \
  template <                                                              \
      typename N,                                                         \
      typename Lazy = void,                                               \
      std::enable_if_t<shimgen::port_detail::number_v<N>, int> = 0>       \
  inline Tensor operator OP(const Tensor& x, N y) {                       \
    SHIMGEN_PORT_NEEDS2(NAME, const shimgen::Scalar&);                    \
    return NAME(shimgen::port_detail::lazy<Lazy>(x), shimgen::Scalar(y)); \
  }

// ... and number op Tensor: y.REV(x).
#define SHIMGEN_PORT_BINARY(OP, NAME, REV)                               \
  SHIMGEN_PORT_BINARY_LEFT(OP, NAME)                                     \
  template <                                                             \
      typename N,                                                        \
      typename Lazy = void,                                              \
      std::enable_if_t<shimgen::port_detail::number_v<N>, int> = 0>      \
  inline Tensor operator OP(N x, const Tensor& y) {                      \
    SHIMGEN_PORT_NEEDS2(REV, const shimgen::Scalar&);                    \
    return REV(shimgen::port_detail::lazy<Lazy>(y), shimgen::Scalar(x)); \
  }

// ... and number op Tensor where the op has no reflected form:
// empty_like(y).fill_(x).NAME_(y), as ATen computes it.
#define SHIMGEN_PORT_BINARY_FILL(OP, NAME)                                \
  SHIMGEN_PORT_BINARY_LEFT(OP, NAME)                                      \
  template <                                                              \
      typename N,                                                         \
      typename Lazy = void,                                               \
      std::enable_if_t<shimgen::port_detail::number_v<N>, int> = 0>       \
  inline Tensor operator OP(N x, const Tensor& y) {                       \
    SHIMGEN_PORT_NEEDS1(empty_like);                                      \
    SHIMGEN_PORT_NEEDS2(fill_, const shimgen::Scalar&);                   \
    SHIMGEN_PORT_NEEDS2(NAME##_, const Tensor&);                          \
    Tensor out = empty_like(shimgen::port_detail::lazy<Lazy>(y));         \
    fill_(shimgen::port_detail::lazy<Lazy>(out), shimgen::Scalar(x));     \
    NAME##_(shimgen::port_detail::lazy<Lazy>(out), y);                    \
    return out;                                                           \
  }

// x OP= y: x.NAME_(y), returning x.
#define SHIMGEN_PORT_COMPOUND(OP, NAME, NUMBERS)                               \
  template <typename Lazy = void>                                              \
  inline Tensor& operator OP(Tensor& x, const Tensor& y) {                     \
    SHIMGEN_PORT_NEEDS2(NAME, const Tensor&);                                  \
    NAME(shimgen::port_detail::lazy<Lazy>(x), y);                              \
    return x;                                                                  \
  }                                                                            \
  template <                                                                   \
      typename N,                                                              \
      typename Lazy = void,                                                    \
      std::enable_if_t<NUMBERS && shimgen::port_detail::number_v<N>, int> = 0> \
  inline Tensor& operator OP(Tensor& x, N y) {                                 \
    SHIMGEN_PORT_NEEDS2(NAME, const shimgen::Scalar&);                         \
    NAME(shimgen::port_detail::lazy<Lazy>(x), shimgen::Scalar(y));             \
    return x;                                                                  \
  }

SHIMGEN_PORT_BINARY(+, add, add)
SHIMGEN_PORT_BINARY(*, mul, mul)
SHIMGEN_PORT_BINARY_FILL(-, sub)
SHIMGEN_PORT_BINARY_FILL(/, div)
SHIMGEN_PORT_BINARY_FILL(%, remainder)
SHIMGEN_PORT_BINARY(&, bitwise_and, bitwise_and)
SHIMGEN_PORT_BINARY(|, bitwise_or, bitwise_or)
SHIMGEN_PORT_BINARY(^, bitwise_xor, bitwise_xor)
SHIMGEN_PORT_BINARY(<, lt, gt)
SHIMGEN_PORT_BINARY(<=, le, ge)
SHIMGEN_PORT_BINARY(>, gt, lt)
SHIMGEN_PORT_BINARY(>=, ge, le)
SHIMGEN_PORT_BINARY(==, eq, eq)
SHIMGEN_PORT_BINARY(!=, ne, ne)
SHIMGEN_PORT_COMPOUND(+=, add_, true)
SHIMGEN_PORT_COMPOUND(-=, sub_, true)
SHIMGEN_PORT_COMPOUND(*=, mul_, true)
SHIMGEN_PORT_COMPOUND(/=, div_, true)
SHIMGEN_PORT_COMPOUND(&=, bitwise_and_, false)
SHIMGEN_PORT_COMPOUND(|=, bitwise_or_, false)
SHIMGEN_PORT_COMPOUND(^=, bitwise_xor_, false)

#undef SHIMGEN_PORT_BINARY_LEFT
#undef SHIMGEN_PORT_BINARY
#undef SHIMGEN_PORT_BINARY_FILL
#undef SHIMGEN_PORT_COMPOUND

template <typename Lazy = void>
inline Tensor operator-(const Tensor& x) {
  SHIMGEN_PORT_NEEDS1(neg);
  return neg(shimgen::port_detail::lazy<Lazy>(x));
}

template <typename Lazy = void>
inline Tensor operator~(const Tensor& x) {
  SHIMGEN_PORT_NEEDS1(bitwise_not);
  return bitwise_not(shimgen::port_detail::lazy<Lazy>(x));
}

} // namespace torch::stable

namespace shimgen {

/// ATen's t.item<T>(): the one element as T, refusing a value T cannot hold
/// (as c10::checked_convert does) rather than wrapping it.
template <typename T, typename Lazy = void>
inline T item(const torch::stable::Tensor& t) {
  SHIMGEN_PORT_NEEDS1(item);
  const shimgen::Scalar s = item(port_detail::lazy<Lazy>(t));
  if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    STD_TORCH_CHECK(
        !s.is_floating_point() && !s.is_complex(),
        "item<T>(): a floating value cannot be converted to an integer type");
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      return static_cast<T>(s.to_uint64());
    } else {
      const int64_t v = s.to_int64();
      STD_TORCH_CHECK(
          v >= static_cast<int64_t>(std::numeric_limits<T>::lowest()) &&
              v <= static_cast<int64_t>(std::numeric_limits<T>::max()),
          "value cannot be converted to the requested type without overflow: ",
          v);
      return static_cast<T>(v);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    const double v = s.to_double();
    if constexpr (sizeof(T) < sizeof(double)) {
      STD_TORCH_CHECK(
          !std::isfinite(v) ||
              std::fabs(v) <=
                  static_cast<double>(std::numeric_limits<T>::max()),
          "value cannot be converted to the requested type without overflow: ",
          v);
    }
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<float>(s.to_double()));
  }
}

/// ATen's torch::tensor({a, b, ...}) of integers: a one-dimensional CPU tensor
/// of int64, torch::tensor's dtype for integers (a copy: aten::clone). Other
/// lists have no stand-in here and stop the build: floating values
/// (torch::tensor gives them the default dtype, which the stable API does not
/// read) and bools.
template <typename T, typename Lazy = void>
inline torch::stable::Tensor tensor(std::initializer_list<T> values) {
  static_assert(
      std::is_integral_v<T> && !std::is_same_v<T, bool>,
      "shimgen::tensor: a braced list of integers (torch::tensor's int64); "
      "write another list with torch::stable::from_blob by hand");
  SHIMGEN_PORT_NEEDS1(clone);
  std::vector<int64_t> data(values.begin(), values.end());
  const int64_t n = static_cast<int64_t>(data.size());
  return clone(port_detail::lazy<Lazy>(torch::stable::from_blob(
      data.data(),
      {n},
      {1},
      torch::stable::Device(torch::headeronly::DeviceType::CPU),
      torch::headeronly::ScalarType::Long)));
}

/// ATen's at::PackedTensorAccessor32/64 and at::TensorAccessor, spelled over the
/// headeronly accessors (a kernel's parameter types).
template <
    typename T,
    size_t N,
    template <typename U> class PtrTraits = torch::headeronly::DefaultPtrTraits>
using PackedTensorAccessor32 = torch::headeronly::
    HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <
    typename T,
    size_t N,
    template <typename U> class PtrTraits = torch::headeronly::DefaultPtrTraits>
using PackedTensorAccessor64 = torch::headeronly::
    HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
template <typename T, size_t N>
using TensorAccessor = torch::headeronly::HeaderOnlyTensorAccessor<T, N>;

/// ATen's t.accessor<T, N>(): a headeronly TensorAccessor over t's data.
template <typename T, size_t N>
inline torch::headeronly::HeaderOnlyTensorAccessor<T, N> accessor(
    const torch::stable::Tensor& t) {
  STD_TORCH_CHECK(
      t.dim() == static_cast<int64_t>(N),
      "TensorAccessor expected ",
      N,
      " dims but tensor has ",
      t.dim());
  return torch::headeronly::HeaderOnlyTensorAccessor<T, N>(
      t.mutable_data_ptr<std::remove_const_t<T>>(),
      t.sizes().data(),
      t.strides().data());
}

/// ATen's t.packed_accessor64<T, N, PtrTraits>().
template <
    typename T,
    size_t N,
    template <typename U> class PtrTraits = torch::headeronly::DefaultPtrTraits>
inline torch::headeronly::
    HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int64_t>
    packed_accessor64(const torch::stable::Tensor& t) {
  STD_TORCH_CHECK(
      t.dim() == static_cast<int64_t>(N),
      "TensorAccessor expected ",
      N,
      " dims but tensor has ",
      t.dim());
  return torch::headeronly::
      HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int64_t>(
          static_cast<typename PtrTraits<T>::PtrType>(
              t.mutable_data_ptr<std::remove_const_t<T>>()),
          t.sizes().data(),
          t.strides().data());
}

/// ATen's t.packed_accessor32<T, N, PtrTraits>(): 32-bit indices, for tensors
/// of fewer than 2**31 elements (as ATen checks).
template <
    typename T,
    size_t N,
    template <typename U> class PtrTraits = torch::headeronly::DefaultPtrTraits>
inline torch::headeronly::
    HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int32_t>
    packed_accessor32(const torch::stable::Tensor& t) {
  STD_TORCH_CHECK(
      t.numel() <= static_cast<int64_t>(std::numeric_limits<int32_t>::max()),
      "numel needs to be smaller than 2**31 for 32-bit indexing");
  STD_TORCH_CHECK(
      t.dim() == static_cast<int64_t>(N),
      "TensorAccessor expected ",
      N,
      " dims but tensor has ",
      t.dim());
  return torch::headeronly::
      HeaderOnlyGenericPackedTensorAccessor<T, N, PtrTraits, int32_t>(
          static_cast<typename PtrTraits<T>::PtrType>(
              t.mutable_data_ptr<std::remove_const_t<T>>()),
          t.sizes().data(),
          t.strides().data());
}

} // namespace shimgen

#undef SHIMGEN_PORT_NEEDS1
#undef SHIMGEN_PORT_NEEDS2
#undef SHIMGEN_PORT_HAS
