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
// The kernels' helpers are in torch/csrc/stable/shimgen/kernels/<section>.h:
// shimgen/cxx/scalar.h marks each `// ---- ` section with a
// `// @section <name> [needs <section>...]` line, and each per-op header
// includes the sections its wrappers call (shimgen/generate/kernel_sections.py). A
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

// @section legacy_shims
// ---- libtorch's legacy C shims (shimgen/generate/routes/legacy_shim.py) ----
//
// shim.h's older AOTInductor shims (aoti_torch_addmm_out, ...) call
// at::<op>_out through the dispatcher and carry a Scalar as a `float`.

/// Does a `float` hold the number exactly? (A bool or complex number never
/// crosses as one.)
template <typename = void>
inline bool fits_float(const Scalar& s) {
  if (s.is_floating_point()) {
    const double d = s.to_double();
    return static_cast<double>(static_cast<float>(d)) == d;
  }
  if (s.kind() != Scalar::Kind::Int) {
    return false;
  }
  const int64_t v = s.to_int64();
  constexpr int64_t limit = int64_t(1) << 53;
  if (v < -limit || v > limit) {
    return false;
  }
  return static_cast<int64_t>(static_cast<float>(v)) == v;
}

/// Does a legacy shim's float carry `s` exactly for tensor `t`? `cells` is
/// the proven (tensor category, number kind) mask of data/legacy_shims.yaml:
/// bit 4 * category + kind, category 0 bool, 1 integral, 2 floating,
/// 3 complex; kind 1 integer, 2 floating-point.
template <typename = void>
inline bool float_carries(
    const Scalar& s,
    const torch::stable::Tensor& t,
    uint32_t cells) {
  if (!fits_float(s)) {
    return false;
  }
  const int p = position(t.scalar_type());
  int category = 1;
  if (is_complex(p)) {
    category = 3;
  } else if (is_floating(p)) {
    category = 2;
  } else if (t.scalar_type() == ScalarType::Bool) {
    category = 0;
  }
  const int kind = s.is_floating_point() ? 2 : 1;
  return (cells >> (4 * category + kind)) & 1u;
}

/// An empty 0x0 tensor of `like`'s dtype and device.
template <typename = void>
inline torch::stable::Tensor empty_0x0(const torch::stable::Tensor& like) {
  int32_t dtype = 0;
  int32_t device_type = 0;
  int32_t device_index = 0;
  AtenTensorHandle h = like.get();
  check(aoti_torch_get_dtype(h, &dtype), "aoti_torch_get_dtype");
  check(aoti_torch_get_device_type(h, &device_type), "get_device_type");
  check(aoti_torch_get_device_index(h, &device_index), "get_device_index");
  const std::array<int64_t, 2> sizes{0, 0};
  const std::array<int64_t, 2> strides{1, 1};
  AtenTensorHandle out = nullptr;
  check(
      aoti_torch_empty_strided(
          2,
          sizes.data(),
          strides.data(),
          dtype,
          device_type,
          device_index,
          &out),
      "aoti_torch_empty_strided");
  return torch::stable::Tensor(out);
}

/// aten::`op` through the boxed dispatcher, its stack given; a failure raises
/// aten's own error where libtorch hands it over (2.13+), as SHIMGEN_CHECK.
template <size_t N>
inline torch::stable::Tensor dispatch_tensors(
    const char* op,
    const char* overload,
    std::array<StableIValue, N> stack) {
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  const AOTITorchError err =
      torch_call_dispatcher(op, overload, stack.data(), TORCH_ABI_VERSION);
#else
  const AOTITorchError err =
      aoti_torch_call_dispatcher(op, overload, stack.data());
#endif
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
  return torch::stable::detail::to<torch::stable::Tensor>(stack[0]);
}

/// The result of dispatching aten::`op` on empty 0x0 tensors of `a`'s and
/// `b`'s dtype and device: a tensor of the dtype and device aten's dispatch
/// gives that op (autocast included) for those inputs.
template <typename = void>
inline torch::stable::Tensor dispatch_probe(
    const char* op,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<2>(
      op,
      "",
      {torch::stable::detail::from(empty_0x0(a)),
       torch::stable::detail::from(empty_0x0(b))});
}

/// `t` as autocast hands it to an op whose result aten's dispatch gives in
/// dtype `out` (dispatch_probe): autocast's lower-precision policy
/// (cached_cast) casts a floating-point operand on the autocast device that
/// is not float64 to that dtype (aten::_to_copy, as its .to() does), and
/// leaves every other one alone. Where `out` is t's own dtype (no autocast),
/// `t` itself.
template <typename = void>
inline torch::stable::Tensor autocast_like(
    const torch::stable::Tensor& t,
    const torch::stable::Tensor& out) {
  const ScalarType from = t.scalar_type();
  const ScalarType to = out.scalar_type();
  if (from == to || from == ScalarType::Double) {
    return t;
  }
  if (!is_floating(position(from))) {
    return t;
  }
  int32_t t_device = 0;
  int32_t out_device = 0;
  check(aoti_torch_get_device_type(t.get(), &t_device), "get_device_type");
  check(aoti_torch_get_device_type(out.get(), &out_device), "get_device_type");
  if (t_device != out_device) {
    return t;
  }
  return dispatch_tensors<7>(
      "aten::_to_copy",
      "",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(std::optional<ScalarType>(to)),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(false),
       torch::stable::detail::from(std::nullopt)});
}

/// A legacy shim call that failed: aten's reason (libtorch's message from
/// 2.13; before, libtorch logged it on stderr), and the remedy where autograd
/// refused the out= call.
template <typename = void>
[[noreturn]] inline void legacy_failed(const char* op, const char* function) {
  std::string reason = failure_reason();
  if (aoti_torch_grad_mode_is_enabled()) {
    reason += " (shimgen: ";
    reason += op;
    reason += " went through libtorch's out= shim ";
    reason += function;
    reason += ", which autograd refuses where an input requires grad in ";
    reason += "grad mode: call it with grad mode off (as a custom op's ";
    reason += "forward under torch.library.register_autograd runs), or ";
    reason += "define SHIMGEN_OVERLAY and link libshimgen_overlay, rebuilt ";
    reason += "for each torch release)";
  }
  throw std::runtime_error(reason);
}

// @section compositions needs legacy_shims
// ---- Kernel compositions (shimgen/generate/routes/composition.py) ----
//
// An aten kernel written as the dispatching aten calls that compute what it
// computes (data/scalar_facts.yaml `kernel_compositions`, each proven per
// runtime, gradients included): every step is a call autograd, autocast and
// Python modes see, carrying only tensors.

/// `t` in dtype `d` (aten::_to_copy where it differs), as TensorIterator
/// casts an input to the common dtype.
template <typename = void>
inline torch::stable::Tensor to_dtype(
    const torch::stable::Tensor& t,
    ScalarType d) {
  if (t.scalar_type() == d) {
    return t;
  }
  return dispatch_tensors<7>(
      "aten::_to_copy",
      "",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(std::optional<ScalarType>(d)),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(false),
       torch::stable::detail::from(std::nullopt)});
}

/// The dtype autocast computes aten::`op`.`overload` in for tensors of
/// `t`'s dtype and device: the op dispatched on empty 0x0 tensors of that
/// dtype and device, asked for float16 and bfloat16 tensors only (the ones
/// autocast's float32 policy casts: CUDA's lists aten::pow and aten::dist,
/// CPU's neither); `t`'s own dtype where autocast leaves it alone.
template <typename = void>
inline ScalarType autocast_dtype(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& t) {
  const ScalarType d = t.scalar_type();
  if (d != ScalarType::Half && d != ScalarType::BFloat16) {
    return d;
  }
  const torch::stable::Tensor e = empty_0x0(t);
  const torch::stable::Tensor r = dispatch_tensors<2>(
      op,
      overload,
      {torch::stable::detail::from(e), torch::stable::detail::from(e)});
  return r.scalar_type();
}

/// `t` as autocast casts an argument to `d`: a floating tensor other than a
/// double one in `d` (aten::_to_copy), any other as it is.
template <typename = void>
inline torch::stable::Tensor autocast_cast(
    const torch::stable::Tensor& t,
    ScalarType d) {
  const ScalarType from = t.scalar_type();
  if (from == ScalarType::Double || !is_floating(position(from))) {
    return t;
  }
  return to_dtype(t, d);
}

/// The common dtype of two tensors, as TensorIterator computes it.
template <typename = void>
inline ScalarType common_dtype(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  const std::array<Operand, 2> operands{operand(a), operand(b)};
  return kType[result_type<2, 0>(operands, {})];
}

/// Is one of `a`, `b` a Bool tensor and the other floating or complex?
/// (Row key `cast_bool` of an equivalent: aten's add computes such a call in
/// their common dtype, the bool converted exactly, where the shim of
/// aten::subtract refuses any Bool operand.)
template <typename = void>
inline bool bool_beside_floating(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  const int pa = position(a.scalar_type());
  const int pb = position(b.scalar_type());
  const bool fa = is_floating(pa) || is_complex(pa);
  const bool fb = is_floating(pb) || is_complex(pb);
  const bool a_bool = a.scalar_type() == ScalarType::Bool;
  const bool b_bool = b.scalar_type() == ScalarType::Bool;
  return (a_bool && fb) || (b_bool && fa);
}

/// The dtype aten's activation kernels compute a dtype in (float for half
/// and bfloat16, whose kernels convert each element to float), and whether
/// aten has such a kernel at all (the floating dtypes; `integral`: also the
/// integral ones but bool).
template <typename = void>
inline bool kernel_dtype(ScalarType t, bool integral, ScalarType& compute) {
  switch (t) {
    case ScalarType::Half:
    case ScalarType::BFloat16:
      compute = ScalarType::Float;
      return true;
    case ScalarType::Float:
    case ScalarType::Double:
      compute = t;
      return true;
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      compute = t;
      return integral;
    default:
      return false;
  }
}

/// A call aten's kernel has no version for: aten raises too.
template <typename = void>
[[noreturn]] inline void no_kernel(const char* op) {
  const std::string what = std::string("shimgen: ") + op;
  throw std::runtime_error(what + ": aten has no kernel for this dtype");
}

/// aten::detach: `t` with no autograd history (a branch whose gradient aten's
/// formula gives as zero).
template <typename = void>
inline torch::stable::Tensor detached(const torch::stable::Tensor& t) {
  return dispatch_tensors<1>("aten::detach", "", {torch::stable::detail::from(t)});
}

/// aten::`op`.`overload` of two tensors (a comparison or logical op).
template <typename = void>
inline torch::stable::Tensor tensor_op(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<2>(
      op, overload, {torch::stable::detail::from(a), torch::stable::detail::from(b)});
}

/// aten::`op`.`overload` of a tensor and a dimension.
template <typename = void>
inline torch::stable::Tensor dim_op(
    const char* op,
    const char* overload,
    const torch::stable::Tensor& t,
    int64_t dim) {
  return dispatch_tensors<2>(
      op,
      overload,
      {torch::stable::detail::from(t), torch::stable::detail::from(dim)});
}

/// Do `a` and `b` have the same sizes?
template <typename = void>
inline bool same_sizes(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  if (a.dim() != b.dim()) {
    return false;
  }
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (as[d] != bs[d]) {
      return false;
    }
  }
  return true;
}

/// `t` broadcast to `like`'s shape, in its dtype (`t` itself where it has
/// them already).
template <typename = void>
inline torch::stable::Tensor broadcast_as(
    const torch::stable::Tensor& t,
    const torch::stable::Tensor& like) {
  if (t.scalar_type() == like.scalar_type() && same_sizes(t, like)) {
    return t;
  }
  const torch::stable::Tensor expanded =
      tensor_op("aten::expand_as", "", t, like);
  return tensor_op("aten::type_as", "", expanded, like);
}

/// aten's add (`subtract` false) or sub (true) of two integral or bool
/// tensors with alpha 1: `a + b` / `a - b` in the result dtype, wrapping on
/// overflow (number rule `kernel: integral_add`). libtorch carries no
/// integral alpha (its C shims take a double, which aten refuses for integral
/// tensors), so: aten::mul gives the result's shape, dtype and strides (the
/// same TensorIterator as add's, with its errors), aten::diff of the operands
/// stacked along a new dimension its values (`x - y`, as aten::sub computes;
/// an add subtracts the negation, exact in two's complement), and copy_
/// writes them there. bool + bool is aten::logical_or.
template <typename = void>
inline torch::stable::Tensor integral_add_select(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b,
    bool subtract) {
  torch::stable::Tensor result = tensor_op("aten::mul", "Tensor", a, b);
  if (result.scalar_type() == ScalarType::Bool) {
    return tensor_op("aten::logical_or", "", a, b);
  }
  const torch::stable::Tensor x =
      dim_op("aten::unsqueeze", "", broadcast_as(a, result), 0);
  torch::stable::Tensor y = broadcast_as(b, result);
  if (!subtract) {
    y = dispatch_tensors<1>("aten::neg", "", {torch::stable::detail::from(y)});
  }
  const std::optional<torch::stable::Tensor> before =
      dim_op("aten::unsqueeze", "", y, 0);
  const torch::stable::Tensor stacked_diff = dispatch_tensors<5>(
      "aten::diff",
      "",
      {torch::stable::detail::from(x),
       torch::stable::detail::from(int64_t(1)),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(before),
       torch::stable::detail::from(std::nullopt)});
  const torch::stable::Tensor values =
      dim_op("aten::squeeze", "dim", stacked_diff, 0);
  return dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(result),
       torch::stable::detail::from(values),
       torch::stable::detail::from(false)});
}

/// aten's pow(x, 3) (number rule `kernel: cube`): pow_tensor_scalar computes
/// an exponent of 3 as `x * x * x` ((x * x) * x, rounded in the tensor's
/// dtype at each step, the integral kernel wrapping on overflow); here as two
/// aten::mul calls in that order.
template <typename = void>
inline torch::stable::Tensor cube_select(const torch::stable::Tensor& x) {
  const torch::stable::Tensor square = tensor_op("aten::mul", "Tensor", x, x);
  return tensor_op("aten::mul", "Tensor", square, x);
}

/// aten::where.self(condition, a, b).
template <typename = void>
inline torch::stable::Tensor where_select(
    const torch::stable::Tensor& condition,
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  return dispatch_tensors<3>(
      "aten::where",
      "self",
      {torch::stable::detail::from(condition),
       torch::stable::detail::from(a),
       torch::stable::detail::from(b)});
}

/// aten's threshold kernel (threshold_stub): `x <= threshold ? value : other`
/// over the common dtype of x and other (each input cast to it first, as
/// TensorIterator does), the threshold compared in that dtype (in float for
/// half and bfloat16) and the value converted to it; as aten::le.Tensor,
/// aten::where.self and aten::_to_copy. aten's kernel exists for the integral
/// and floating dtypes (not bool, complex or the unsigned ones beyond uint8);
/// a number outside the dtype's range is refused.
template <typename = void>
inline torch::stable::Tensor threshold_select(
    const char* op,
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& other,
    const Scalar& threshold,
    const Scalar& value) {
  const ScalarType ct = common_dtype(x, other);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, true, cmp)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(threshold, position(cmp))) {
    refuse(op, "threshold", threshold, why);
  }
  if (!in_range(value, position(ct))) {
    refuse(op, "value", value, why);
  }
  torch::stable::Tensor xc = to_dtype(to_dtype(x, ct), cmp);
  torch::stable::Tensor mask =
      tensor_op("aten::le", "Tensor", xc, number_tensor(threshold, cmp));
  return where_select(mask, number_tensor(value, ct), to_dtype(other, ct));
}

