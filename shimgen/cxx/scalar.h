//
// shimgen::Scalar, the number type of the generated torch::stable wrappers, and
// the run-time rules that pass it to aten without changing the answer
// (shimgen/facts/scalar_facts.py says which rule a wrapper uses).
//
// A Scalar keeps what the caller wrote: a bool, an integer, a floating-point
// or a complex number, like at::Scalar. It lives in namespace shimgen, not
// torch::stable, so that it can never collide with a Scalar PyTorch adds to
// the stable API later.
//
// The kernels' helpers are in torch/csrc/stable/shimgen/kernels/<section>.h,
// one per file of shimgen/cxx/kernels/, and each per-op header includes the
// sections its wrappers call (shimgen/generate/kernel_sections.py). A
// kernel section's functions are templates with one defaulted parameter
// (`template <typename = void>`), called as functions: a translation unit that
// includes a section parses them but instantiates only what its calls reach
// (the aggregate ops.h includes every section).

#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/c/shim.h>
#include <torch/csrc/stable/stableivalue_conversions.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/csrc/stable/version.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Half.h>
#include <torch/headeronly/util/complex.h>

// Hidden visibility for a type holding torch::stable::Tensor (declared hidden
// by HIDDEN_NAMESPACE_BEGIN): GCC warns when a type of default visibility has a
// field of a hidden type.
#if defined(__GNUG__) && !defined(_WIN32)
#define SHIMGEN_HIDDEN __attribute__((visibility("hidden")))
#else
#define SHIMGEN_HIDDEN
#endif

namespace shimgen {

/// A number where an aten schema says `Scalar`. Converts implicitly from
/// bool, the integer and floating-point types (c10::Half and c10::BFloat16
/// included) and std::complex / c10::complex, keeping the kind: `mul(t, 2)`
/// passes the integer 2, as `at::mul(t, 2)` does.
class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, UInt, Double, Complex };

  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  constexpr Scalar(T value) noexcept : kind_(Kind::Bool), i_(value ? 1 : 0) {}

  template <
      typename T,
      std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  constexpr Scalar(T value) noexcept : kind_(Kind::Int), i_(static_cast<int64_t>(value)) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      if (value > static_cast<T>(std::numeric_limits<int64_t>::max())) {
        kind_ = Kind::UInt; // as at::Scalar: above int64's range it is a uint64
        u_ = static_cast<uint64_t>(value);
      }
    }
  }

  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  constexpr Scalar(T value) noexcept : kind_(Kind::Double), d_(static_cast<double>(value)) {}

  Scalar(c10::Half value) noexcept : kind_(Kind::Double), d_(static_cast<float>(value)) {}
  Scalar(c10::BFloat16 value) noexcept : kind_(Kind::Double), d_(static_cast<float>(value)) {}

  template <typename T>
  constexpr Scalar(std::complex<T> value) noexcept
      : kind_(Kind::Complex), c_{static_cast<double>(value.real()), static_cast<double>(value.imag())} {}

  template <typename T>
  constexpr Scalar(c10::complex<T> value) noexcept
      : kind_(Kind::Complex), c_{static_cast<double>(value.real()), static_cast<double>(value.imag())} {}

  constexpr Kind kind() const noexcept {
    return kind_;
  }
  constexpr bool is_boolean() const noexcept {
    return kind_ == Kind::Bool;
  }
  /// An integer (not a bool).
  constexpr bool is_integral() const noexcept {
    return kind_ == Kind::Int || kind_ == Kind::UInt;
  }
  constexpr bool is_floating_point() const noexcept {
    return kind_ == Kind::Double;
  }
  constexpr bool is_complex() const noexcept {
    return kind_ == Kind::Complex;
  }

  constexpr bool to_bool() const noexcept {
    switch (kind_) {
      case Kind::Double:
        return d_ != 0;
      case Kind::Complex:
        return c_[0] != 0 || c_[1] != 0;
      case Kind::UInt:
        return u_ != 0;
      default:
        return i_ != 0;
    }
  }
  constexpr int64_t to_int64() const noexcept {
    switch (kind_) {
      case Kind::Double:
        return static_cast<int64_t>(d_);
      case Kind::Complex:
        return static_cast<int64_t>(c_[0]);
      case Kind::UInt:
        return static_cast<int64_t>(u_);
      default:
        return i_;
    }
  }
  constexpr uint64_t to_uint64() const noexcept {
    return kind_ == Kind::UInt ? u_ : static_cast<uint64_t>(to_int64());
  }
  constexpr double to_double() const noexcept {
    switch (kind_) {
      case Kind::Double:
        return d_;
      case Kind::Complex:
        return c_[0];
      case Kind::UInt:
        return static_cast<double>(u_);
      default:
        return static_cast<double>(i_);
    }
  }
  constexpr std::complex<double> to_complex() const noexcept {
    return kind_ == Kind::Complex ? std::complex<double>(c_[0], c_[1]) : std::complex<double>(to_double(), 0.0);
  }

  /// The value as the caller wrote it, for error messages: `3`, `true`, `0.5`.
  std::string repr() const {
    switch (kind_) {
      case Kind::Bool:
        return i_ ? "true" : "false";
      case Kind::Int:
        return std::to_string(i_);
      case Kind::UInt:
        return std::to_string(u_);
      case Kind::Double:
        return std::to_string(d_);
      default:
        return "(" + std::to_string(c_[0]) + ", " + std::to_string(c_[1]) + ")";
    }
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    uint64_t u_;
    double d_;
    double c_[2];
  };
};