/// aten's leaky_relu kernels: `x > 0 ? other : other * negative_slope` over
/// the common dtype of x and other (each input cast to it first, as
/// TensorIterator does; leaky_relu: other is x; leaky_relu_backward: other is
/// grad_output), in float for half and bfloat16, the slope converted to that
/// dtype; as aten::gt.Tensor, aten::mul.Tensor, aten::where.self and
/// aten::_to_copy.
template <typename = void>
inline torch::stable::Tensor leaky_relu_select(
    const char* op,
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& other,
    const Scalar& negative_slope,
    bool self_is_result) {
  const ScalarType ct = common_dtype(x, other);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, false, cmp)) {
    no_kernel(op);
  }
  if (!in_range(negative_slope, position(cmp))) {
    const std::string why = "out of the range of the dtype aten computes it in";
    refuse(op, "negative_slope", negative_slope, why);
  }
  if (self_is_result && negative_slope.to_double() < 0) {
    const std::string what = std::string("shimgen: ") + op;
    const std::string why = ": in-place backward, negative slope (aten raises)";
    throw std::runtime_error(what + why);
  }
  torch::stable::Tensor xc = to_dtype(to_dtype(x, ct), cmp);
  torch::stable::Tensor mask =
      tensor_op("aten::gt", "Tensor", xc, number_tensor(Scalar(0), cmp));
  torch::stable::Tensor o = to_dtype(to_dtype(other, ct), cmp);
  // `other` at the result's shape first: a broadcast operand's gradient then
  // reaches it as one reduction of the elementwise sum of both branches, as
  // aten's formula gives it (two reductions, one per branch, round otherwise).
  o = tensor_op("aten::expand_as", "", o, where_select(mask, o, o));
  torch::stable::Tensor scaled = dispatch_tensors<2>(
      "aten::mul",
      "Tensor",
      {torch::stable::detail::from(o),
       torch::stable::detail::from(number_tensor(negative_slope, cmp))});
  torch::stable::Tensor r = where_select(mask, o, scaled);
  return to_dtype(r, ct);
}

/// c10::canCast: may aten write a result of dtype `from` into an output of
/// dtype `to`? (Not complex into non-complex, floating into integral, or
/// anything but bool into bool.)
template <typename = void>
inline bool can_cast(ScalarType from, ScalarType to) {
  const int f = position(from);
  const int t = position(to);
  if (is_complex(f) && !is_complex(t)) {
    return false;
  }
  if (is_floating(f) && !(is_floating(t) || is_complex(t))) {
    return false;
  }
  return from == ScalarType::Bool || to != ScalarType::Bool;
}

/// The bytes [lo, hi) a tensor's elements span (false: it has none).
template <typename = void>
inline bool byte_span(
    const torch::stable::Tensor& t,
    uintptr_t& lo,
    uintptr_t& hi) {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  void* data = nullptr;
  int32_t dtype = 0;
  AtenTensorHandle h = t.get();
  check(aoti_torch_get_dim(h, &dim), "aoti_torch_get_dim");
  check(aoti_torch_get_sizes(h, &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(h, &strides), "aoti_torch_get_strides");
  check(aoti_torch_get_data_ptr(h, &data), "aoti_torch_get_data_ptr");
  check(aoti_torch_get_dtype(h, &dtype), "aoti_torch_get_dtype");
  int64_t last = 0;
  for (int64_t d = 0; d < dim; ++d) {
    if (sizes[d] == 0) {
      return false;
    }
    last += (sizes[d] - 1) * strides[d];
  }
  const auto size = static_cast<uintptr_t>(aoti_torch_dtype_element_size(dtype));
  lo = reinterpret_cast<uintptr_t>(data);
  hi = lo + (static_cast<uintptr_t>(last) + 1) * size;
  return true;
}

/// Are `a` and `b` the very same view (data, dtype, sizes and strides)?
template <typename = void>
inline bool same_view(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.dim() != b.dim()) {
    return false;
  }
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  int64_t* at = nullptr;
  int64_t* bt = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(a.get(), &at), "aoti_torch_get_strides");
  check(aoti_torch_get_strides(b.get(), &bt), "aoti_torch_get_strides");
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (as[d] != bs[d] || at[d] != bt[d]) {
      return false;
    }
  }
  return true;
}

/// Do `a` and `b` share memory other than as the very same view (aten's full
/// overlap, which an in-place op allows)?
template <typename = void>
inline bool shares_memory(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  uintptr_t alo = 0;
  uintptr_t ahi = 0;
  uintptr_t blo = 0;
  uintptr_t bhi = 0;
  if (!byte_span(a, alo, ahi) || !byte_span(b, blo, bhi)) {
    return false;
  }
  if (ahi <= blo || bhi <= alo) {
    return false;
  }
  return alo != blo || !same_view(a, b);
}

/// An in-place op as aten's in-place rules around its functional overload's
/// `result`: the result dtype must cast to self's (c10::canCast), self may
/// share memory with no input other than as the very same view (aten computes
/// in place element by element; the result was computed out of place, so such
/// a call is refused), then aten::copy_ writes it into self.
template <typename = void>
inline torch::stable::Tensor assign_inplace(
    const char* op,
    torch::stable::Tensor self,
    const torch::stable::Tensor& result,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  const std::string what = std::string("shimgen: ") + op;
  if (!can_cast(result.scalar_type(), self.scalar_type())) {
    const std::string why = ": the result's dtype cannot be cast to self's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  for (const torch::stable::Tensor* input : inputs) {
    if (shares_memory(self, *input)) {
      std::string why = what;
      why += ": self shares memory with an input, which this composition ";
      why += "(the op out of place, then copy_) cannot compute as aten does ";
      why += "in place: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
      why += "(rebuilt for each torch release), or pass a copy";
      throw std::runtime_error(why);
    }
  }
  return dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(result),
       torch::stable::detail::from(false)});
}

// @section scalar_compositions needs legacy_shims compositions
// ---- Kernel compositions of functional Scalar ops ----
//
// aten ops whose numbers aten itself turns into tensors (wrapped numbers), or
// whose kernel is a select over comparisons (hardtanh, hardshrink): the same
// dispatching calls, the numbers as 0-dim tensors of the dtype aten computes
// them in.

/// The dtype aten gives wrapped numbers among `tensors` (ATen's result_type:
/// a floating-point number counts as the default dtype), for ops that wrap
/// their Scalars with scalar_to_tensor / wrapped_scalar_tensor and call their
/// Tensor overload (where.Scalar, searchsorted.Scalar, bucketize.Scalar).
template <typename = void>
inline ScalarType wrapped_numbers_dtype(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors,
    std::initializer_list<const Scalar*> numbers) {
  int dim = kUndefined;
  int zero = kUndefined;
  int wrapped = kUndefined;
  for (const torch::stable::Tensor* t : tensors) {
    if (t->dim() == 0) {
      zero = promote(zero, position(t->scalar_type()));
    } else {
      dim = promote(dim, position(t->scalar_type()));
    }
  }
  std::optional<int> default_float;
  for (const Scalar* s : numbers) {
    wrapped = promote(wrapped, wrapped_dtype(*s, default_float));
  }
  const int t = combine_categories(dim, combine_categories(zero, wrapped));
  if (t < 0) {
    fail(op, "no dtype promotion for these arguments (aten raises)");
  }
  return kType[t];
}

/// aten::result_type.Scalar_Tensor and .Scalar_Scalar (kernel
/// `result_type_numbers`): no dispatcher carries their numbers, and the answer
/// is ATen's result_type over the tensor and the numbers as wrapped numbers,
/// which wrapped_numbers_dtype computes from shimgen's promotion table (the
/// measured torch.promote_types) and libtorch's default dtype.
template <typename = void>
inline ScalarType result_type_numbers_select(
    const char* op,
    const Scalar& scalar,
    const torch::stable::Tensor& tensor) {
  if (scalar.is_complex() && tensor.scalar_type() == ScalarType::BFloat16) {
    std::string why = "a complex number with a bfloat16 tensor: aten's ";
    why += "answer changed in 2.14 (ComplexFloat before, a complex bfloat16 ";
    why += "type from 2.14), so no stable route gives it: define ";
    why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
    why += "torch release)";
    fail(op, why.c_str());
  }
  return wrapped_numbers_dtype(op, {&tensor}, {&scalar});
}

template <typename = void>
inline ScalarType result_type_numbers_select(
    const char* op,
    const Scalar& scalar1,
    const Scalar& scalar2) {
  return wrapped_numbers_dtype(op, {}, {&scalar1, &scalar2});
}

/// The 0-dim tensor aten computes a wrapped number as: its value in dtype `t`
/// (as aten casts the wrapped tensor to the common dtype), on `like`'s device
/// (scalar_to_tensor's device); a number out of `t`'s range is refused.
template <typename = void>
inline torch::stable::Tensor wrapped_number_tensor(
    const char* op,
    const char* arg,
    const Scalar& s,
    ScalarType t,
    const torch::stable::Tensor& like) {
  if (!in_range(s, position(t))) {
    refuse(op, arg, s, "out of the range of the dtype aten computes it in");
  }
  // on like's device as a fill (on_device_of), not a copy that waits for it
  return on_device_of(number_tensor(s, t), like);
}

/// A hardtanh bound as the 0-dim tensor aten's clamp kernel compares with: in
/// self's dtype, truncated to an integer first for an integral self (as
/// hardtanh_out does); one aten cannot convert (overflow, a negative bound for
/// uint8, a NaN or infinity) is refused.
template <typename = void>
inline torch::stable::Tensor clamp_bound(
    const char* op,
    const char* arg,
    const Scalar& s,
    ScalarType t) {
  const std::string why = "out of the range of the dtype aten computes it in";
  Scalar b = s;
  if (!is_floating(position(t))) {
    const bool real = !s.is_complex() && s.kind() != Scalar::Kind::UInt;
    if (!real || !(std::fabs(s.to_double()) < 9.2e18)) {
      refuse(op, arg, s, why);
    }
    // toward zero, as Scalar::toLong
    b = Scalar(s.to_int64());
  }
  if (!in_range(b, position(t))) {
    refuse(op, arg, s, why);
  }
  return number_tensor(b, t);
}

/// aten's hardtanh: clamp(self, min_val, max_val) in self's dtype (clamp's
/// scalar kernel; bool and the dtypes clamp has no kernel for raise), with
/// hardtanh's gradient (zero where self is on or beyond a bound):
/// `min_val < self < max_val ? self : clamp(detach(self), min_val, max_val)`
/// as aten::gt, aten::lt, aten::logical_and, aten::clamp.Tensor and
/// aten::where.self.
template <typename = void>
inline torch::stable::Tensor clamp_select(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& min_val,
    const Scalar& max_val) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, true, compute)) {
    no_kernel(op);
  }
  // aten::clamp.Tensor's CUDA kernel checks devices: the bounds go to self's
  // device (on_device_of)
  const torch::stable::Tensor lo =
      on_device_of(clamp_bound(op, "min_val", min_val, t), self);
  const torch::stable::Tensor hi =
      on_device_of(clamp_bound(op, "max_val", max_val, t), self);
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::gt", "Tensor", self, lo),
      tensor_op("aten::lt", "Tensor", self, hi));
  const torch::stable::Tensor clamped = dispatch_tensors<3>(
      "aten::clamp",
      "Tensor",
      {torch::stable::detail::from(detached(self)),
       torch::stable::detail::from(std::optional<torch::stable::Tensor>(lo)),
       torch::stable::detail::from(std::optional<torch::stable::Tensor>(hi))});
  return where_select(inside, self, clamped);
}

/// aten's hardshrink kernel: `-lambd <= self <= lambd ? 0 : self` in self's
/// dtype (half and bfloat16 too), lambd converted to it; as aten::ge,
/// aten::le, aten::logical_and and aten::where.self. aten's kernel exists for
/// the floating dtypes.
template <typename = void>
inline torch::stable::Tensor hardshrink_select(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, false, compute)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(lambd, position(t))) {
    refuse(op, "lambd", lambd, why);
  }
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", self, number_tensor(neg, t)),
      tensor_op("aten::le", "Tensor", self, number_tensor(lambd, t)));
  return where_select(inside, number_tensor(Scalar(0), t), self);
}

/// Is `t` an unsigned integer dtype?
template <typename = void>
inline bool is_unsigned(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
      return true;
    default:
      return false;
  }
}

/// The number as the double a `float` parameter of `op`'s `via` carries, where
/// aten converting that double to self's dtype gives what converting the
/// number itself gives: a floating-point or bool number, or an integer a
/// double holds exactly and, for an unsigned self, not negative (aten wraps
/// such an integer, and raises for the double). Otherwise refused.
template <typename = void>
inline double exact_double(
    const char* op,
    const char* arg,
    const Scalar& s,
    const torch::stable::Tensor& self) {
  if (s.is_complex() || !float_exact(s)) {
    refuse(op, arg, s, "no double holds it exactly");
  }
  const bool negative = s.kind() == Scalar::Kind::Int && s.to_int64() < 0;
  if (negative && is_unsigned(self.scalar_type())) {
    std::string why = "aten wraps a negative integer into an unsigned dtype";
    why += " (the double would raise)";
    refuse(op, arg, s, why);
  }
  return s.to_double();
}

/// aten::constant_pad_nd's own checks of `pad`, with its messages: aten::pad
/// checks the same with other words before it computes constant_pad_nd, so
/// the composition asks them first (row field `check`).
template <class Ints>
inline void constant_pad_check(
    const torch::stable::Tensor& self,
    const Ints& pad) {
  const int64_t length = static_cast<int64_t>(pad.size());
  if (length % 2 != 0) {
    std::string why = "Length of pad must be even but instead it equals ";
    why += std::to_string(length);
    throw std::runtime_error(why);
  }
  if (self.dim() < length / 2) {
    std::string why = "Length of pad should be no more than twice the number ";
    why += "of dimensions of the input. Pad length is ";
    why += std::to_string(length) + "while the input has ";
    why += std::to_string(self.dim()) + "dimensions.";
    throw std::runtime_error(why);
  }
}

/// aten's scatter with a number (scatter_fill): the number converted to
/// self's dtype, written where `index` says along `dim`; as aten::scatter.src
/// with a 0-dim tensor of it expanded to index's shape (aten::expand_as). A
/// number outside self's dtype (out of range; not whole for an integral
/// dtype) is refused.
template <typename = void>
inline torch::stable::Tensor scatter_fill_select(
    const char* op,
    const torch::stable::Tensor& self,
    int64_t dim,
    const torch::stable::Tensor& index,
    const Scalar& value) {
  const int t = position(self.scalar_type());
  if (t < 0 || !in_range(value, t)) {
    refuse(op, "value", value, "it does not convert exactly to self's dtype");
  }
  // aten::scatter.src's CUDA kernel checks devices: the number goes to self's
  // device (on_device_of)
  const torch::stable::Tensor number =
      number_tensor_on(value, self.scalar_type(), self);
  const torch::stable::Tensor src =
      tensor_op("aten::expand_as", "", number, index);
  return dispatch_tensors<4>(
      "aten::scatter",
      "src",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(dim),
       torch::stable::detail::from(index),
       torch::stable::detail::from(src)});
}

// @section out_inplace needs legacy_shims compositions
// ---- out= and in-place compositions: aten's out= rules, self saved for
// autograd (kernels `out` and `inplace`, shimgen/generate/routes/composition.py) ----

/// aten::is_leaf: has `t` no grad_fn? (Not named is_leaf: argument-dependent
/// lookup would also find torch::stable::is_leaf, the op's wrapper.)
template <typename = void>
inline bool without_grad_fn(const torch::stable::Tensor& t) {
  std::array<StableIValue, 1> stack{torch::stable::detail::from(t)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher("aten::is_leaf", "", stack.data(), TORCH_ABI_VERSION),
      "aten::is_leaf");
#else
  check(aoti_torch_call_dispatcher("aten::is_leaf", "", stack.data()), "aten::is_leaf");
#endif
  return torch::stable::detail::to<bool>(stack[0]);
}

/// Does `t` require grad? Asked only in grad mode: libtorch 2.9-2.15 exports
/// no requires_grad getter, but an alias of a tensor that requires grad is a
/// view autograd records (aten::is_leaf false), of any other a leaf.
template <typename = void>
inline bool requires_grad_in_grad_mode(const torch::stable::Tensor& t) {
  torch::stable::Tensor view = dispatch_tensors<1>(
      "aten::alias", "", {torch::stable::detail::from(t)});
  return !without_grad_fn(view);
}