namespace detail {

using torch::headeronly::ScalarType;
using IntList = torch::headeronly::IntHeaderOnlyArrayRef;

// @section core
// ---- type promotion (the table is torch.promote_types, from shimgen's data) --

// Positions in the promotion table; -1: no position (not a promotable dtype),
// kUndefined: no operand yet, kRefused: torch refuses to promote the pair.
constexpr int kUndefined = -1;
constexpr int kRefused = -2;
// @shimgen: promotion table (templates/scalar_table.h.j2, from data/scalar_facts.yaml)

inline int position(ScalarType t) {
  for (int k = 0; k < kDtypes; ++k) {
    if (kType[k] == t) {
      return k;
    }
  }
  return kRefused; // quantized, float8, ...: no promotion rule
}

inline int promote(int a, int b) {
  if (a == kRefused || b == kRefused) {
    return kRefused;
  }
  if (a == kUndefined) {
    return b;
  }
  if (b == kUndefined) {
    return a;
  }
  return kPromote[a][b];
}

inline bool is_complex(int t) {
  return t >= 0 && kCategory[t] == 3;
}
inline bool is_floating(int t) {
  return t >= 0 && kCategory[t] == 2;
}

inline int to_complex(int t) {
  switch (kType[t]) {
    case ScalarType::Half:
      return position(ScalarType::ComplexHalf);
    case ScalarType::Float:
      return position(ScalarType::ComplexFloat);
    case ScalarType::Double:
      return position(ScalarType::ComplexDouble);
    default:
      return kRefused;
  }
}

// ATen's combine_categories: how the wrapped numbers and 0-dim tensors (lower)
// join the dimensioned tensors (higher).
inline int combine_categories(int higher, int lower) {
  if (higher == kRefused || lower == kRefused) {
    return kRefused;
  }
  if (is_complex(higher)) {
    return higher;
  }
  if (is_complex(lower)) {
    return is_floating(higher) ? to_complex(higher) : lower;
  }
  if (is_floating(higher)) {
    return higher;
  }
  if ((higher >= 0 && kType[higher] == ScalarType::Bool) || is_floating(lower)) {
    return promote(higher, lower);
  }
  return higher != kUndefined ? higher : lower;
}

struct Operand {
  int dtype; // position
  bool zero_dim;
};

inline Operand operand(const torch::stable::Tensor& t) {
  return Operand{position(t.scalar_type()), t.dim() == 0};
}

// ATen's result_type over tensors and wrapped numbers (their dtypes given).
template <size_t N, size_t M>
int result_type(const std::array<Operand, N>& tensors, const std::array<int, M>& wrapped) {
  int dim = kUndefined;
  int zero = kUndefined;
  int numbers = kUndefined;
  for (const Operand& t : tensors) {
    (t.zero_dim ? zero : dim) = promote(t.zero_dim ? zero : dim, t.dtype);
  }
  for (int w : wrapped) {
    numbers = promote(numbers, w);
  }
  return combine_categories(dim, combine_categories(zero, numbers));
}

// The dtype a number has as a tensor of its own: what ATen wraps it in.
inline int natural_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return position(ScalarType::Bool);
    case Scalar::Kind::Int:
      return position(ScalarType::Long);
    case Scalar::Kind::UInt:
      return position(ScalarType::UInt64);
    case Scalar::Kind::Double:
      return position(ScalarType::Double);
    default:
      return position(ScalarType::ComplexDouble);
  }
}

inline void check(AOTITorchError err, const char* what) {
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(std::string("shimgen: ") + what + " failed");
  }
}

// libtorch's default floating-point dtype (torch.get_default_dtype()): the dtype
// of eye(0), whose dtype defaults to it. Asked for only when a floating-point or
// complex number meets tensors of a lower category.
inline ScalarType default_dtype() {
  std::array<StableIValue, 5> stack{
      torch::stable::detail::from(int64_t(0)),
      torch::stable::detail::from(std::nullopt),
      torch::stable::detail::from(std::nullopt),
      torch::stable::detail::from(std::nullopt),
      torch::stable::detail::from(std::nullopt)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(torch_call_dispatcher("aten::eye", "", stack.data(), TORCH_ABI_VERSION), "aten::eye");
#else
  check(aoti_torch_call_dispatcher("aten::eye", "", stack.data()), "aten::eye");
#endif
  return torch::stable::detail::to<torch::stable::Tensor>(stack[0]).scalar_type();
}

// An integer a double holds exactly (every bool and floating-point number is).
inline bool float_exact(const Scalar& s) {
  if (s.kind() == Scalar::Kind::UInt) {
    return s.to_uint64() <= (uint64_t(1) << 53);
  }
  if (s.kind() == Scalar::Kind::Int) {
    return s.to_int64() >= -(int64_t(1) << 53) && s.to_int64() <= (int64_t(1) << 53);
  }
  return true;
}

// The dtype ATen gives a wrapped number in type promotion: a floating-point one
// counts as the default dtype, a complex one as the default complex dtype.
inline int wrapped_dtype(const Scalar& s, std::optional<int>& default_float) {
  if (!s.is_floating_point() && !s.is_complex()) {
    return natural_dtype(s);
  }
  if (!default_float) {
    default_float = position(default_dtype());
  }
  return s.is_complex() ? to_complex(*default_float) : *default_float;
}

// Does the number survive conversion to dtype t and back? (A 0-dim tensor of t
// standing in for it must hold the very number aten computes with.)
inline bool converts_exactly(const Scalar& s, int t) {
  const double d = s.to_double();
  const bool whole = s.is_boolean() || s.is_integral() || (s.is_floating_point() && d == static_cast<int64_t>(d));
  switch (kType[t]) {
    case ScalarType::Bool:
      return s.is_boolean() || (whole && (d == 0 || d == 1));
    case ScalarType::Byte:
      return whole && s.kind() != Scalar::Kind::UInt && s.to_int64() >= 0 && s.to_int64() <= 255;
    case ScalarType::Char:
      return whole && s.kind() != Scalar::Kind::UInt && s.to_int64() >= -128 && s.to_int64() <= 127;
    case ScalarType::Short:
      return whole && s.kind() != Scalar::Kind::UInt && s.to_int64() >= -32768 && s.to_int64() <= 32767;
    case ScalarType::Int:
      return whole && s.kind() != Scalar::Kind::UInt && s.to_int64() >= std::numeric_limits<int32_t>::min() &&
          s.to_int64() <= std::numeric_limits<int32_t>::max();
    case ScalarType::Long:
      return (s.is_boolean() || s.kind() == Scalar::Kind::Int) ||
          (s.is_floating_point() && whole && d >= -9.2e18 && d <= 9.2e18);
    case ScalarType::Half:
      return !s.is_complex() &&
          static_cast<double>(static_cast<float>(c10::Half(static_cast<float>(d)))) == d && float_exact(s);
    case ScalarType::BFloat16:
      return !s.is_complex() &&
          static_cast<double>(static_cast<float>(c10::BFloat16(static_cast<float>(d)))) == d && float_exact(s);
    case ScalarType::Float:
      return !s.is_complex() && static_cast<double>(static_cast<float>(d)) == d && float_exact(s);
    case ScalarType::Double:
      return !s.is_complex() && float_exact(s);
    case ScalarType::ComplexFloat: {
      const std::complex<double> c = s.to_complex();
      return static_cast<double>(static_cast<float>(c.real())) == c.real() &&
          static_cast<double>(static_cast<float>(c.imag())) == c.imag() && float_exact(s);
    }
    case ScalarType::ComplexDouble:
      return float_exact(s);
    default:
      return false;
  }
}

// Is the number within dtype t's range: exactly representable in a bool or
// integer dtype, finite after rounding in a floating-point or complex one
// (ATen's overflow checks)? (scalars.in_range)
inline bool in_range(const Scalar& s, int t) {
  auto within = [](double v, double limit) { return std::isfinite(v) && std::fabs(v) <= limit; };
  const std::complex<double> c = s.to_complex();
  switch (kType[t]) {
    case ScalarType::Half:
      return !s.is_complex() && within(s.to_double(), 65504.0);
    case ScalarType::BFloat16:
    case ScalarType::Float:
      return !s.is_complex() && float_exact(s) && within(s.to_double(), std::numeric_limits<float>::max());
    case ScalarType::Double:
      return !s.is_complex() && float_exact(s) && within(s.to_double(), std::numeric_limits<double>::max());
    case ScalarType::ComplexHalf:
      return within(c.real(), 65504.0) && within(c.imag(), 65504.0);
    case ScalarType::ComplexFloat:
      return float_exact(s) && within(c.real(), std::numeric_limits<float>::max()) &&
          within(c.imag(), std::numeric_limits<float>::max());
    case ScalarType::ComplexDouble:
      return float_exact(s) && within(c.real(), std::numeric_limits<double>::max()) &&
          within(c.imag(), std::numeric_limits<double>::max());
    default:
      return converts_exactly(s, t);
  }
}

// May a 0-dim tensor of the result dtype t stand in for the number? ATen
// computes with the number in t itself, so rounding it there is what ATen
// does; a reduced-precision t (half, bfloat16) computes with it in float, so
// there it must convert exactly. (scalars.stands_in_exactly)
inline bool stands_in_exactly(const Scalar& s, int t) {
  switch (kType[t]) {
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::ComplexHalf:
      return converts_exactly(s, t);
    default:
      return in_range(s, t);
  }
}

[[noreturn]] inline void refuse(const char* op, const char* arg, const Scalar& s, const std::string& why) {
  throw std::runtime_error(
      std::string("shimgen: ") + op + ": " + arg + "=" + s.repr() + ": " + why);
}

[[noreturn]] inline void refuse(
    const char* op,
    const char* arg,
    const std::optional<Scalar>& s,
    const std::string& why) {
  refuse(op, arg, *s, why); // only called for a number that is there
}

[[noreturn]] inline void refuse(
    const char* op,
    const char* arg,
    const std::optional<std::string_view>& s,
    const std::string& why) {
  throw std::runtime_error(
      std::string("shimgen: ") + op + ": " + arg + "=\"" + std::string(*s) + "\": " + why);
}

/// The dtypes of the 0-dim tensors that stand in for `numbers` when `op`'s
/// Tensor overload is called instead of its Scalar one, so that type promotion
/// equals ATen's with the numbers as wrapped numbers: the numbers' own dtypes
/// (the tensors ATen itself would wrap) when that gives ATen's result dtype,
/// else the result dtype (if each number converts to it exactly); otherwise
/// the call raises.
// The class of the promoted tensor operands' dtype in a proven-cell mask
// (scalars.CLASSES): reduced-precision types compute with a wrapped number in a
// wider type, so they are proven apart.
inline int tensor_class(int t) {
  if (t < 0) {
    return -1;
  }
  switch (kType[t]) {
    case ScalarType::Bool:
      return 0;
    case ScalarType::Float:
    case ScalarType::Double:
      return 2;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return 3;
    case ScalarType::ComplexFloat:
    case ScalarType::ComplexDouble:
      return 4;
    case ScalarType::ComplexHalf:
      return 5;
    default:
      return 1;
  }
}

// The bit of a (tensor operands' class, number kind) cell (scalars.cell).
inline uint32_t cell(int tensor_class, const Scalar& s) {
  return tensor_class < 0 ? 0 : uint32_t(1) << (tensor_class * 5 + static_cast<int>(s.kind()));
}

template <size_t N, size_t M>
std::array<ScalarType, M> stand_in_dtypes(
    const char* op,
    uint32_t proven,
    uint32_t proven_if_fits,
    uint32_t proven_if_exact,
    const std::array<Operand, N>& tensors,
    const std::array<const Scalar*, M>& numbers,
    const std::array<const char*, M>& names) {
  std::optional<int> default_float;
  std::array<int, M> wrapped{};
  std::array<Operand, N + M> as_tensors{};
  for (size_t k = 0; k < N; ++k) {
    as_tensors[k] = tensors[k];
  }
  for (size_t k = 0; k < M; ++k) { // an absent (None) number takes no part
    wrapped[k] = numbers[k] ? wrapped_dtype(*numbers[k], default_float) : kUndefined;
    as_tensors[N + k] = Operand{numbers[k] ? natural_dtype(*numbers[k]) : kUndefined, true};
  }
  const int want = result_type(tensors, wrapped);
  int all = kUndefined;
  for (const Operand& t : tensors) {
    all = promote(all, t.dtype);
  }
  for (size_t k = 0; k < M; ++k) { // shimgen proved the Tensor overload equal only in these cells
    const uint32_t bit = numbers[k] ? cell(tensor_class(all), *numbers[k]) : 0;
    // proven for every number of the cell, for those within the result dtype's range, or for those the result
    // dtype holds exactly (the half types: whatever conversion the kernel makes, it reads the same value)
    const bool fits = (proven_if_fits & bit) && want >= 0 && in_range(*numbers[k], want);
    const bool exact = (proven_if_exact & bit) && want >= 0 && stands_in_exactly(*numbers[k], want);
    if (numbers[k] && !((proven & bit) || fits || exact)) {
      refuse(op, names[k], *numbers[k],
             "shimgen has not proven this op's Tensor overload equal to it for this number with tensors of "
             "these dtypes (the C shim's double would change it, the dispatcher cannot carry a Scalar)");
    }
  }
  std::array<ScalarType, M> result{};
  if (want >= 0 && result_type(as_tensors, std::array<int, 0>{}) == want) {
    for (size_t k = 0; k < M; ++k) {
      result[k] = numbers[k] ? kType[as_tensors[N + k].dtype] : ScalarType::Undefined;
    }
    return result;
  }
  for (size_t k = 0; k < M; ++k) {
    if (!numbers[k]) {
      continue;
    }
    if (want < 0) {
      refuse(op, names[k], *numbers[k], "no type promotion rule is known for these dtypes");
    }
    if (!stands_in_exactly(*numbers[k], want)) {
      refuse(op, names[k], *numbers[k],
             "this number does not fit the result dtype exactly, and a 0-dim tensor standing in for it (the "
             "dispatcher cannot carry a Scalar) would change it");
    }
    as_tensors[N + k] = Operand{want, true};
    result[k] = kType[want];
  }
  for (size_t k = 0; k < M; ++k) {
    if (numbers[k] && result_type(as_tensors, std::array<int, 0>{}) != want) {
      refuse(op, names[k], *numbers[k], "no 0-dim tensor reproduces aten's type promotion for this number");
    }
  }
  return result;
}

/// Is any of these tensors floating point or complex, so that the common
/// dtype of a call on them is? (Where it is, an integer travels as a double
/// without changing aten's answer for the ops shimgen has proven so, a Scalar
/// being converted to the common dtype: scalars.Facts.int_as_double.)
template <size_t N>
bool any_floating(const std::array<const torch::stable::Tensor*, N>& tensors) {
  for (const torch::stable::Tensor* t : tensors) {
    if (t != nullptr) {
      int p = position(t->scalar_type());
      if (is_floating(p) || is_complex(p)) {
        return true;
      }
    }
  }
  return false;
}

/// Is any of these tensors of dtype `t`? (An equivalent route refuses the
/// dtypes its C shim's op rejects where the op itself takes them:
/// scalars.Facts.equivalents `refuse_dtypes`.)
template <size_t N>
bool any_is(ScalarType t, std::array<const torch::stable::Tensor*, N> ts) {
  for (const torch::stable::Tensor* x : ts) {
    if (x != nullptr && x->scalar_type() == t) {
      return true;
    }
  }
  return false;
}

/// Is every tensor's dtype in `set` (bit i: ScalarType i)? A number rule's
/// tensor condition (emit_cpp._number_rules).
template <size_t N>
bool dtypes_in(uint64_t set, std::array<const torch::stable::Tensor*, N> ts) {
  for (const torch::stable::Tensor* x : ts) {
    if (((set >> static_cast<int>(x->scalar_type())) & 1) == 0) {
      return false;
    }
  }
  return true;
}

/// Is the number the integer `v`, given as an integer?
inline bool is_int(const Scalar& s, int64_t v) {
  return s.is_integral() && s.to_int64() == v;
}

/// Is the number an integer (any, not a bool), given as one?
inline bool is_integer(const Scalar& s) {
  return s.is_integral();
}

/// Is the number `v`, given as a floating-point number?
inline bool is_double(const Scalar& s, double v) {
  return s.is_floating_point() && s.to_double() == v;
}

/// An integer a double holds exactly (|v| <= 2^53).
inline bool fits_double(const Scalar& s) {
  constexpr int64_t limit = int64_t(1) << 53;
  return s.kind() == Scalar::Kind::Int && s.to_int64() >= -limit && s.to_int64() <= limit;
}

/// The number a Tensor -> Scalar op (item, _local_scalar_dense) returned through
/// the C shim's double, with the kind aten gives it (that of self's dtype);
/// raises where the double cannot have held the value exactly.
inline Scalar scalar_like(const torch::stable::Tensor& self, double value) {
  const int t = position(self.scalar_type());
  const int category = t >= 0 ? kCategory[t] : 2;
  if (category == 0) {
    return Scalar(value != 0);
  }
  if (category == 1) {
    if (value >= -9007199254740992.0 && value <= 9007199254740992.0) {
      return Scalar(static_cast<int64_t>(value));
    }
    refuse("item", "result", Scalar(value), "an integer beyond 2^53 does not survive the C shim's double");
  }
  if (category == 3) {
    refuse("item", "result", Scalar(value), "the C shim's double drops a complex number's imaginary part");
  }
  return Scalar(value);
}

/// The dtype of the tensor ATen wraps a number in (int64, float64, bool, ...).
inline ScalarType natural_type(const Scalar& s) {
  return kType[natural_dtype(s)];
}

/// The dtype `full` infers from its fill value when none is given (None: the
/// default dtype, which `empty` applies by itself).
inline std::optional<ScalarType> full_dtype(const Scalar& s) {
  if (s.is_floating_point()) {
    return std::nullopt;
  }
  if (s.is_complex()) {
    return kType[to_complex(position(default_dtype()))];
  }
  return s.is_boolean() ? ScalarType::Bool : ScalarType::Long;
}

/// A 0-dim CPU tensor of dtype `t` holding the number (created by libtorch's
/// C shims; a CPU scalar tensor combines with tensors on any device).
inline torch::stable::Tensor number_tensor(const Scalar& s, ScalarType t) {
  AtenTensorHandle h = nullptr;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  switch (t) {
    case ScalarType::Bool:
      err = aoti_torch_scalar_to_tensor_bool(s.to_bool(), &h);
      break;
    case ScalarType::Byte:
      err = aoti_torch_scalar_to_tensor_uint8(static_cast<uint8_t>(s.to_int64()), &h);
      break;
    case ScalarType::Char:
      err = aoti_torch_scalar_to_tensor_int8(static_cast<int8_t>(s.to_int64()), &h);
      break;
    case ScalarType::Short:
      err = aoti_torch_scalar_to_tensor_int16(static_cast<int16_t>(s.to_int64()), &h);
      break;
    case ScalarType::Int:
      err = aoti_torch_scalar_to_tensor_int32(static_cast<int32_t>(s.to_int64()), &h);
      break;
    case ScalarType::Long:
      err = aoti_torch_scalar_to_tensor_int64(s.to_int64(), &h);
      break;
    case ScalarType::UInt16:
      err = aoti_torch_scalar_to_tensor_uint16(static_cast<uint16_t>(s.to_uint64()), &h);
      break;
    case ScalarType::UInt32:
      err = aoti_torch_scalar_to_tensor_uint32(static_cast<uint32_t>(s.to_uint64()), &h);
      break;
    case ScalarType::UInt64:
      err = aoti_torch_scalar_to_tensor_uint64(s.to_uint64(), &h);
      break;
    case ScalarType::Float:
      err = aoti_torch_scalar_to_tensor_float32(static_cast<float>(s.to_double()), &h);
      break;
    case ScalarType::Double:
      err = aoti_torch_scalar_to_tensor_float64(s.to_double(), &h);
      break;
    case ScalarType::ComplexFloat: {
      std::complex<double> c = s.to_complex();
      err = aoti_torch_scalar_to_tensor_complex64(
          c10::complex<float>(static_cast<float>(c.real()), static_cast<float>(c.imag())), &h);
      break;
    }
    case ScalarType::ComplexDouble: {
      std::complex<double> c = s.to_complex();
      err = aoti_torch_scalar_to_tensor_complex128(c10::complex<double>(c.real(), c.imag()), &h);
      break;
    }
    case ScalarType::Half:
    case ScalarType::BFloat16: {
      // No C shim makes these: a float32 0-dim tensor converted by aten (the
      // number converts exactly: stand_in_dtypes checked it).
      torch::stable::Tensor f = number_tensor(s, ScalarType::Float);
      std::array<StableIValue, 7> stack{
          torch::stable::detail::from(f),
          torch::stable::detail::from(std::optional<ScalarType>(t)),
          torch::stable::detail::from(std::nullopt),
          torch::stable::detail::from(std::nullopt),
          torch::stable::detail::from(std::nullopt),
          torch::stable::detail::from(false),
          torch::stable::detail::from(std::nullopt)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
      check(torch_call_dispatcher("aten::_to_copy", "", stack.data(), TORCH_ABI_VERSION), "aten::_to_copy");
#else
      check(aoti_torch_call_dispatcher("aten::_to_copy", "", stack.data()), "aten::_to_copy");
#endif
      return torch::stable::detail::to<torch::stable::Tensor>(stack[0]);
    }
    default:
      throw std::runtime_error("shimgen: no 0-dim tensor of this dtype can hold a number");
  }
  check(err, "aoti_torch_scalar_to_tensor");
  return torch::stable::Tensor(h);
}

/// The 0-dim tensor for an optional number (None stays None).
inline std::optional<torch::stable::Tensor> number_tensor(
    const std::optional<Scalar>& s,
    ScalarType t) {
  if (!s.has_value()) {
    return std::nullopt;
  }
  return number_tensor(*s, t);
}

/// A 0-dim number tensor `n` (made on the CPU by number_tensor) where an op
/// that checks its operands' devices reads it: `n` itself where `like` is on
/// the CPU (no cost beyond a device query), else a 0-dim tensor of n's dtype
/// on like's device, filled from `n` by aten::fill_.Tensor (which reads a CPU
/// value with .item() and launches one fill kernel on the current stream: no
/// copy that waits for the device). The value is n's, already in its dtype, so
/// no second rounding happens on the device. An op that checks devices is one
/// whose CUDA kernel libtorch registers with `device_check: ExactSame`
/// (shimgen/facts/device_checks.py); a TensorIterator op (`NoCheck`) takes the CPU
/// tensor as aten's own wrapped number, at no cost.
/// SHIMGEN_TEST_NUMBERS_ON_DEVICE takes the device path on the CPU too (the
/// CPU tests of the device rule).
inline torch::stable::Tensor on_device_of(
    const torch::stable::Tensor& n,
    const torch::stable::Tensor& like) {
  int32_t device_type = 0;
  check(
      aoti_torch_get_device_type(like.get(), &device_type), "get_device_type");
#ifndef SHIMGEN_TEST_NUMBERS_ON_DEVICE
  if (device_type == aoti_torch_device_type_cpu()) {
    return n;
  }
#endif
  int32_t device_index = 0;
  int32_t dtype = 0;
  check(
      aoti_torch_get_device_index(like.get(), &device_index),
      "get_device_index");
  check(aoti_torch_get_dtype(n.get(), &dtype), "aoti_torch_get_dtype");
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          0, nullptr, nullptr, dtype, device_type, device_index, &h),
      "aoti_torch_empty_strided");
  std::array<StableIValue, 2> stack{};
  stack[0] = torch::stable::detail::from(torch::stable::Tensor(h));
  stack[1] = torch::stable::detail::from(n);
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher(
          "aten::fill_", "Tensor", stack.data(), TORCH_ABI_VERSION),
      "aten::fill_");