/// Would autograd record a call on these tensors (grad mode, and one of them
/// requires grad)? A number rule whose op's gradient formula differs from its
/// target's is taken only where it would not (emit_cpp._number_rules).
template <typename = void>
inline bool records_grad(std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (!aoti_torch_grad_mode_is_enabled()) {
    return false;
  }
  for (const torch::stable::Tensor* t : tensors) {
    if (requires_grad_in_grad_mode(*t)) {
      return true;
    }
  }
  return false;
}

/// aten's autograd check of an out= call: in grad mode, no argument (out
/// included) may require grad.
template <typename = void>
inline void check_out_autograd(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (records_grad(tensors)) {
    std::string why = std::string("shimgen: ") + op;
    why += ": functions with out=... arguments don't support ";
    why += "automatic differentiation, but one of the arguments ";
    why += "requires grad (aten raises)";
    throw std::runtime_error(why);
  }
}

/// Row key `no_derivative: true`: aten has no derivative for the op, so in
/// grad mode with an argument that requires grad it computes the out= call
/// and leaves out requiring grad, which a composition cannot: refused.
template <typename = void>
inline void refuse_recorded_out(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  if (records_grad(tensors)) {
    std::string why = "autograd would record this out= call, which aten ";
    why += "computes without a derivative, leaving out requiring grad: ";
    why += "define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for ";
    why += "each torch release), or call it under no_grad";
    fail(op, why.c_str());
  }
}

/// Do `a` and `b` share any byte (the very same view included)?
template <typename = void>
inline bool overlaps(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  uintptr_t alo = 0;
  uintptr_t ahi = 0;
  uintptr_t blo = 0;
  uintptr_t bhi = 0;
  if (!byte_span(a, alo, ahi) || !byte_span(b, blo, bhi)) {
    return false;
  }
  return alo < bhi && blo < ahi;
}

/// Has `t` a dimension of size > 1 and stride 0 (elements written twice)?
template <typename = void>
inline bool written_twice(const torch::stable::Tensor& t) {
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  check(aoti_torch_get_sizes(t.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(t.get(), &strides), "aoti_torch_get_strides");
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (sizes[d] > 1 && strides[d] == 0) {
      return true;
    }
  }
  return false;
}

/// Are `a` and `b` on the same device (type and index)?
template <typename = void>
inline bool same_device(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  int32_t a_type = 0;
  int32_t b_type = 0;
  int32_t a_index = 0;
  int32_t b_index = 0;
  check(aoti_torch_get_device_type(a.get(), &a_type), "get_device_type");
  check(aoti_torch_get_device_type(b.get(), &b_type), "get_device_type");
  check(aoti_torch_get_device_index(a.get(), &a_index), "get_device_index");
  check(aoti_torch_get_device_index(b.get(), &b_index), "get_device_index");
  return a_type == b_type && a_index == b_index;
}

/// `value` written into out by aten::where.self_out(true, value, value): out
/// resized to value's shape as TensorIterator's resize_output does (aten's
/// warning where out had elements), with value's strides, as aten's
/// structured kernels restride a resized out.
template <typename = void>
inline void write_resized(
    torch::stable::Tensor& out,
    const torch::stable::Tensor& value) {
  const torch::stable::Tensor all =
      number_tensor(Scalar(true), ScalarType::Bool);
  dispatch_tensors<4>(
      "aten::where",
      "self_out",
      {torch::stable::detail::from(all),
       torch::stable::detail::from(value),
       torch::stable::detail::from(value),
       torch::stable::detail::from(out)});
}

/// An out= op as aten's out= rules around its functional overload's
/// `result`: out on the result's device; the result dtype must cast to out's
/// (c10::canCast; `same_dtype`: must be out's, as aten's unary ops check);
/// out sharing memory with an input other than as the very same view, or
/// being resized while it shares memory with one, or writing an element
/// twice, is refused (aten computes such calls element by element). Then,
/// where out's shape differs, aten::where.self_out writes the result into
/// it: TensorIterator's resize_output (aten's warning on a non-empty out
/// included) and the result's strides, as aten's structured kernels
/// restride a resized out; otherwise aten::copy_.
template <typename = void>
inline void assign_out(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result,
    std::initializer_list<const torch::stable::Tensor*> inputs,
    bool same_dtype) {
  const std::string what = std::string("shimgen: ") + op;
  if (!same_device(out, result)) {
    const std::string why = ": out is on another device than the result";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (same_dtype && result.scalar_type() != out.scalar_type()) {
    const std::string why = ": out's dtype differs from the result's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (!can_cast(result.scalar_type(), out.scalar_type())) {
    const std::string why = ": the result's dtype cannot be cast to out's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  const bool resize = !same_sizes(out, result);
  std::string refused;
  if (written_twice(out)) {
    refused = "out writes an element twice";
  }
  for (const torch::stable::Tensor* input : inputs) {
    if (resize && overlaps(out, *input)) {
      refused = "out shares memory with an input";
    }
    if (shares_memory(out, *input)) {
      refused = "out shares memory with an input";
    }
  }
  if (!refused.empty()) {
    std::string why = what + ": " + refused;
    why += ", which this composition (the op out of place, then copy_) ";
    why += "cannot compute as aten does: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release), or pass ";
    why += "a copy";
    throw std::runtime_error(why);
  }
  if (!resize) {
    dispatch_tensors<3>(
        "aten::copy_",
        "",
        {torch::stable::detail::from(out),
         torch::stable::detail::from(result),
         torch::stable::detail::from(false)});
    return;
  }
  write_resized(out, to_dtype(result, out.scalar_type()));
}

/// aten's meta of an out= overload that sizes out [0] before its kernel
/// redispatches (row key `empty_first`: isin.Scalar_Tensor_out): out's device
/// and dtype checked against the result's, then out resized to [0] by
/// aten::where.self_out over an empty tensor of the result's (TensorIterator's
/// resize: aten's warning where out had elements). An out writing an element
/// twice is refused first (TensorIterator would raise where aten resizes it).
template <typename = void>
inline void empty_out_first(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result) {
  const std::string what = std::string("shimgen: ") + op;
  if (!same_device(out, result)) {
    const std::string why = ": out is on another device than the result";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (result.scalar_type() != out.scalar_type()) {
    const std::string why = ": out's dtype differs from the result's";
    throw std::runtime_error(what + why + " (aten raises)");
  }
  if (written_twice(out)) {
    std::string why = what + ": out writes an element twice, which this ";
    why += "composition cannot resize as aten does: define SHIMGEN_OVERLAY ";
    why += "and link libshimgen_overlay (rebuilt for each torch release), or ";
    why += "pass a copy";
    throw std::runtime_error(why);
  }
  if (out.dim() == 1 && out.size(0) == 0) {
    return;
  }
  const torch::stable::Tensor one = dim_op("aten::unsqueeze", "", result, 0);
  const torch::stable::Tensor none = dispatch_tensors<5>(
      "aten::slice",
      "Tensor",
      {torch::stable::detail::from(one),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(std::optional<int64_t>(0)),
       torch::stable::detail::from(std::optional<int64_t>(0)),
       torch::stable::detail::from(int64_t(1))});
  write_resized(out, none);
}

/// The self an in-place composition computes from: where autograd records
/// the call (grad mode, and self or another input requires grad) a clone
/// (aten::clone), so that what autograd saves of it is not the tensor
/// aten::copy_ then overwrites (mul_'s backward needs the original self);
/// otherwise self itself.
template <typename = void>
inline torch::stable::Tensor saved_self(
    const torch::stable::Tensor& self,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  if (!aoti_torch_grad_mode_is_enabled()) {
    return self;
  }
  bool recorded = requires_grad_in_grad_mode(self);
  for (const torch::stable::Tensor* input : inputs) {
    recorded = recorded || requires_grad_in_grad_mode(*input);
  }
  if (!recorded) {
    return self;
  }
  return dispatch_tensors<2>(
      "aten::clone",
      "",
      {torch::stable::detail::from(self), torch::stable::detail::from(std::nullopt)});
}

// @section range_factories needs legacy_shims compositions
// ---- kernels `arange_factory` / `range_factory`: aten's range factories as
// aten::cumsum of [start, step, step, ...], decided per number
// (shimgen/generate/routes/composition.py) ----

/// The least e >= 0 with x * 2^e a whole number (x finite; doubling is exact).
template <typename = void>
inline int binary_places(double x) {
  int e = 0;
  while (x != std::floor(x)) {
    x *= 2;
    ++e;
  }
  return e;
}

/// a - b (`sign` -1) or a + b (`sign` 1) in int64, false where it overflows.
template <typename = void>
inline bool int64_step(int64_t a, int64_t b, int sign, int64_t& r) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  if (sign < 0) {
    if ((b > 0 && a < lo + b) || (b < 0 && a > hi + b)) {
      return false;
    }
    r = a - b;
    return true;
  }
  if ((b > 0 && a > hi - b) || (b < 0 && a < lo - b)) {
    return false;
  }
  r = a + b;
  return true;
}

/// aten's bounds check (true: it raises) over the numbers as doubles.
template <typename = void>
inline bool range_check_fails(double start, double end, double step) {
  if (!(step > 0 || step < 0)) {
    return true;
  }
  if (!(std::isfinite(start) && std::isfinite(end))) {
    return true;
  }
  return !((step > 0 && end >= start) || (step < 0 && end <= start));
}

/// aten's bounds check (true: it raises) over the numbers as int64.
template <typename = void>
inline bool range_check_fails(int64_t start, int64_t end, int64_t step) {
  if (step == 0) {
    return true;
  }
  return !((step > 0 && end >= start) || (step < 0 && end <= start));
}

/// Why a range is refused, with the remedy (raises).
template <typename = void>
inline void range_refuse(
    const char* op,
    const char* arg,
    const Scalar& s,
    const std::string& why) {
  std::string text = why;
  text += "; define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for";
  text += " each torch release) for aten's own kernel";
  refuse(op, arg, s, text);
}

/// An empty 1-D tensor of `size` elements of dtype `t` on the device, made by
/// libtorch's aoti_torch_empty_strided.
template <typename = void>
inline torch::stable::Tensor empty_1d(
    int64_t size,
    ScalarType t,
    int32_t device_type,
    int32_t device_index) {
  const std::array<int64_t, 1> sizes{size};
  const std::array<int64_t, 1> strides{1};
  const int32_t dtype =
      torch::stable::detail::to<int32_t>(torch::stable::detail::from(t));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          1,
          sizes.data(),
          strides.data(),
          dtype,
          device_type,
          device_index,
          &h),
      "aoti_torch_empty_strided");
  return torch::stable::Tensor(h);
}

/// The dtype aten's range factories give: the one given, else int64 for an
/// arange of integers and bools, else the default dtype.
template <typename = void>
inline ScalarType range_dtype(
    bool inclusive,
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    std::optional<ScalarType> dtype) {
  if (dtype.has_value()) {
    return dtype.value();
  }
  bool floats = start.is_floating_point();
  floats = floats || end.is_floating_point();
  floats = floats || step.is_floating_point();
  if (inclusive || floats) {
    return default_dtype();
  }
  return ScalarType::Long;
}

/// A floating dtype's significand bits and the binary places of its least
/// subnormal (0 and 0 for an integral dtype); false where aten's range kernels
/// take no such dtype (bool, complex, uint16+).
template <typename = void>
inline bool range_precision(ScalarType t, int& bits, int& places) {
  bits = 0;
  places = 0;
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      return true;
    case ScalarType::Half:
      bits = 11;
      places = 24;
      return true;
    case ScalarType::BFloat16:
      bits = 8;
      places = 133;
      return true;
    case ScalarType::Float:
      bits = 24;
      places = 149;
      return true;
    case ScalarType::Double:
      bits = 53;
      places = 1074;
      return true;
    default:
      return false;
  }
}

/// The number as a double (`d`) and as aten's accumulate type holds it
/// (`acc`): truncated to int64 (`whole`) for an integral dtype, rounded to
/// float for half and bfloat16 (`narrow`); refused where releases convert it
/// apart or aten rounds it.
template <typename = void>
inline void range_number(
    const char* op,
    const char* arg,
    const Scalar& s,
    bool integral,
    bool narrow,
    double& d,
    double& acc,
    int64_t& whole) {
  if (s.is_complex() || s.kind() == Scalar::Kind::UInt) {
    range_refuse(op, arg, s, "shimgen computes ranges of real int64 numbers");
  }
  d = s.to_double();
  if (integral) {
    constexpr double two63 = 9223372036854775808.0;
    const bool within = std::isfinite(d) && d > -two63 && d < two63;
    if (s.is_floating_point() && !within) {
      range_refuse(op, arg, s, "releases convert it to int64 apart");
    }
    whole = s.is_floating_point() ? static_cast<int64_t>(d) : s.to_int64();
    acc = static_cast<double>(whole);
    return;
  }
  if (!float_exact(s)) {
    range_refuse(op, arg, s, "aten rounds an integer beyond 2^53");
  }
  const double most = std::numeric_limits<float>::max();
  if (narrow && std::isfinite(d) && std::fabs(d) > most) {
    range_refuse(op, arg, s, "aten's float accumulate type cannot hold it");
  }
  acc = narrow ? static_cast<double>(static_cast<float>(d)) : d;
}

/// aten::range's number of elements, where releases agree (they size it in
/// the accumulate type or in double); -1 where they disagree or it overflows.
template <typename = void>
inline int64_t range_size(
    bool integral,
    bool narrow,
    const double* d,
    const double* acc,
    const int64_t* whole) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  constexpr double two63 = 9223372036854775808.0;
  double size_a = 0;
  if (integral) {
    int64_t diff = 0;
    if (!int64_step(whole[1], whole[0], -1, diff)) {
      return -1;
    }
    if ((whole[2] == -1 && diff == lo) || diff / whole[2] == hi) {
      return -1;
    }
    size_a = static_cast<double>(diff / whole[2] + 1);
  } else if (narrow) {
    const float fs = static_cast<float>(acc[0]);
    const float fe = static_cast<float>(acc[1]);
    const float ft = static_cast<float>(acc[2]);
    size_a = static_cast<double>((fe - fs) / ft + 1.0f);
  } else {
    size_a = (acc[1] - acc[0]) / acc[2] + 1;
  }
  const double size_d = (d[1] - d[0]) / d[2] + 1;
  bool fits = std::isfinite(size_a) && std::isfinite(size_d);
  fits = fits && size_a < two63 && size_d < two63;
  if (!fits) {
    return -1;
  }
  const int64_t size = static_cast<int64_t>(size_a);
  return size == static_cast<int64_t>(size_d) ? size : -1;
}

/// aten::arange's number of elements (an int64 arange counted in integers, or
/// in double on the releases that do so for non-integers), where releases
/// agree; -1 where they disagree or it overflows, -2 where aten raises.
template <typename = void>
inline int64_t arange_size(
    bool int64_dtype,
    bool integers,
    const double* d,
    const int64_t* whole) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr double two63 = 9223372036854775808.0;
  const double q = (d[1] - d[0]) / d[2];
  double size_d = std::isfinite(q) ? std::ceil(q) : q;
  if (int64_dtype) {
    const int64_t sgn = (whole[2] > 0) - (whole[2] < 0);
    int64_t diff = 0;
    int64_t partial = 0;
    int64_t num = 0;
    bool fits = int64_step(whole[1], whole[0], -1, diff);
    fits = fits && int64_step(diff, whole[2], 1, partial);
    fits = fits && int64_step(partial, sgn, -1, num);
    if (!fits || (num == lo && whole[2] == -1)) {
      return -1;
    }
    const double size_i = static_cast<double>(num / whole[2]);
    if (!integers && size_i != size_d) {
      return -1;
    }
    size_d = size_i;
  }
  if (!(size_d >= 0 && size_d <= two63)) {
    return -2;
  }
  return size_d < two63 ? static_cast<int64_t>(size_d) : -1;
}

/// Does no element of an int64 range overflow (|start| + (size - 1) * |step|
/// within 2^62)?
template <typename = void>
inline bool int64_range_fits(int64_t first, int64_t step, int64_t size) {
  constexpr uint64_t limit = uint64_t(1) << 62;
  uint64_t a0 = static_cast<uint64_t>(first);
  uint64_t a2 = static_cast<uint64_t>(step);
  if (first < 0) {
    a0 = uint64_t(0) - a0;
  }
  if (step < 0) {
    a2 = uint64_t(0) - a2;
  }
  if (a0 >= limit) {
    return false;
  }
  return size <= 1 || a2 <= (limit - a0) / uint64_t(size - 1);
}