#else
  check(
      aoti_torch_call_dispatcher("aten::fill_", "Tensor", stack.data()),
      "aten::fill_");
#endif
  return torch::stable::detail::to<torch::stable::Tensor>(stack[0]);
}

/// number_tensor(s, t) on like's device (on_device_of): for an op that checks
/// its operands' devices.
inline torch::stable::Tensor number_tensor_on(
    const Scalar& s,
    ScalarType t,
    const torch::stable::Tensor& like) {
  return on_device_of(number_tensor(s, t), like);
}

/// The same for an optional number (None stays None).
inline std::optional<torch::stable::Tensor> number_tensor_on(
    const std::optional<Scalar>& s,
    ScalarType t,
    const torch::stable::Tensor& like) {
  if (!s.has_value()) {
    return std::nullopt;
  }
  return on_device_of(number_tensor(*s, t), like);
}

/// aten's error text for the call that just failed in this thread, where the
/// runtime's libtorch exports torch_exception_get_what_without_backtrace (2.13
/// on); else nullptr. A build targeting 2.13 or later calls it directly; an
/// older target looks it up at run time (dlsym, once), so that it loads on
/// every runtime it targets and still reports aten's text on one that has it.
inline const char* libtorch_error_text() {
#if defined(TORCH_VERSION_2_13_0)
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_13_0
#define SHIMGEN_ERROR_TEXT_DIRECT 1
#endif
#endif
#if defined(SHIMGEN_ERROR_TEXT_DIRECT)
  return torch_exception_get_what_without_backtrace();
#elif !defined(_WIN32)
  using Getter = const char* (*)();
  static const Getter getter = reinterpret_cast<Getter>(
      dlsym(RTLD_DEFAULT, "torch_exception_get_what_without_backtrace"));
  return getter != nullptr ? getter() : nullptr;
#else
  return nullptr;
#endif
}

/// libtorch's message for the call that just failed (aten's own error text
/// where the runtime hands it over: libtorch_error_text; before 2.13,
/// libtorch logged it on stderr).
inline std::string failure_reason() {
  const char* text = libtorch_error_text();
  return text != nullptr ? text : "libtorch logged the reason on stderr";
}

/// A call a route cannot make as aten would: `shimgen: <op>: <why>`.
[[noreturn]] inline void fail(const char* op, const char* why) {
  throw std::runtime_error(std::string("shimgen: ") + op + ": " + why);
}

} // namespace detail
} // namespace shimgen