/// Is every element of a floating range exact in the dtype (`bits`, `places`)
/// and in aten's arithmetic: start and step, scaled by the least power of two
/// that makes both whole, and every element, below 2^bits?
template <typename = void>
inline bool range_exact(
    double first,
    double step,
    int64_t size,
    int bits,
    int places) {
  const int e0 = binary_places(first);
  const int e2 = size > 1 ? binary_places(step) : 0;
  const int e = e0 > e2 ? e0 : e2;
  if (e > places) {
    return false;
  }
  const double s = std::ldexp(first, e);
  const double v = std::ldexp(step, e);
  const double n = static_cast<double>(size - 1);
  const double limit = std::ldexp(1.0, bits);
  if (std::fabs(s) >= limit) {
    return false;
  }
  if (size == 1) {
    return true;
  }
  bool exact = std::fabs(v) < limit && n < limit;
  exact = exact && n * std::fabs(v) < limit;
  return exact && std::fabs(s + n * v) < limit;
}

/// aten's range factories (`inclusive`: aten::range, whose end is included;
/// otherwise aten::arange) as aten::cumsum of [start, step, step, ...] in int64
/// (an integral dtype: the numbers truncated, as aten's int64 accumulate type
/// holds them) or float64, then aten::_to_copy to the dtype (range_dtype).
/// aten's checks and its number of elements are mirrored where every release
/// 2.9-2.15 computes them alike (they check in double or in the accumulate
/// type, and size an int64 arange in integers or in double); elsewhere the call
/// is refused. A floating dtype is served only where every element is exact in
/// it and in aten's arithmetic: aten's vectorized kernel rounds each vector's
/// first element before adding the steps, which no composition reproduces
/// (0.1 steps are refused, 0.25 steps are exact).
template <typename = void>
inline torch::stable::Tensor range_select(
    const char* op,
    bool inclusive,
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    std::optional<ScalarType> dtype,
    bool strided,
    bool pinned,
    int32_t device_type,
    int32_t device_index) {
  if (!strided || pinned) {
    fail(op, "shimgen computes strided, unpinned ranges only");
  }
  const ScalarType t = range_dtype(inclusive, start, end, step, dtype);
  int bits = 0;
  int places = 0;
  if (!range_precision(t, bits, places)) {
    fail(op, "shimgen computes ranges of integral and floating dtypes only");
  }
  const bool integral = bits == 0;
  const bool narrow = t == ScalarType::Half || t == ScalarType::BFloat16;
  const std::array<const char*, 3> names{"start", "end", "step"};
  const std::array<const Scalar*, 3> numbers{&start, &end, &step};
  double d[3] = {0, 0, 0};
  double acc[3] = {0, 0, 0};
  int64_t whole[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const Scalar& s = *numbers[i];
    range_number(op, names[i], s, integral, narrow, d[i], acc[i], whole[i]);
  }
  const bool fails = range_check_fails(d[0], d[1], d[2]);
  bool fails_acc = range_check_fails(acc[0], acc[1], acc[2]);
  if (integral) {
    fails_acc = range_check_fails(whole[0], whole[1], whole[2]);
  }
  if (fails != fails_acc) {
    std::string why = "releases check these bounds in double or in aten's";
    why += " accumulate type, which disagree here";
    range_refuse(op, "step", step, why);
  }
  if (fails) {
    fail(op, "step 0, start or end not finite, or a wrong sign (aten raises)");
  }
  if (std::isinf(d[2])) {
    range_refuse(op, "step", step, "releases answer an infinite step apart");
  }
  int64_t size = 0;
  if (inclusive) {
    size = range_size(integral, narrow, d, acc, whole);
  } else {
    bool integers = start.is_integral() && end.is_integral();
    integers = integers && step.is_integral();
    size = arange_size(t == ScalarType::Long, integers, d, whole);
  }
  if (size == -2) {
    fail(op, "aten raises: invalid size, possible overflow?");
  }
  if (size < 0) {
    std::string why = "releases size this range apart (in integers or in";
    why += " double, or in aten's accumulate type), or it overflows int64";
    range_refuse(op, "step", step, why);
  }
  if (size == 0) {
    return empty_1d(0, t, device_type, device_index);
  }
  Scalar first = Scalar(acc[0]);
  Scalar stride = Scalar(acc[2]);
  if (integral) {
    if (!int64_range_fits(whole[0], whole[2], size)) {
      range_refuse(op, "end", end, "an element of this range overflows int64");
    }
    first = Scalar(whole[0]);
    stride = Scalar(whole[2]);
  } else {
    if (acc[0] == 0 && std::signbit(acc[0]) && acc[2] < 0) {
      std::string why = "aten's first element is -0.0 here (-0.0 + -0.0),";
      why += " which cumsum does not give";
      range_refuse(op, "step", step, why);
    }
    if (!range_exact(acc[0], acc[2], size, bits, places)) {
      std::string why = "an element of this range is not exact in the dtype,";
      why += " where aten's vectorized kernel rounds in its own way (use";
      why += " integers or power-of-two steps such as 0.25, or compute";
      why += " start + step * arange(n) yourself)";
      range_refuse(op, "step", step, why);
    }
  }
  const ScalarType work_t = integral ? ScalarType::Long : ScalarType::Double;
  const torch::stable::Tensor work =
      empty_1d(size, work_t, device_type, device_index);
  tensor_op("aten::fill_", "Tensor", work, number_tensor(stride, work_t));
  const torch::stable::Tensor head = dispatch_tensors<4>(
      "aten::narrow",
      "",
      {torch::stable::detail::from(work),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(1))});
  tensor_op("aten::fill_", "Tensor", head, number_tensor(first, work_t));
  const torch::stable::Tensor sums = dispatch_tensors<3>(
      "aten::cumsum",
      "",
      {torch::stable::detail::from(work),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(std::optional<ScalarType>())});
  return to_dtype(sums, t);
}

// @section shrink needs legacy_shims compositions
// ---- softshrink and the shrink / hardtanh backward kernels (kernels
// `softshrink`, `shrink_grad`, `hardtanh_backward`,
// shimgen/generate/routes/composition.py) ----

/// Does half (or bfloat16) hold `v` exactly? (11 (8) significant bits; for
/// half, subnormals down to 2^-24; for bfloat16 normal numbers only, so a
/// subnormal one counts as not held.)
template <typename = void>
inline bool reduced_holds(double v, ScalarType t) {
  const double a = std::fabs(v);
  if (a == 0) {
    return true;
  }
  const bool half = t == ScalarType::Half;
  if (!std::isfinite(a) || a > (half ? 65504.0 : 3.3895313892515355e38)) {
    return false;
  }
  if (half && a < 6.103515625e-05) {
    const double scaled = std::ldexp(a, 24);
    return scaled == std::floor(scaled);
  }
  if (!half && a < std::ldexp(1.0, -126)) {
    return false;
  }
  int e = 0;
  const double s = std::ldexp(std::frexp(a, &e), half ? 11 : 8);
  return s == std::floor(s);
}

/// A NaN in `self` of a backward kernel is refused: aten's CPU kernels
/// answer it by the element's position in their vectorized loop (0 in the
/// vectorized body, grad_output in the scalar tail: measured on every
/// runtime), which no composition can follow. As aten::isnan, aten::any and
/// aten::is_nonzero (one bool, read from any device).
template <typename = void>
inline void refuse_nan(const char* op, const torch::stable::Tensor& self) {
  const torch::stable::Tensor nan = dispatch_tensors<1>(
      "aten::isnan", "", {torch::stable::detail::from(self)});
  const torch::stable::Tensor any = dispatch_tensors<1>(
      "aten::any", "", {torch::stable::detail::from(nan)});
  std::array<StableIValue, 1> stack{torch::stable::detail::from(any)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher(
          "aten::is_nonzero", "", stack.data(), TORCH_ABI_VERSION),
      "aten::is_nonzero");
#else
  check(
      aoti_torch_call_dispatcher("aten::is_nonzero", "", stack.data()),
      "aten::is_nonzero");
#endif
  if (torch::stable::detail::to<bool>(stack[0])) {
    std::string why = "self holds a NaN, where aten's kernel gives 0 or ";
    why += "grad_output depending on the element's position in its ";
    why += "vectorized loop: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// softshrink's operands: self in the dtype aten's softshrink kernel computes
/// in (float for half and bfloat16, where lambd must be one those dtypes
/// hold exactly: reduced_holds), lambd and -lambd as 0-dim tensors of it,
/// and self's dtype. aten raises for a negative or NaN lambd and for
/// non-floating dtypes.
struct SHIMGEN_HIDDEN ShrinkOperands {
  torch::stable::Tensor x;
  torch::stable::Tensor hi;
  torch::stable::Tensor lo;
  ScalarType t;
};

template <typename = void>
inline ShrinkOperands softshrink_operands(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  const ScalarType t = self.scalar_type();
  ScalarType compute = t;
  if (!kernel_dtype(t, false, compute)) {
    no_kernel(op);
  }
  if (lambd.is_complex()) {
    refuse(op, "lambd", lambd, "a complex number (aten raises)");
  }
  if (!(lambd.to_double() >= 0)) {
    fail(op, "lambda must be greater or equal to 0 (aten raises)");
  }
  // self's dtype: aten checks lambd against its range (from 2.10)
  if (!in_range(lambd, position(t))) {
    refuse(op, "lambd", lambd, "out of the range of self's dtype");
  }
  if (compute != t && !reduced_holds(lambd.to_double(), t)) {
    std::string why = "half and bfloat16 do not hold it exactly: aten's CPU ";
    why += "kernel computes with it as a float up to 2.13 and rounded to ";
    why += "self's dtype from 2.14 (as its CUDA kernel), so no one ";
    why += "composition equals both";
    refuse(op, "lambd", lambd, why);
  }
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor x = to_dtype(self, compute);
  const torch::stable::Tensor hi = number_tensor(lambd, compute);
  const torch::stable::Tensor lo = number_tensor(neg, compute);
  return ShrinkOperands{x, hi, lo, t};
}

/// aten's softshrink kernel: `x > lambd ? x - lambd : x < -lambd ? x + lambd
/// : 0` (NaN stays NaN) over softshrink_operands, given its two subtractions
/// `minus` (x - lambd) and `plus` (x - (-lambd), which IEEE computes as
/// x + lambd) by aten::sub.Tensor's wrapper; as aten::ge, aten::le, aten::gt,
/// aten::logical_and, aten::where.self and aten::_to_copy.
template <typename = void>
inline torch::stable::Tensor softshrink_select(
    const ShrinkOperands& s,
    const torch::stable::Tensor& minus,
    const torch::stable::Tensor& plus) {
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", s.x, s.lo),
      tensor_op("aten::le", "Tensor", s.x, s.hi));
  const torch::stable::Tensor shrunk =
      where_select(tensor_op("aten::gt", "Tensor", s.x, s.hi), minus, plus);
  const ScalarType compute = s.x.scalar_type();
  return to_dtype(
      where_select(inside, number_tensor(Scalar(0), compute), shrunk), s.t);
}

/// A common dtype `via`'s kernel has no version for where the op's own
/// kernel has one (a wrapped_numbers row's `refuse_dtypes`): refused.
template <typename = void>
inline void refuse_dtype(
    const char* op,
    const char* via,
    ScalarType dtype,
    ScalarType refused) {
  if (dtype == refused) {
    std::string why = std::string("aten::") + via + " has no kernel for this ";
    why += "dtype, which aten computes: define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// TensorIterator's broadcast check of two operands in aten's order, with its
/// message (aten's infer_size): the composition's own calls meet them in
/// another order, which would name them the other way round.
template <typename = void>
inline void check_broadcast(
    const torch::stable::Tensor& a,
    const torch::stable::Tensor& b) {
  int64_t* as = nullptr;
  int64_t* bs = nullptr;
  check(aoti_torch_get_sizes(a.get(), &as), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(b.get(), &bs), "aoti_torch_get_sizes");
  const int64_t n = a.dim() > b.dim() ? a.dim() : b.dim();
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t da = a.dim() - n + i;
    const int64_t db = b.dim() - n + i;
    const int64_t sa = da >= 0 ? as[da] : 1;
    const int64_t sb = db >= 0 ? bs[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      std::string why = "The size of tensor a (" + std::to_string(sa);
      why += ") must match the size of tensor b (" + std::to_string(sb);
      why += ") at non-singleton dimension " + std::to_string(i);
      throw std::runtime_error(why);
    }
  }
}

/// aten's shrink_backward kernel (hardshrink_backward, softshrink_backward):
/// `-lambd <= self <= lambd ? 0 : grad_output` over the common dtype of the
/// two (each input cast to it first, as TensorIterator does), lambd
/// converted to that dtype (half and bfloat16 too); as aten::ge, aten::le,
/// aten::logical_and, aten::where.self and aten::_to_copy. A NaN in self is
/// refused (refuse_nan).
template <typename = void>
inline torch::stable::Tensor shrink_grad_select(
    const char* op,
    const torch::stable::Tensor& grad_output,
    const torch::stable::Tensor& self,
    const Scalar& lambd) {
  check_broadcast(grad_output, self);
  const ScalarType ct = common_dtype(grad_output, self);
  ScalarType compute = ct;
  if (!kernel_dtype(ct, false, compute)) {
    no_kernel(op);
  }
  if (!in_range(lambd, position(ct))) {
    refuse(op, "lambd", lambd, "out of the range of the dtype aten computes it in");
  }
  const torch::stable::Tensor x = to_dtype(self, ct);
  refuse_nan(op, x);
  // in_range: the double holds it exactly
  const Scalar neg(-lambd.to_double());
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::ge", "Tensor", x, number_tensor(neg, ct)),
      tensor_op("aten::le", "Tensor", x, number_tensor(lambd, ct)));
  return where_select(
      inside, number_tensor(Scalar(0), ct), to_dtype(grad_output, ct));
}

/// aten's hardtanh_backward kernel: `min_val < self < max_val ? grad_output
/// : 0` over the common dtype of the two, compared in float for half and
/// bfloat16 with the bounds as floats; as aten::gt, aten::lt,
/// aten::logical_and, aten::where.self and aten::_to_copy. A NaN in self is
/// refused (refuse_nan).
template <typename = void>
inline torch::stable::Tensor hardtanh_backward_select(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& grad_output,
    const Scalar& min_val,
    const Scalar& max_val) {
  check_broadcast(grad_output, self);
  const ScalarType ct = common_dtype(grad_output, self);
  ScalarType cmp = ct;
  if (!kernel_dtype(ct, false, cmp)) {
    no_kernel(op);
  }
  const std::string why = "out of the range of the dtype aten computes it in";
  if (!in_range(min_val, position(cmp))) {
    refuse(op, "min_val", min_val, why);
  }
  if (!in_range(max_val, position(cmp))) {
    refuse(op, "max_val", max_val, why);
  }
  const torch::stable::Tensor x = to_dtype(to_dtype(self, ct), cmp);
  refuse_nan(op, x);
  const torch::stable::Tensor inside = tensor_op(
      "aten::logical_and",
      "",
      tensor_op("aten::gt", "Tensor", x, number_tensor(min_val, cmp)),
      tensor_op("aten::lt", "Tensor", x, number_tensor(max_val, cmp)));
  return where_select(
      inside, to_dtype(grad_output, ct), number_tensor(Scalar(0), ct));
}

// @section backward_raises needs out_inplace
// ---- rows with `backward_raises` (kernels `inplace`, `foreach`): calls
// whose backward aten raises for, which the composition would differentiate
// (shimgen/generate/routes/composition.py) ----

/// Does autograd record an in-place call on `self` as a node of its graph?
/// Grad mode, and self has a grad_fn (aten::is_leaf false). A leaf that
/// requires grad is left to the composition's own calls, which raise aten's
/// in-place error.
template <typename = void>
inline bool records_inplace(const torch::stable::Tensor& self) {
  return aoti_torch_grad_mode_is_enabled() && !without_grad_fn(self);
}

/// The refusal of a call autograd records whose backward aten raises for
/// (`why`): the composition's calls would record a backward that succeeds.
template <typename = void>
[[noreturn]] inline void refuse_backward(const char* op, const char* why) {
  std::string text = std::string("shimgen: ") + op + ": " + why;
  text += ", which this composition would differentiate: call it where ";
  text += "autograd does not record it (no grad mode, or on tensors that ";
  text += "do not require grad), or define SHIMGEN_OVERLAY and link ";
  text += "libshimgen_overlay (rebuilt for each torch release)";
  throw std::runtime_error(text);
}

// @section refuse_aliased needs legacy_shims compositions out_inplace backward_raises
// ---- row keys `refuse_aliased` and `autograd: refused` (kernel `inplace`:
// addmm_ over addmm.default, whose legacy out= shim autograd refuses)
// (shimgen/generate/routes/composition.py) ----

/// aten's in-place error for a leaf `self` that requires grad, raised by aten
/// itself (grad mode only): aten::copy_ of self onto itself, whose autograd
/// check comes before the copy.
template <typename = void>
inline void inplace_leaf_check(const torch::stable::Tensor& self) {
  if (!aoti_torch_grad_mode_is_enabled() || records_inplace(self)) {
    return;
  }
  if (!requires_grad_in_grad_mode(self)) {
    return;
  }
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(self),
       torch::stable::detail::from(false)});
}

/// Refuses self sharing any byte with an input, the very same view included:
/// aten's kernel reads the inputs while it writes self (addmm_ with self as
/// mat1 gives another result than addmm), which the composition (the op out
/// of place, then copy_) cannot follow.
template <typename = void>
inline void refuse_aliased(
    const char* op,
    const torch::stable::Tensor& self,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  for (const torch::stable::Tensor* input : inputs) {
    if (overlaps(self, *input)) {
      std::string why = std::string("shimgen: ") + op;
      why += ": self shares memory with an input, which aten's kernel reads ";
      why += "while it writes self: this composition (the op out of place, ";
      why += "then copy_) cannot compute it as aten does: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a copy";
      throw std::runtime_error(why);
    }
  }
}

/// `t`'s sizes as aten prints them: [2, 3].
template <typename = void>
inline std::string sizes_text(const torch::stable::Tensor& t) {
  int64_t* sizes = nullptr;
  check(aoti_torch_get_sizes(t.get(), &sizes), "aoti_torch_get_sizes");
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) {
    text += (d > 0 ? ", " : "") + std::to_string(sizes[d]);
  }
  return text + "]";
}

/// aten's in-place error for a self of other sizes than the result; refuses
/// a self of the result's sizes but other strides (row key
/// `refuse_strides`): aten computes in self's layout (addmm_ on a transposed
/// self runs the transposed product, which rounds otherwise), the composition
/// in the result's.
template <typename = void>
inline void refuse_strides(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& result) {
  if (!same_sizes(self, result)) {
    std::string why = "Bad in-place call: input tensor size ";
    why += sizes_text(self) + " and output tensor size ";
    why += sizes_text(result) + " should match (aten raises)";
    fail(op, why.c_str());
  }
  int64_t* a = nullptr;
  int64_t* b = nullptr;
  check(aoti_torch_get_strides(self.get(), &a), "aoti_torch_get_strides");
  check(aoti_torch_get_strides(result.get(), &b), "aoti_torch_get_strides");
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (a[d] != b[d]) {
      std::string why = std::string("shimgen: ") + op;
      why += ": self is not laid out as a new contiguous tensor, and aten ";
      why += "computes in self's layout, which rounds otherwise: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a contiguous self";
      throw std::runtime_error(why);
    }
  }
}

// @section rrelu_eval needs legacy_shims compositions
// ---- kernel `rrelu_eval` (rrelu, rrelu_, rrelu_with_noise and its out=,
// in-place and backward overloads): aten's rrelu in eval mode is leaky_relu
// with the slope (lower + upper) / 2; training draws random noise, refused
// (shimgen/generate/routes/composition.py) ----

/// training=true: aten draws the slopes from its generator, which no
/// composition reproduces.
template <typename = void>
inline void rrelu_refuse_training(const char* op, bool training) {
  if (!training) {
    return;
  }
  std::string why = "training=true draws random slopes from aten's ";
  why += "generator, which no libtorch route carries: pass training=false ";
  why += "(eval mode), or define SHIMGEN_OVERLAY and link libshimgen_overlay ";
  why += "(rebuilt for each torch release)";
  fail(op, why.c_str());
}

/// aten's rrelu and rrelu_ check lower <= upper (as doubles: a NaN fails);
/// `finite` (rrelu): torch 2.15 also requires finite bounds, which earlier
/// releases compute with, so a non-finite bound is refused.
template <typename = void>
inline void rrelu_check_bounds(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool finite) {
  const char* names[2] = {"lower", "upper"};
  const Scalar* numbers[2] = {&lower, &upper};
  std::string why = "torch 2.15 raises for a bound that is not finite, ";
  why += "earlier releases compute with it";
  for (int i = 0; i < 2; ++i) {
    const Scalar& n = *numbers[i];
    const bool finite_number = !n.is_complex() && std::isfinite(n.to_double());
    if (finite && !finite_number) {
      refuse(op, names[i], n, why);
    }
  }
  if (lower.is_complex() || upper.is_complex()) {
    return;
  }
  if (!(lower.to_double() <= upper.to_double())) {
    std::string text = "Lower bound should be less than or equal to the ";
    text += "upper bound (aten raises)";
    fail(op, text.c_str());
  }
}

/// The slope aten's rrelu kernel computes in eval mode: (lower + upper) / 2
/// over 0-dim tensors of the numbers (scalar_to_tensor: a double as float64,
/// an integer as int64), which with a floating lower or upper is that sum in
/// double. Two integers (the default dtype's division), a bool or complex
/// number, or an integer no double holds are refused.
template <typename = void>
inline Scalar rrelu_slope(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool training) {
  rrelu_refuse_training(op, training);
  const char* names[2] = {"lower", "upper"};
  const Scalar* numbers[2] = {&lower, &upper};
  const std::string why = "aten computes the slope in its dtype, not a double";
  for (int i = 0; i < 2; ++i) {
    const Scalar& n = *numbers[i];
    const bool integral = n.is_integral();
    const bool held = n.is_floating_point() || (integral && fits_double(n));
    if (!held) {
      refuse(op, names[i], n, why);
    }
  }
  if (!lower.is_floating_point() && !upper.is_floating_point()) {
    std::string text = "with an integer lower and upper aten divides in the ";
    text += "default dtype: pass a floating lower or upper";
    refuse(op, "lower", lower, text);
  }
  return Scalar((lower.to_double() + upper.to_double()) / 2);
}

/// The slope aten's rrelu_with_noise_backward uses in eval mode:
/// (lower.toDouble() + upper.toDouble()) / 2. A complex number is refused.
template <typename = void>
inline Scalar rrelu_backward_slope(
    const char* op,
    const Scalar& lower,
    const Scalar& upper,
    bool training) {
  rrelu_refuse_training(op, training);
  if (lower.is_complex()) {
    refuse(op, "lower", lower, "a complex number");
  }
  if (upper.is_complex()) {
    refuse(op, "upper", upper, "a complex number");
  }
  return Scalar((lower.to_double() + upper.to_double()) / 2.);
}

/// aten's check of the noise tensor: self's sizes.
template <typename = void>
inline void rrelu_noise_check(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& noise) {
  if (!same_sizes(self, noise)) {
    fail(op, "noise tensor shape must match self tensor shape (aten raises)");
  }
}

/// `result` laid out as a new contiguous tensor, as aten's rrelu kernel
/// allocates its output (empty_like with LEGACY_CONTIGUOUS_MEMORY_FORMAT):
/// where its strides differ, aten::copy_ into one (autograd records the copy,
/// whose gradient is the identity).
template <typename = void>
inline torch::stable::Tensor contiguous_result(const torch::stable::Tensor& result) {
  const int64_t n = result.dim();
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  check(aoti_torch_get_sizes(result.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(result.get(), &strides), "aoti_torch_get_strides");
  std::vector<int64_t> want(static_cast<size_t>(n));
  int64_t step = 1;
  bool same = true;
  for (int64_t d = n - 1; d >= 0; --d) {
    want[static_cast<size_t>(d)] = step;
    same = same && strides[d] == step;
    step *= sizes[d] > 1 ? sizes[d] : 1;
  }
  if (same) {
    return result;
  }
  int32_t device_type = 0;
  int32_t device_index = 0;
  check(aoti_torch_get_device_type(result.get(), &device_type), "get_device_type");
  check(aoti_torch_get_device_index(result.get(), &device_index), "get_device_index");
  const int32_t dtype = torch::stable::detail::to<int32_t>(
      torch::stable::detail::from(result.scalar_type()));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          n, sizes, want.data(), dtype, device_type, device_index, &h),
      "aoti_torch_empty_strided");
  torch::stable::Tensor out(h);
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(result),
       torch::stable::detail::from(false)});
  return out;
}

// @section scalars_tensor needs compositions out_inplace
// ---- kernel `scalars_tensor`: an op as its _foreach_ sibling's `.Tensor`
// overload on one-element lists (addcmul, addcdiv and their in-place forms;
// shimgen/generate/routes/composition.py) ----
//
// aten's CPU kernel of _foreach_X.Tensor(self, tensor1, tensor2, Tensor
// scalars) converts each element of the packed 1-D `scalars` tensor back to
// a c10::Scalar of the tensor's own type (convert_tensor_to_scalar_list) and
// calls aten::X(self[i], tensor1[i], tensor2[i], that Scalar): a number held
// by a tensor of its own type (bool, int64, float64, complex128) reaches
// aten's own kernel unchanged, which no double-carrying C shim can promise.

/// The number as a 1-D CPU tensor of one element of its own type, which
/// aten's convert_tensor_to_scalar_list reads back as the very same Scalar.
/// An unsigned number above int64's range is refused (aten reads no uint64
/// tensor back).
template <typename = void>
inline torch::stable::Tensor scalars_tensor(
    const char* op,
    const char* arg,
    const Scalar& s) {
  if (s.kind() == Scalar::Kind::UInt) {
    std::string why = "aten's packed-scalars kernel reads no uint64 tensor ";
    why += "back: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    refuse(op, arg, s, why);
  }
  return dim_op("aten::unsqueeze", "", number_tensor(s, natural_type(s)), 0);
}

/// What the route cannot serve, refused before any call: a call autograd
/// records (grad mode, and an input requiring grad: aten's _foreach_X.Tensor
/// has no derivative, where aten::X has one), and a tensor not on the CPU
/// (other backends' foreach kernels take a fused path computed otherwise; the
/// route is proven on CPU only).
template <typename = void>
inline void check_scalars_route(
    const char* op,
    std::initializer_list<const torch::stable::Tensor*> tensors) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  for (const torch::stable::Tensor* t : tensors) {
    if (!t->is_cpu()) {
      std::string why = "a tensor not on the CPU: its libtorch route (the ";
      why += "_foreach_ kernel on one-element lists) is proven on CPU ";
      why += "tensors only";
      fail(op, (why + remedy).c_str());
    }
  }
  if (records_grad(tensors)) {
    std::string why = "an input requires grad in grad mode: its libtorch ";
    why += "route (the _foreach_ kernel on one-element lists) has no ";
    why += "derivative (run it under torch.no_grad(), as optimizers do)";
    fail(op, (why + remedy).c_str());
  }
}

// @section trapezoid
// ---- kernel `trapezoid_dx`: trapezoid.dx and cumulative_trapezoid.dx as aten
// computes them (Integration.cpp, CompositeImplicitAutograd) ----
//
// The wrappers call the same aten ops in the same order (composition.py
// _trapezoid_body); these are aten's own checks before them, and the sizes of
// the zeros aten returns for an empty dimension.

/// aten's checks of trapezoid(y, dx) / cumulative_trapezoid(y, dx), in its
/// order: a bool `y`, then a complex or bool `dx`.
template <typename = void>
inline void trapezoid_check(
    const char* op,
    const char* name,
    const torch::stable::Tensor& y,
    const Scalar& dx) {
  if (y.scalar_type() == ScalarType::Bool) {
    std::string why = name;
    why += ": received a bool input for `y`, but bool is not supported ";
    why += "(aten raises)";
    fail(op, why.c_str());
  }
  if (dx.is_complex() || dx.is_boolean()) {
    std::string why = name;
    why += ": Currently, we only support dx as a real number (aten raises)";
    fail(op, why.c_str());
  }
}

/// y's sizes without dimension `dim` (aten's zeros_like_except; `dim` was
/// checked by y.size(dim) first, as aten's y.sym_size(dim) checks it).
template <typename = void>
inline std::vector<int64_t> sizes_except(
    const torch::stable::Tensor& y,
    int64_t dim) {
  const int64_t n = y.dim();
  const int64_t wrapped = dim < 0 ? dim + n : dim;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < n; ++i) {
    if (i != wrapped) {
      sizes.push_back(y.size(i));
    }
  }
  return sizes;
}

// @section elu_grad needs legacy_shims compositions out_inplace shrink
// ---- kernel `elu_grad`: aten's elu_backward kernel with is_result=true
// (elu_backward.default; its out= through kernel `out`) ----

/// elu_backward's operands in the dtype aten's kernel computes in (the
/// common dtype of grad_output and self_or_result; float for half and
/// bfloat16), with its coefficients as 0-dim tensors of that dtype:
/// input_scale, scale, and -(alpha * scale) (the product rounded there, as
/// aten's `negcoef`; negated exactly, for aten::sub.Tensor to add it back).
struct SHIMGEN_HIDDEN EluGradOperands {
  torch::stable::Tensor grad;
  torch::stable::Tensor x;
  torch::stable::Tensor negiptcoef;
  torch::stable::Tensor poscoef;
  torch::stable::Tensor minus_negcoef;
  ScalarType t;
};

/// aten's checks and this route's refusals, in aten's order: a negative alpha
/// with is_result (aten raises), then is_result=false (refused: that kernel
/// computes exp in its vectorized body and std::exp in its scalar tail, which
/// no dispatching op reproduces position by position), the broadcast, the
/// dtype (aten has floating kernels only), the numbers (in range of the
/// compute dtype), a call autograd records (refused: aten's derivative of
/// elu_backward is elu_double_backward, not the composition's), and a NaN in
/// self_or_result (refused: aten gives grad_output * scale in its scalar tail
/// and NaN in its vectorized body).
template <typename = void>
inline EluGradOperands elu_grad_operands(
    const char* op,
    const torch::stable::Tensor& grad_output,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale,
    bool is_result,
    const torch::stable::Tensor& self_or_result) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  const std::string complex = "a complex number (aten converts it)";
  if (alpha.is_complex()) {
    refuse(op, "alpha", alpha, complex);
  }
  if (scale.is_complex()) {
    refuse(op, "scale", scale, complex);
  }
  if (input_scale.is_complex()) {
    refuse(op, "input_scale", input_scale, complex);
  }
  if (is_result && !(alpha.to_double() >= 0)) {
    std::string why = "In-place elu backward calculation is triggered with a ";
    why += "negative slope which is not supported (aten raises)";
    fail(op, why.c_str());
  }
  if (!is_result) {
    std::string why = "is_result=false: aten's kernel computes exp in its ";
    why += "vectorized body and std::exp in its scalar tail, which no ";
    why += "libtorch route reproduces element by element";
    fail(op, (why + remedy).c_str());
  }
  check_broadcast(grad_output, self_or_result);
  const ScalarType ct = common_dtype(grad_output, self_or_result);
  ScalarType compute = ct;
  if (!kernel_dtype(ct, false, compute)) {
    no_kernel(op);
  }
  const std::string range = "out of the range of the dtype aten computes it in";
  if (!in_range(alpha, position(compute))) {
    refuse(op, "alpha", alpha, range);
  }
  if (!in_range(scale, position(compute))) {
    refuse(op, "scale", scale, range);
  }
  if (!in_range(input_scale, position(compute))) {
    refuse(op, "input_scale", input_scale, range);
  }
  if (records_grad({&grad_output, &self_or_result})) {
    std::string why = "an input requires grad in grad mode: aten's derivative ";
    why += "of elu_backward (elu_double_backward) is not the composition's";
    fail(op, (why + remedy).c_str());
  }
  const torch::stable::Tensor x =
      to_dtype(to_dtype(self_or_result, ct), compute);
  refuse_nan(op, x);
  const torch::stable::Tensor negcoef = tensor_op(
      "aten::mul",
      "Tensor",
      number_tensor(alpha, compute),
      number_tensor(scale, compute));
  const torch::stable::Tensor minus_negcoef = dispatch_tensors<1>(
      "aten::neg", "", {torch::stable::detail::from(negcoef)});
  const torch::stable::Tensor grad =
      to_dtype(to_dtype(grad_output, ct), compute);
  const torch::stable::Tensor negiptcoef = number_tensor(input_scale, compute);
  const torch::stable::Tensor poscoef = number_tensor(scale, compute);
  return EluGradOperands{grad, x, negiptcoef, poscoef, minus_negcoef, ct};
}

/// aten's elu_backward kernel with is_result=true: `x <= 0 ? grad *
/// input_scale * (x + alpha * scale) : grad * scale` in the operands' dtype,
/// converted to the common dtype; `shifted` is x - (-(alpha * scale)), which
/// IEEE computes as x + alpha * scale, by aten::sub.Tensor's wrapper. As
/// aten::mul.Tensor, aten::le.Tensor, aten::where.self and aten::_to_copy:
/// each step rounds as aten's does (no transcendental function, no fused
/// multiply-add), in its vectorized body and its scalar tail alike.
template <typename = void>
inline torch::stable::Tensor elu_grad_select(
    const EluGradOperands& s,
    const torch::stable::Tensor& shifted) {
  const torch::stable::Tensor negative = tensor_op(
      "aten::mul",
      "Tensor",
      tensor_op("aten::mul", "Tensor", s.grad, s.negiptcoef),
      shifted);
  const torch::stable::Tensor positive =
      tensor_op("aten::mul", "Tensor", s.grad, s.poscoef);
  const ScalarType compute = s.x.scalar_type();
  const torch::stable::Tensor mask =
      tensor_op("aten::le", "Tensor", s.x, number_tensor(Scalar(0), compute));
  // written into `negative`, whose layout is aten's result's: its operands
  // derive from grad_output's and self_or_result's in aten's order, which
  // TensorIterator orders dimensions by (a where.self would follow the mask)
  const torch::stable::Tensor r = dispatch_tensors<4>(
      "aten::where",
      "self_out",
      {torch::stable::detail::from(mask),
       torch::stable::detail::from(negative),
       torch::stable::detail::from(positive),
       torch::stable::detail::from(negative)});
  return to_dtype(r, s.t);
}

// @section add_relu needs legacy_shims compositions out_inplace shrink
// ---- kernel `add_relu` (_add_relu.Tensor; its out=, in-place and Scalar
// forms through kernels `out`, `inplace`, `wrapped_numbers`): aten's
// add_relu with alpha 1 ----

/// _add_relu's bounds as 0-dim tensors of the common dtype (0, and the
/// largest value of self's dtype, converted as aten's Scalar::to does), and
/// the alpha 1 that aten::add.Tensor's wrapper takes for that dtype (an
/// integer one for integral tensors, a double for floating ones).
struct SHIMGEN_HIDDEN AddReluOperands {
  Scalar one;
  torch::stable::Tensor lo;
  torch::stable::Tensor hi;
  ScalarType t;
};

/// One bool of a tensor of bools: aten::any, then aten::is_nonzero (read
/// from any device).
template <typename = void>
inline bool any_true(const torch::stable::Tensor& mask) {
  const torch::stable::Tensor any =
      dispatch_tensors<1>("aten::any", "", {torch::stable::detail::from(mask)});
  std::array<StableIValue, 1> stack{torch::stable::detail::from(any)};
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  check(
      torch_call_dispatcher(
          "aten::is_nonzero", "", stack.data(), TORCH_ABI_VERSION),
      "aten::is_nonzero");
#else
  check(
      aoti_torch_call_dispatcher("aten::is_nonzero", "", stack.data()),
      "aten::is_nonzero");
#endif
  return torch::stable::detail::to<bool>(stack[0]);
}

/// aten's checks of add_relu in its order (the broadcast, self's dtype among
/// int8/16/32/64, float and double, the common dtype among the ones its
/// kernel has, the upper bound's conversion), then this route's refusals: an
/// alpha other than 1 (aten's vectorized body computes `a + alpha * b` as a
/// fused multiply-add, which no composition rounds alike) and a call
/// autograd records (aten has no derivative for _add_relu: its backward
/// raises, where the composition's would compute one).
template <typename = void>
inline AddReluOperands add_relu_operands(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& other,
    const Scalar& alpha) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  check_broadcast(self, other);
  int64_t int_limit = 0;
  double float_limit = 0;
  switch (self.scalar_type()) {
    case ScalarType::Char:
      int_limit = std::numeric_limits<int8_t>::max();
      break;
    case ScalarType::Short:
      int_limit = std::numeric_limits<int16_t>::max();
      break;
    case ScalarType::Int:
      int_limit = std::numeric_limits<int32_t>::max();
      break;
    case ScalarType::Long:
      int_limit = std::numeric_limits<int64_t>::max();
      break;
    case ScalarType::Float:
      float_limit = std::numeric_limits<float>::max();
      break;
    case ScalarType::Double:
      float_limit = std::numeric_limits<double>::max();
      break;
    default:
      fail(op, "Unsupported datatype for add_relu (aten raises)");
  }
  const ScalarType t = common_dtype(self, other);
  ScalarType compute = t;
  if (!kernel_dtype(t, true, compute) || compute != t) {
    no_kernel(op);
  }
  const bool floating = t == ScalarType::Float || t == ScalarType::Double;
  Scalar hi(int64_t(0));
  const double float_max = std::numeric_limits<float>::max();
  // a double self, a float common dtype
  if (t == ScalarType::Float && float_limit > float_max) {
    std::string why = "value cannot be converted to type float without ";
    why += "overflow (aten raises)";
    fail(op, why.c_str());
  }
  // a floating self: a floating common dtype; an integral self's limit
  // converted to a floating one; or an integral one
  if (float_limit != 0) {
    hi = Scalar(float_limit);
  } else if (t == ScalarType::Float) {
    hi = Scalar(static_cast<double>(static_cast<float>(int_limit)));
  } else if (floating) {
    hi = Scalar(static_cast<double>(int_limit));
  } else {
    hi = Scalar(int_limit);
    if (!in_range(hi, position(t))) {
      std::string why = "value cannot be converted to the result's type ";
      why += "without overflow (aten raises)";
      fail(op, why.c_str());
    }
  }
  if (alpha.is_complex() || alpha.to_double() != 1) {
    std::string why = "only alpha=1 has a libtorch route: aten's vectorized ";
    why += "body computes `self + alpha * other` as a fused multiply-add, ";
    why += "which no composition rounds alike";
    refuse(op, "alpha", alpha, why + remedy);
  }
  if (records_grad({&self, &other})) {
    std::string why = "an input requires grad in grad mode: aten has no ";
    why += "derivative for it (its backward raises), where the composition ";
    why += "would compute one";
    fail(op, (why + remedy).c_str());
  }
  const Scalar one = floating ? Scalar(1.0) : Scalar(int64_t(1));
  const torch::stable::Tensor lo = number_tensor(Scalar(int64_t(0)), t);
  return AddReluOperands{one, lo, number_tensor(hi, t), t};
}

/// aten's add_clamp kernel with alpha 1: `min(max(self + other, 0), hi)`
/// over the common dtype, given `sum` (self + other by aten::add.Tensor's
/// wrapper); as aten::clamp.Tensor. A floating sum holding a NaN or -0.0 is
/// refused: aten's kernel gives 0 for them in its scalar tail and NaN / -0.0
/// in its vectorized body (aten::isnan, aten::eq, aten::signbit,
/// aten::logical_and, aten::logical_or, aten::any and aten::is_nonzero).
template <typename = void>
inline torch::stable::Tensor add_relu_select(
    const char* op,
    const AddReluOperands& s,
    const torch::stable::Tensor& sum) {
  if (s.t == ScalarType::Float || s.t == ScalarType::Double) {
    const torch::stable::Tensor nan = dispatch_tensors<1>(
        "aten::isnan", "", {torch::stable::detail::from(sum)});
    const torch::stable::Tensor negative_zero = tensor_op(
        "aten::logical_and",
        "",
        tensor_op("aten::eq", "Tensor", sum, s.lo),
        dispatch_tensors<1>(
            "aten::signbit", "", {torch::stable::detail::from(sum)}));
    if (any_true(tensor_op("aten::logical_or", "", nan, negative_zero))) {
      std::string why = "self + other holds a NaN or -0.0, where aten's ";
      why += "kernel gives 0 or NaN / -0.0 depending on the element's ";
      why += "position in its vectorized loop: define SHIMGEN_OVERLAY ";
      why += "and link libshimgen_overlay (rebuilt for each torch release)";
      fail(op, why.c_str());
    }
  }
  const std::optional<torch::stable::Tensor> lo(s.lo);
  const std::optional<torch::stable::Tensor> hi(s.hi);
  return dispatch_tensors<3>(
      "aten::clamp",
      "Tensor",
      {torch::stable::detail::from(sum),
       torch::stable::detail::from(lo),
       torch::stable::detail::from(hi)});
}

// @section refuse_cast needs compositions
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

// @section factory_outs needs legacy_shims compositions out_inplace
// ---- kernels `range_out` and `full_out`: the factories' out= overloads as
// aten computes them (arange.out, arange.start_out, range.out, range.out_,
// full.out; linspace.out / logspace.out's out check; shimgen/generate/routes/composition.py) ----

/// aten's autograd rule for a factory's out (autograd's fallback for an op
/// without a derivative): in grad mode a leaf out that requires grad raises;
/// one with a grad_fn gets a backward that raises, which this composition
/// (whose copy_ autograd would record) refuses.
template <typename = void>
inline void check_factory_out_autograd(const char* op, const torch::stable::Tensor& out) {
  if (!records_grad({&out})) {
    return;
  }
  if (without_grad_fn(out)) {
    std::string why = std::string("shimgen: ") + op;
    why += ": functions with out=... arguments don't support ";
    why += "automatic differentiation, but one of the arguments ";
    why += "requires grad (aten raises)";
    throw std::runtime_error(why);
  }
  std::string why = "out requires grad and has a grad_fn in grad mode, where ";
  why += "aten records a backward that raises and this composition would ";
  why += "record copy_'s: call it under no_grad, or pass an out that does ";
  why += "not require grad";
  fail(op, why.c_str());
}

/// Raises, naming the remedy, where a range factory's out is not on the CPU
/// (the range factory route's calls are proven against aten's CPU kernel, which
/// accumulates in double; CUDA's accumulates a float range in float).
template <typename = void>
inline void refuse_not_cpu(const char* op, const torch::stable::Tensor& out) {
  if (!out.is_cpu()) {
    std::string why = "out is not on the CPU, where this composition is ";
    why += "proven only: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// Raises, naming the remedy, where out is on the meta device: there aten's
/// X.Tensor_Tensor_out is a Python reference (torch._refs), which refuses the
/// CPU 0-dim numbers as a cross-device copy, where aten's Scalar overload
/// takes them. On every other device it is aten's C++ kernel, which reads
/// them with .item() and calls the Scalar overload's kernel on out's device.
template <typename = void>
inline void refuse_meta_out(const char* op, const torch::stable::Tensor& out) {
  int32_t device_type = 0;
  check(aoti_torch_get_device_type(out.get(), &device_type), "get_device_type");
  if (device_type == aoti_torch_device_type_meta()) {
    std::string why = "out is on the meta device, where aten computes the ";
    why += "Tensor overload this route calls in Python, which refuses CPU ";
    why += "numbers: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// Sets grad mode back to `was` when it goes out of scope.
struct GradModeRestore {
  bool was = false;
  ~GradModeRestore() {
    aoti_torch_grad_mode_set_enabled(was);
  }
};

/// Does `t` require grad, in grad mode or not (grad mode enabled for the
/// question, then restored)?
template <typename = void>
inline bool requires_grad_any_mode(const torch::stable::Tensor& t) {
  const GradModeRestore restore{aoti_torch_grad_mode_is_enabled()};
  aoti_torch_grad_mode_set_enabled(true);
  return requires_grad_in_grad_mode(t);
}

/// out.resize_(like's sizes), quiet, as aten's factory kernels resize their
/// out (aten::resize_as_); refused on an out that requires grad, which
/// resize_as_ refuses above aten's kernel while the kernel does not.
template <typename = void>
inline void resize_quiet(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& like) {
  if (requires_grad_any_mode(out)) {
    std::string why = "out requires grad and must be resized, which ";
    why += "aten::resize_as_ refuses where aten's kernel does not: pass an ";
    why += "out of the result's size, or define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
  dispatch_tensors<3>(
      "aten::resize_as_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(like),
       torch::stable::detail::from(std::nullopt)});
}

/// aten's rules for the out of arange_out / range_out around `result` (the
/// range in out's dtype on out's device, contiguous): where out's number of
/// elements differs, out is resized to the range's length (`warns`, arange:
/// by aten::where.self_out(true, result, result, out), TensorIterator's
/// resize_output, whose warning on a non-empty out stands for arange's own,
/// refused where out writes an element twice, which TensorIterator refuses;
/// range: resize_quiet); else out keeps its shape and gets the elements in
/// its row-major order (aten::view_as, aten::copy_), as aten computes a
/// non-contiguous out in a contiguous copy.
template <typename = void>
inline torch::stable::Tensor& range_out_assign(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result,
    bool warns) {
  if (out.numel() != result.numel()) {
    if (!warns) {
      resize_quiet(op, out, result);
    } else if (written_twice(out)) {
      std::string why = "out writes an element twice and must be resized, ";
      why += "which this composition cannot do as aten does: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a new tensor";
      fail(op, why.c_str());
    } else {
      write_resized(out, result);
      return out;
    }
  }
  torch::stable::Tensor shaped = result;
  if (!same_sizes(out, result)) {
    shaped = dispatch_tensors<2>(
        "aten::view_as",
        "",
        {torch::stable::detail::from(result), torch::stable::detail::from(out)});
  }
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(shaped),
       torch::stable::detail::from(false)});
  return out;
}

/// aten's full_out resize: where out's sizes differ from `size`,
/// out.resize_(size) (resize_quiet, like a new contiguous tensor of those
/// sizes, out's dtype and device).
template <typename = void>
inline void full_out_resize(
    const char* op,
    torch::stable::Tensor& out,
    const int64_t* size,
    size_t n) {
  int64_t* sizes = nullptr;
  check(aoti_torch_get_sizes(out.get(), &sizes), "aoti_torch_get_sizes");
  bool same = static_cast<size_t>(out.dim()) == n;
  for (size_t d = 0; same && d < n; ++d) {
    same = sizes[d] == size[d];
  }
  if (same) {
    return;
  }
  std::vector<int64_t> strides(n, 1);
  for (size_t d = n; d > 1; --d) {
    strides[d - 2] = strides[d - 1] * (size[d - 1] > 1 ? size[d - 1] : 1);
  }
  int32_t device_type = 0;
  int32_t device_index = 0;
  check(aoti_torch_get_device_type(out.get(), &device_type), "get_device_type");
  check(aoti_torch_get_device_index(out.get(), &device_index), "get_device_index");
  const int32_t dtype = torch::stable::detail::to<int32_t>(
      torch::stable::detail::from(out.scalar_type()));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          static_cast<int64_t>(n),
          size,
          strides.data(),
          dtype,
          device_type,
          device_index,
          &h),
      "aoti_torch_empty_strided");
  resize_quiet(op, out, torch::stable::Tensor(h));
}

// @section fill_diagonal
// ---- kernel `fill_diagonal`: aten's fill_diagonal_ (a composite of
// aten::as_strided and aten::fill_; shimgen/generate/routes/composition.py) ----

/// The views aten's fill_diagonal_ fills: the main diagonal (`size`
/// elements, `stride` apart, from `offset`), and where it wraps (`wrap`, 2-D,
/// height > width + 1) `wrap_size` more from `wrap_offset` (-1: none).
struct DiagonalViews {
  int64_t size = 0;
  int64_t stride = 0;
  int64_t offset = 0;
  int64_t wrap_size = -1;
  int64_t wrap_offset = 0;
};

/// aten's fill_diagonal_ geometry and checks (its messages), from self's
/// sizes, strides and storage offset.
template <typename = void>
inline DiagonalViews fill_diagonal_views(
    const char* op,
    const torch::stable::Tensor& self,
    bool wrap) {
  const int64_t dims = self.dim();
  if (dims < 2) {
    fail(op, "dimensions must larger than 1 (aten raises)");
  }
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  DiagonalViews v;
  check(aoti_torch_get_sizes(self.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(self.get(), &strides), "aoti_torch_get_strides");
  check(
      aoti_torch_get_storage_offset(self.get(), &v.offset),
      "aoti_torch_get_storage_offset");
  const int64_t height = sizes[0];
  const int64_t width = sizes[1];
  for (int64_t d = 1; dims > 2 && d < dims; ++d) {
    if (sizes[d] != height) {
      fail(op, "all dimensions of input must be of equal length (aten raises)");
    }
  }
  for (int64_t d = 0; d < dims; ++d) {
    v.stride += strides[d];
  }
  v.size = height < width ? height : width;
  if (wrap && dims == 2 && height > width + 1) {
    const int64_t step = width + 1;
    v.wrap_size = (height * width + step - 1) / step - v.size;
    v.wrap_offset = v.offset + strides[0] * (width + 1);
  }
  return v;
}

// @section scatter_value_reduce needs compositions
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

// @section index_add_one needs legacy_shims compositions out_inplace
// ---- kernel `index_add_one`: index_add with alpha 1 as scatter_add
// (index_add.default, index_add_.default, index_add.out;
// shimgen/generate/routes/composition.py) ----

/// Raises aten's index_add error (its message, then "(aten raises)").
template <typename = void>
[[noreturn]] inline void index_add_fails(const char* op, const char* why) {
  std::string text = std::string("shimgen: ") + op + ": index_add_(): ";
  throw std::runtime_error(text + why + " (aten raises)");
}

/// The index aten::scatter_add reads where aten's index_add adds source's
/// slice i into self's slice index[i] along dim: index as int64, unsqueezed
/// around dim and expanded to source's shape, then laid out contiguously (an
/// expanded index would take scatter_add's sorted fast path, which sums in
/// another order). First aten's index_add checks, in its order and with its
/// messages, and the route's refusals: alpha other than 1 (aten fuses
/// `self + alpha * source` in one rounding), half, bfloat16 and complex (aten
/// adds the former in float per step, multiplies the latter by alpha: inf
/// becomes nan), a tensor not on the CPU, and `written` (self in place, out)
/// sharing memory with index.
template <typename = void>
inline torch::stable::Tensor index_add_index(
    const char* op,
    const torch::stable::Tensor* written,
    const torch::stable::Tensor& self,
    int64_t dim,
    const torch::stable::Tensor& index,
    const torch::stable::Tensor& source,
    const Scalar& alpha) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link libshimgen_overlay";
  remedy += " (rebuilt for each torch release)";
  if (!(is_int(alpha, 1) || is_double(alpha, 1.0))) {
    std::string why = "only alpha=1 has a libtorch route (aten::scatter_add, ";
    why += "which adds as aten's index_add does; aten computes self + alpha * ";
    why += "source in one rounding)";
    refuse(op, "alpha", alpha, why + remedy);
  }
  const ScalarType t = self.scalar_type();
  bool rounds = t == ScalarType::Half || t == ScalarType::BFloat16;
  rounds = rounds || t == ScalarType::ComplexHalf;
  rounds = rounds || t == ScalarType::ComplexFloat;
  rounds = rounds || t == ScalarType::ComplexDouble;
  if (rounds) {
    std::string why = "a half, bfloat16 or complex self: aten's index_add ";
    why += "rounds each addition of reduced types its own way, and multiplies ";
    why += "complex source by alpha (inf * (1+0j) is nan)";
    fail(op, (why + remedy).c_str());
  }
  const bool cpu = self.is_cpu() && index.is_cpu() && source.is_cpu();
  if (!cpu) {
    std::string why = "a tensor not on the CPU: the route is proven on CPU";
    why += " only";
    fail(op, (why + remedy).c_str());
  }
  const int64_t sdim = self.dim() > 0 ? self.dim() : 1;
  if (dim < -sdim || dim >= sdim) {
    index_add_fails(op, "Dimension out of range");
  }
  const int64_t d = dim < 0 ? dim + sdim : dim;
  if (index.dim() > 1) {
    index_add_fails(op, "Index is supposed to be a vector");
  }
  const ScalarType it = index.scalar_type();
  if (it != ScalarType::Long && it != ScalarType::Int) {
    index_add_fails(op, "Expected dtype int32/int64 for index");
  }
  if (source.scalar_type() != t) {
    index_add_fails(op, "self and source must have the same scalar type");
  }
  if (!(d == 0 || d < source.dim())) {
    index_add_fails(op, "Indexing dim is out of bounds of source");
  }
  int64_t* ss = nullptr;
  int64_t* xs = nullptr;
  check(aoti_torch_get_sizes(source.get(), &ss), "aoti_torch_get_sizes");
  check(aoti_torch_get_sizes(self.get(), &xs), "aoti_torch_get_sizes");
  const int64_t wanted = source.dim() == 0 ? 1 : ss[d];
  if (index.numel() != wanted) {
    index_add_fails(op, "Number of indices should equal source.size(dim)");
  }
  // aten compares the sizes with dim left out where both have dims, else all
  bool shapes = self.dim() == source.dim();
  for (int64_t k = 0; shapes && k < self.dim(); ++k) {
    shapes = k == d || xs[k] == ss[k];
  }
  if (!shapes) {
    index_add_fails(op, "source slice shape mismatch");
  }
  if (written != nullptr && overlaps(*written, index)) {
    std::string why = "the tensor written shares memory with index";
    fail(op, (why + remedy).c_str());
  }
  torch::stable::Tensor idx = to_dtype(index, ScalarType::Long);
  if (source.dim() == 0 && idx.dim() == 1) {
    idx = dim_op("aten::squeeze", "dim", idx, 0);
  }
  if (source.dim() > 0 && idx.dim() == 0) {
    idx = dim_op("aten::unsqueeze", "", idx, 0);
  }
  for (int64_t k = 0; source.dim() > 0 && k < d; ++k) {
    idx = dim_op("aten::unsqueeze", "", idx, 0);
  }
  for (int64_t k = d + 1; k < source.dim(); ++k) {
    idx = dim_op("aten::unsqueeze", "", idx, -1);
  }
  if (source.dim() > 0) {
    idx = tensor_op("aten::expand_as", "", idx, source);
  }
  const StableIValue none = torch::stable::detail::from(std::nullopt);
  return dispatch_tensors<2>(
      "aten::clone", "", {torch::stable::detail::from(idx), none});
}

// @section runtime_checks needs legacy_shims
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

// @section addbmm_loop needs legacy_shims out_inplace
// ---- kernel `addbmm_loop`: aten's CPU addbmm (addbmm, addbmm_, addbmm.out),
// which is itself a loop of addmm_ (LinearAlgebra.cpp addbmm_impl_): the same
// calls in the same order, each addmm_ as libtorch's legacy addmm_out shim
// with out = self = the result (the very call addmm_ makes) ----

/// The size of `t`'s dimension `dim` (not negative), with aten's error where
/// t has no such dimension (c10's maybe_wrap_dim).
template <typename = void>
inline int64_t dim_size(
    const char* op,
    const torch::stable::Tensor& t,
    int64_t dim) {
  const int64_t n = t.dim();
  if (n == 0) {
    std::string why = "Dimension specified as " + std::to_string(dim);
    why += " but tensor has no dimensions (aten raises)";
    fail(op, why.c_str());
  }
  if (dim >= n) {
    std::string why = "Dimension out of range (expected to be in range of [";
    why += std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got ";
    why += std::to_string(dim) + ") (aten raises)";
    fail(op, why.c_str());
  }
  return t.size(dim);
}

/// Where autocast computes a matrix product of `like`'s dtype in another
/// dtype (aten::mm's autocast policy, addbmm's too, probed on empty tensors
/// like `like`): an empty tensor of that dtype and like's device, for
/// autocast_like; nullopt where there is no autocast (like's own dtype, or a
/// dtype autocast leaves alone: no probe).
template <typename = void>
inline std::optional<torch::stable::Tensor> autocast_target(
    const torch::stable::Tensor& like) {
  const ScalarType t = like.scalar_type();
  if (!is_floating(position(t)) || t == ScalarType::Double) {
    return std::nullopt;
  }
  torch::stable::Tensor out = dispatch_probe("aten::mm", like, like);
  if (out.scalar_type() == t) {
    return std::nullopt;
  }
  return out;
}

// Lists cross the dispatcher from 2.10 (the addbmm wrappers exist from then).
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's empty({0}, self.options()): the functional form's result before
/// it is resized (aten::new_empty).
template <typename = void>
inline torch::stable::Tensor new_empty_of(const torch::stable::Tensor& self) {
  return dispatch_tensors<6>(
      "aten::new_empty",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(std::vector<int64_t>{0}),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt),
       torch::stable::detail::from(std::nullopt)});
}

#endif

/// Batch `b` of `t` (aten::select.int(t, 0, b)).
template <typename = void>
inline torch::stable::Tensor batch_of(
    const torch::stable::Tensor& t,
    int64_t b) {
  return dispatch_tensors<3>(
      "aten::select",
      "int",
      {torch::stable::detail::from(t),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(b)});
}

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's addbmm_out(self, batch1, batch2, beta, alpha, result) on the CPU up
/// to its loop: self expanded to the product's shape (expand_size), aten's
/// checks in its order and words, result resized as the expanded self and
/// given its values where beta is not zero; for no batch, result * beta
/// (zeros for beta 0; a beta other than 0 or 1 is refused there). Returns the
/// number of batches, for which the wrapper then calls addmm.out's wrapper
/// (libtorch's legacy addmm_out shim) with out = self = result, beta for the
/// first and 1 after: the addmm_ calls aten makes. A call autograd records
/// (aten's derivative is addbmm's own; the shim is an out= call) and a tensor
/// not on the CPU (CUDA computes one gemm) are refused.
template <typename = void>
inline int64_t addbmm_prepare(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& batch1,
    const torch::stable::Tensor& batch2,
    const Scalar& beta,
    const torch::stable::Tensor& result,
    bool result_is_self) {
  std::string remedy = ": define SHIMGEN_OVERLAY and link libshimgen_overlay ";
  remedy += "(rebuilt for each torch release)";
  const bool cpu = self.is_cpu() && batch1.is_cpu() && batch2.is_cpu();
  if (!cpu || !result.is_cpu()) {
    std::string why = "a tensor not on the CPU, where aten computes addbmm as ";
    why += "one gemm and this route is proven on the CPU only" + remedy;
    fail(op, why.c_str());
  }
  if (records_grad({&self, &batch1, &batch2, &result})) {
    std::string why = "autograd would record the call (grad mode, an input ";
    why += "requiring grad): aten's derivative is addbmm's own, this ";
    why += "route's calls are out= calls; run it under torch.no_grad()";
    why += remedy;
    fail(op, why.c_str());
  }
  const int64_t rows = dim_size(op, batch1, 1);
  const int64_t cols = dim_size(op, batch2, 2);
  const torch::stable::Tensor expanded = dispatch_tensors<3>(
      "aten::expand",
      "",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(std::vector<int64_t>{rows, cols}),
       torch::stable::detail::from(false)});
  if (batch1.dim() != 3) {
    fail(op, "batch1 must be a 3D tensor (aten raises)");
  }
  if (batch2.dim() != 3) {
    fail(op, "batch2 must be a 3D tensor (aten raises)");
  }
  if (batch1.size(0) != batch2.size(0)) {
    std::string why = "batch1 and batch2 must have same number of batches, ";
    why += "got " + std::to_string(batch1.size(0)) + " and ";
    why += std::to_string(batch2.size(0)) + " (aten raises)";
    fail(op, why.c_str());
  }
  if (batch1.size(2) != batch2.size(1)) {
    std::string why = "Incompatible matrix sizes for bmm (";
    why += std::to_string(batch1.size(1)) + "x";
    why += std::to_string(batch1.size(2)) + " and ";
    why += std::to_string(batch2.size(1)) + "x";
    why += std::to_string(batch2.size(2)) + ") (aten raises)";
    fail(op, why.c_str());
  }
  const bool shaped = self.dim() == 2 && self.size(0) == rows;
  if (result_is_self && !(shaped && self.size(1) == cols)) {
    std::string why = "self does not have the product's shape, where aten ";
    why += "resizes self to its own expansion" + remedy;
    fail(op, why.c_str());
  }
  const torch::stable::Tensor resized = dispatch_tensors<3>(
      "aten::resize_as_",
      "",
      {torch::stable::detail::from(result),
       torch::stable::detail::from(expanded),
       torch::stable::detail::from(std::nullopt)});
  const std::complex<double> b = beta.to_complex();
  const bool beta_zero = b == std::complex<double>(0.0, 0.0);
  if (!beta_zero && !result_is_self) {
    const torch::stable::Tensor copied = dispatch_tensors<3>(
        "aten::copy_",
        "",
        {torch::stable::detail::from(result),
         torch::stable::detail::from(expanded),
         torch::stable::detail::from(false)});
  }
  const int64_t batches = batch1.size(0);
  if (batches == 0 && beta_zero) {
    const torch::stable::Tensor zeros =
        dispatch_tensors<1>("aten::zero_", "", {torch::stable::detail::from(result)});
  }
  if (batches == 0 && !beta_zero && b != std::complex<double>(1.0, 0.0)) {
    std::string why = "no batch and a beta other than 0 or 1, which aten ";
    why += "multiplies self by as a wrapped number" + remedy;
    fail(op, why.c_str());
  }
  return batches;
}
#endif

// @section item_scalar needs legacy_shims
// ---- kernels `item_scalar` and `first_scalar` (item, _local_scalar_dense):
// libtorch's aoti_torch_item_<dtype> shims (shim.h) ----

/// aten::item / aten::_local_scalar_dense (kernel `item_scalar`): libtorch's
/// C shim aoti_torch_item_<dtype> of self's dtype (shim.h, exported from 2.9:
/// each calls Tensor::item(), a dispatching call, and reads the number in
/// that dtype's own C type), given the kind aten's Scalar has for that dtype:
/// a bool, an integer (a uint64 beyond int64's range stays unsigned), a
/// floating-point number (float16 and bfloat16 widened exactly) or a complex
/// one. libtorch has no such shim for complex128 and the other dtypes: those
/// raise an error.
template <typename T, typename Shim>
inline Scalar item_of(AtenTensorHandle h, Shim shim) {
  T value{};
  if (shim(h, &value) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
  return Scalar(value);
}

template <typename = void>
inline Scalar item_scalar_select(
    const char* op,
    const torch::stable::Tensor& self) {
  AtenTensorHandle h = self.get();
  switch (self.scalar_type()) {
    case ScalarType::Bool:
      return item_of<bool>(h, aoti_torch_item_bool);
    case ScalarType::Byte:
      return item_of<uint8_t>(h, aoti_torch_item_uint8);
    case ScalarType::Char:
      return item_of<int8_t>(h, aoti_torch_item_int8);
    case ScalarType::Short:
      return item_of<int16_t>(h, aoti_torch_item_int16);
    case ScalarType::Int:
      return item_of<int32_t>(h, aoti_torch_item_int32);
    case ScalarType::Long:
      return item_of<int64_t>(h, aoti_torch_item_int64);
    case ScalarType::UInt16:
      return item_of<uint16_t>(h, aoti_torch_item_uint16);
    case ScalarType::UInt32:
      return item_of<uint32_t>(h, aoti_torch_item_uint32);
    case ScalarType::UInt64:
      return item_of<uint64_t>(h, aoti_torch_item_uint64);
    case ScalarType::Half:
      return item_of<c10::Half>(h, aoti_torch_item_float16);
    case ScalarType::BFloat16:
      return item_of<c10::BFloat16>(h, aoti_torch_item_bfloat16);
    case ScalarType::Float:
      return item_of<float>(h, aoti_torch_item_float32);
    case ScalarType::Double:
      return item_of<double>(h, aoti_torch_item_float64);
    case ScalarType::ComplexFloat:
      return item_of<c10::complex<float>>(h, aoti_torch_item_complex64);
    default:
      break;
  }
  std::string why = "libtorch has no item C shim for this dtype (complex128, ";
  why += "float8 and the others aoti_torch_item_* does not cover): define ";
  why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
  why += "torch release)";
  fail(op, why.c_str());
}

/// aten::_local_scalar_dense (kernel `first_scalar`): the number at self's
/// data pointer, which is the element at index (0, ..., 0) of a tensor of any
/// size (item raises where there is more than one): item_scalar_select of
/// aten::select.int(aten::flatten.using_ints(self), 0, 0). An empty self
/// raises aten's error, checked first.
template <typename = void>
inline Scalar first_scalar_select(
    const char* op,
    const torch::stable::Tensor& self) {
  if (self.numel() == 0) {
    fail(op, "_local_scalar_dense: Empty tensor not supported (aten raises)");
  }
  const torch::stable::Tensor flat = dispatch_tensors<3>(
      "aten::flatten",
      "using_ints",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(-1))});
  const torch::stable::Tensor first = dispatch_tensors<3>(
      "aten::select",
      "int",
      {torch::stable::detail::from(flat),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(0))});
  return item_scalar_select(op, first);
}

// @section pad_packed
// ---- kernel `pad_packed` (_pad_packed_sequence): aten's
// CompositeImplicitAutograd function (PackedSequence.cpp) ----
//
// The wrapper makes aten's dispatching calls in aten's order, each by its
// wrapper (composition.py _pad_packed_body); these are aten's checks, the
// output's sizes, and the lengths aten writes through a pointer. Lists cross
// the dispatcher from 2.10, so the wrapper exists from then.

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's checks of the contiguous batch_sizes, in its order (a 1-D CPU int64
/// tensor; not empty, which 2.9 does not check before reading it), then its
/// values, read from its data as aten reads them.
template <typename = void>
inline std::vector<int64_t> pad_packed_sizes(
    const char* op,
    const torch::stable::Tensor& sizes) {
  const bool is_long = sizes.scalar_type() == ScalarType::Long;
  if (!(sizes.dim() == 1 && sizes.is_cpu() && is_long)) {
    std::string why = "'lengths' argument should be a 1D CPU int64 tensor ";
    why += "(aten raises)";
    fail(op, why.c_str());
  }
  if (sizes.numel() == 0) {
    fail(op, "batch_sizes can not be empty (aten raises)");
  }
  const int64_t* first = static_cast<const int64_t*>(sizes.data_ptr());
  return std::vector<int64_t>(first, first + sizes.numel());
}

/// The output's length: total_length where it is positive, after aten's check
/// that it is at least the longest sequence's (the number of batch sizes).
template <typename = void>
inline int64_t pad_packed_length(
    const char* op,
    const std::vector<int64_t>& sizes,
    int64_t total_length) {
  const int64_t longest = static_cast<int64_t>(sizes.size());
  if (total_length > 0 && total_length < longest) {
    std::string why = "Expected total_length to be at least the length of the ";
    why += "longest sequence in input, but got total_length=";
    why += std::to_string(total_length);
    why += " and max sequence length being ";
    why += std::to_string(longest);
    why += " (aten raises)";
    fail(op, why.c_str());
  }
  return total_length > 0 ? total_length : longest;
}

/// aten's output sizes, [length, max batch size, data's sizes after the
/// first]; a 0-dim data raises aten's error (it slices data's empty sizes).
template <typename = void>
inline std::vector<int64_t> pad_packed_output_size(
    const char* op,
    const torch::stable::Tensor& data,
    int64_t length,
    int64_t max_batch_size) {
  if (data.dim() == 0) {
    fail(op, "ArrayRef: invalid slice, N = 1; size = 0 (aten raises)");
  }
  std::vector<int64_t> size;
  size.push_back(length);
  size.push_back(max_batch_size);
  for (int64_t d = 1; d < data.dim(); ++d) {
    size.push_back(data.size(d));
  }
  return size;
}

/// Batch sizes that never grow and are never negative: aten writes one length
/// per unit of decrease from the last element of its lengths tensor down, so
/// for others it writes out of that tensor's bounds or leaves elements
/// unwritten (what it returns is not defined): refused.
template <typename = void>
inline void pad_packed_check_runs(
    const char* op,
    const std::vector<int64_t>& sizes) {
  int64_t before = sizes[0];
  for (const int64_t size : sizes) {
    if (size < 0 || size > before) {
      std::string why = "batch_sizes that grow or are negative, for which ";
      why += "aten writes its lengths out of bounds or leaves them ";
      why += "unwritten";
      fail(op, why.c_str());
    }
    before = size;
  }
}

/// aten's lengths: for each step i where the batch size falls, i once per
/// sequence that ends there, written from the last element down.
template <typename = void>
inline void pad_packed_lengths(
    const torch::stable::Tensor& lengths,
    const std::vector<int64_t>& sizes) {
  int64_t* out = static_cast<int64_t*>(lengths.data_ptr());
  int64_t next = lengths.numel() - 1;
  const int64_t n = static_cast<int64_t>(sizes.size());
  int64_t before = sizes[0];
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t batch = i != n ? sizes[i] : 0;
    for (int64_t j = batch; j < before; ++j) {
      out[next] = i;
      --next;
    }
    before = batch;
  }
}
#endif

// @section matrix_norm
// ---- kernel `matrix_norm_two`: linalg_matrix_norm with a number ord as aten
// computes it (LinearAlgebra.cpp, CompositeImplicitAutograd) ----
//
// For ord = 2 or -2 aten computes the largest or smallest singular value:
// amax / amin(linalg_svdvals(A.permute(the two dims last)), -1). The wrappers
// make the same calls in the same order (composition.py _matrix_norm_body);
// these are aten's checks before them and its two permutations. Its other
// orders (1, -1, inf, -inf) take linalg_vector_norm with ord 1, which no
// libtorch route carries: they raise an error naming the remedy.

/// Whether aten's linalg_matrix_norm takes `dtype` for an input of dtype `t`
/// (float, double, complex64 or complex128): of the input's kind and
/// convertible from it without narrowing (check_linalg_norm_dtype).
template <typename = void>
inline bool matrix_norm_dtype(ScalarType t, ScalarType dtype) {
  if (t == ScalarType::Float) {
    return dtype == ScalarType::Float || dtype == ScalarType::Double;
  }
  if (t == ScalarType::ComplexFloat) {
    const bool wider = dtype == ScalarType::ComplexDouble;
    return wider || dtype == t;
  }
  return dtype == t;
}

/// aten's checks of linalg_matrix_norm(A, ord, dim, keepdim, dtype), in its
/// order, for ord = 2 or -2 (the others raise): returns dim wrapped. ord = 2
/// on an empty matrix raises too: aten raises there before 2.10 and returns
/// zeros from 2.10 on (the prover found it).
template <typename = void>
inline std::vector<int64_t> matrix_norm_dims(
    const char* op,
    const torch::stable::Tensor& A,
    const Scalar& ord,
    torch::headeronly::IntHeaderOnlyArrayRef dim,
    std::optional<ScalarType> dtype) {
  if (ord.is_complex()) {
    std::string why = "linalg.matrix_norm: Expected a non-complex scalar as ";
    why += "the order of norm. (aten raises)";
    fail(op, why.c_str());
  }
  const double size = std::abs(ord.to_double());
  if (!(size == 2.0 || size == 1.0 || size == INFINITY)) {
    std::string why = "linalg.matrix_norm: Order ";
    why += ord.repr();
    why += " not supported. (aten raises)";
    fail(op, why.c_str());
  }
  if (size != 2.0) {
    std::string why = "only ord = 2 and -2 have a libtorch route (aten ";
    why += "computes the others with linalg_vector_norm's ord 1, which no ";
    why += "libtorch route carries): define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    refuse(op, "ord", ord, why);
  }
  if (A.dim() < 2) {
    std::string why = "linalg.matrix_norm: The input tensor A must have at ";
    why += "least 2 dimensions. (aten raises)";
    fail(op, why.c_str());
  }
  const ScalarType t = A.scalar_type();
  const bool real = t == ScalarType::Float || t == ScalarType::Double;
  const bool single = t == ScalarType::ComplexFloat;
  const bool complex = single || t == ScalarType::ComplexDouble;
  if (!real && !complex) {
    std::string why = "linalg.matrix_norm: Expected a floating point or ";
    why += "complex tensor as input (aten raises)";
    fail(op, why.c_str());
  }
  if (dim.size() != 2) {
    fail(op, "linalg.matrix_norm: dim must be a 2-tuple. (aten raises)");
  }
  const int64_t n = A.dim();
  std::vector<int64_t> wrapped;
  for (size_t i = 0; i < dim.size(); ++i) {
    const int64_t d = dim[i];
    if (d < -n || d >= n) {
      std::string why = "Dimension out of range (expected to be in range of [";
      why += std::to_string(-n);
      why += ", ";
      why += std::to_string(n - 1);
      why += "], but got ";
      why += std::to_string(d);
      why += ") (aten raises)";
      fail(op, why.c_str());
    }
    wrapped.push_back(d < 0 ? d + n : d);
  }
  if (wrapped[0] == wrapped[1]) {
    fail(op, "linalg.matrix_norm: dims must be different. (aten raises)");
  }
  if (dtype.has_value() && !matrix_norm_dtype(t, dtype.value())) {
    std::string why = "linalg.matrix_norm: dtype should be floating point or ";
    why += "complex, of the input's kind, convertible from it without ";
    why += "narrowing (aten raises)";
    fail(op, why.c_str());
  }
  const bool empty = A.size(wrapped[0]) == 0 || A.size(wrapped[1]) == 0;
  if (empty && ord.to_double() > 0) {
    std::string why = "the norm of an empty matrix: aten's answer changed in ";
    why += "2.10 (an error before, zeros after): define SHIMGEN_OVERLAY and ";
    why += "link libshimgen_overlay (rebuilt for each torch release)";
    refuse(op, "ord", ord, why);
  }
  return wrapped;
}

/// aten's create_dim_backshift_permutation: every dimension but the two, in
/// order, then dim0 and dim1.
template <typename = void>
inline std::vector<int64_t> backshift_permutation(
    int64_t dim0,
    int64_t dim1,
    int64_t n) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (i != dim0 && i != dim1) {
      order.push_back(i);
    }
  }
  order.push_back(dim0);
  order.push_back(dim1);
  return order;
}

/// aten's create_reverse_permutation: the permutation that undoes `order`.
template <typename = void>
inline std::vector<int64_t> reverse_permutation(
    const std::vector<int64_t>& order) {
  std::vector<int64_t> reverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    reverse[order[i]] = static_cast<int64_t>(i);
  }
  return reverse;
}

// @section renorm needs legacy_shims compositions out_inplace backward_raises
// ---- kernel `renorm_two`: renorm with p = 2 as aten computes it (its
// structured kernel, Normalization.cpp renorm_out) ----
//
// aten: norm = linalg_vector_norm(self, p, every dim but `dim`, keepdim, the
// accumulate dtype for half / bfloat16); its scale factor kernel, in norm's
// dtype, `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` (cast to self's dtype
// where that differs); then self * factor into a new contiguous tensor. The
// wrappers make those calls (composition.py _renorm_body), the factor kernel
// as aten::gt, aten::add, aten::div and aten::where on 0-dim tensors of
// norm's dtype (maxnorm and 1e-7 cast as the kernel casts them: IEEE
// operations, which round alike). aten's derivative is renorm's own, so a
// call autograd records is refused.

/// aten's checks of renorm(self, p, dim, maxnorm) (its meta function, then
/// dim wrapped), in its order, then this route's refusals; returns the dims
/// the norm reduces.
template <typename = void>
inline std::vector<int64_t> renorm_dims(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& p,
    int64_t dim,
    const Scalar& maxnorm) {
  if (p.is_complex()) {
    fail(op, "renorm: p must be real-valued (aten raises)");
  }
  if (!(p.to_double() > 0.0)) {
    fail(op, "renorm: non-positive-norm not supported (aten raises)");
  }
  if (maxnorm.is_complex()) {
    fail(op, "renorm: maxnorm must be real-valued (aten raises)");
  }
  if (!(maxnorm.to_double() >= 0.0)) {
    fail(op, "renorm: expected maxnorm to be >= 0 (aten raises)");
  }
  const int64_t n = self.dim();
  if (n <= 1) {
    fail(op, "renorm: input needs at least 2 dimensions (aten raises)");
  }
  if (dim < -n || dim >= n) {
    std::string why = "Dimension out of range (expected to be in range of [";
    why += std::to_string(-n);
    why += ", ";
    why += std::to_string(n - 1);
    why += "], but got ";
    why += std::to_string(dim);
    why += ") (aten raises)";
    fail(op, why.c_str());
  }
  std::string remedy = ": define SHIMGEN_OVERLAY and link ";
  remedy += "libshimgen_overlay (rebuilt for each torch release)";
  if (p.to_double() != 2.0) {
    std::string why = "only p = 2 has a libtorch route (aten computes the ";
    why += "norm with linalg_vector_norm of that p, which libtorch carries ";
    why += "for 2 alone)";
    refuse(op, "p", p, why + remedy);
  }
  if (n > 3) {
    std::string why = "a tensor of more than 3 dimensions: the norm over ";
    why += "more than 2 dims has no libtorch route";
    fail(op, (why + remedy).c_str());
  }
  const ScalarType t = self.scalar_type();
  const bool half = t == ScalarType::Half || t == ScalarType::BFloat16;
  const bool single = t == ScalarType::Float || t == ScalarType::Double;
  const bool cfloat = t == ScalarType::ComplexFloat;
  const bool complex = cfloat || t == ScalarType::ComplexDouble;
  if (!half && !single && !complex) {
    std::string why = "a tensor of this dtype (aten raises for integers and ";
    why += "bool; complex32 and float8 were not proven)";
    fail(op, (why + remedy).c_str());
  }
  if (records_grad({&self})) {
    std::string why = "autograd records this call (aten's derivative is ";
    why += "renorm's own)";
    refuse_backward(op, why.c_str());
  }
  const int64_t wrapped = dim < 0 ? dim + n : dim;
  std::vector<int64_t> reduce;
  for (int64_t i = 0; i < n; ++i) {
    if (i != wrapped) {
      reduce.push_back(i);
    }
  }
  return reduce;
}

/// aten's accumulate dtype of renorm's norm (toAccumulateType with is_cuda
/// true): float for half and bfloat16; the norm's own dtype otherwise.
template <typename = void>
inline std::optional<ScalarType> renorm_norm_dtype(ScalarType t) {
  if (t == ScalarType::Half || t == ScalarType::BFloat16) {
    return ScalarType::Float;
  }
  return std::nullopt;
}

/// Whether `result` has the strides of a new contiguous tensor of its sizes
/// (at::empty's: a size-1 or empty dim counts as 1).
template <typename = void>
inline bool new_contiguous(const torch::stable::Tensor& result) {
  int64_t expected = 1;
  for (int64_t i = result.dim() - 1; i >= 0; --i) {
    if (result.stride(i) != expected) {
      return false;
    }
    expected *= std::max<int64_t>(result.size(i), 1);
  }
  return true;
}

// @section composite_out needs legacy_shims compositions out_inplace
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

} // namespace detail
} // namespace shimgen
