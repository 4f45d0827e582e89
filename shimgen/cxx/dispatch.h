//
// shimgen::detail::dispatch: the one call every torch::stable wrapper on the
// boxed dispatcher route makes. It converts the wrapper's values into a stack
// (torch::stable::detail::from, in the schema's order), calls
// torch_call_dispatcher (aoti_torch_call_dispatcher before 2.10, by
// TORCH_FEATURE_VERSION, which the wrapper's version gate bounds) and converts
// the returns. Written once here, it is parsed once per translation unit, not
// once per wrapper. Kept as written (shimgen.generate.emit.fmt.UNFORMATTED:
// already in clang-format's layout, which tests/test_cpp_layout.py checks).
//
// Included by torch/csrc/stable/shimgen/ops_prelude.h after SHIMGEN_CHECK.

#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <torch/csrc/stable/c/shim.h>
#include <torch/csrc/stable/stableivalue_conversions.h>
#include <torch/csrc/stable/tensor.h>

namespace shimgen::detail {

#ifdef SHIMGEN_DEFAULT_CHECK
/// shimgen's SHIMGEN_CHECK for a dispatcher call: the message names the call
/// as the wrapper would spell it, the op's names written out.
[[noreturn]] inline void failed_dispatch(
    const char* function,
    const char* op,
    const char* overload,
    const char* rest) {
  const std::string call = std::string(function) + "(\"" + op + "\", \"" +
      overload + "\", stack.data()" + rest + ")";
  ::torch::stable::shimgen_detail::throw_failed_call(call.c_str());
}
#endif // SHIMGEN_DEFAULT_CHECK

/// Calls aten::op.overload on `stack` (its values in the schema's order); the
/// returns are left in its first slots. Not a template: parsed once.
inline void run_dispatcher(
    const char* op,
    const char* overload,
    StableIValue* stack) {
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
#ifdef SHIMGEN_DEFAULT_CHECK
  const auto status =
      torch_call_dispatcher(op, overload, stack, TORCH_ABI_VERSION);
  if (status != TORCH_SUCCESS) {
    failed_dispatch(
        "torch_call_dispatcher", op, overload, ", TORCH_ABI_VERSION");
  }
#else
  SHIMGEN_CHECK(torch_call_dispatcher(op, overload, stack, TORCH_ABI_VERSION));
#endif // SHIMGEN_DEFAULT_CHECK
#else
#ifdef SHIMGEN_DEFAULT_CHECK
  const auto status = aoti_torch_call_dispatcher(op, overload, stack);
  if (status != TORCH_SUCCESS) {
    failed_dispatch("aoti_torch_call_dispatcher", op, overload, "");
  }
#else
  SHIMGEN_CHECK(aoti_torch_call_dispatcher(op, overload, stack));
#endif // SHIMGEN_DEFAULT_CHECK
#endif // TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
}

/// torch::stable::detail::from(value), instantiated once per type T. Taking
/// `value` by reference, a wrapper's stack costs one cheap deduction per value;
/// from() itself (three overloads, by value) is resolved here, once per type,
/// not in each wrapper's instantiation of dispatch (a per-wrapper cost the
/// compiler pays for every wrapper a translation unit includes).
template <typename T>
inline StableIValue box(const T& value) {
  return torch::stable::detail::from(value);
}

/// A stack of N slots holding `values` (each converted by
/// torch::stable::detail::from), after calling aten::op.overload on it.
template <std::size_t N, typename... Values>
inline std::array<StableIValue, N> call_dispatcher(
    const char* op,
    const char* overload,
    const Values&... values) {
  std::array<StableIValue, N> stack{box(values)...};
  run_dispatcher(op, overload, stack.data());
  return stack;
}

/// The first slots of a stack as a std::tuple of T...
template <typename... T, std::size_t N, std::size_t... I>
inline std::tuple<T...> tuple_from(
    std::array<StableIValue, N>& stack,
    std::index_sequence<I...> /*unused*/) {
  return std::tuple<T...>{torch::stable::detail::to<T>(stack[I])...};
}

template <typename R>
struct Returns {
  template <std::size_t N>
  static R from(std::array<StableIValue, N>& stack) {
    return torch::stable::detail::to<R>(stack[0]);
  }
};

template <typename... T>
struct Returns<std::tuple<T...>> {
  template <std::size_t N>
  static std::tuple<T...> from(std::array<StableIValue, N>& stack) {
    return tuple_from<T...>(stack, std::index_sequence_for<T...>{});
  }
};

template <>
struct Returns<void> {
  template <std::size_t N>
  static void from(std::array<StableIValue, N>& /*stack*/) {}
};

/// Calls aten::op.overload on `stack` and converts its returns to R; shared by
/// every wrapper of the same R, N and Released (see dispatch).
template <typename R, std::size_t N, std::size_t Released>
inline R dispatch_stack(
    const char* op,
    const char* overload,
    std::array<StableIValue, N>& stack) {
  run_dispatcher(op, overload, stack.data());
  for (std::size_t i = 0; i < Released; ++i) {
    (void)torch::stable::detail::to<torch::stable::Tensor>(stack[i]);
  }
  return Returns<R>::from(stack);
}

/// call_dispatcher, its returns converted to R: one type, a std::tuple or void.
/// Released: an out= op's returns, new references to the caller's out tensors,
/// are released (its wrapper returns the caller's own).
///
/// Each wrapper instantiates this template with its own Values, so its body is
/// kept to the stack: the call and the returns are dispatch_stack's, which
/// wrappers share (measured: 2% fewer compiler instructions for the whole
/// yaml's ops.h, benchmarks/bench_generate.py).
template <
    typename R,
    std::size_t N,
    std::size_t Released = 0,
    typename... Values>
inline R dispatch(
    const char* op,
    const char* overload,
    const Values&... values) {
  std::array<StableIValue, N> stack{box(values)...};
  return dispatch_stack<R, N, Released>(op, overload, stack);
}

/// dispatch from a wrapper that is a function template (`template <typename
/// Lazy = void>`, the names beyond upstream's ops.h: README, "Wrappers beyond
/// upstream's names are function templates"), which passes its own parameter
/// first. The call then depends on it, so the compiler resolves and checks it
/// only where a file calls the wrapper, not in every translation unit that
/// includes the header (measured: 2.6% fewer compiler instructions for the
/// whole yaml's ops.h, benchmarks/bench_generate.py). Lazy is always void.
template <
    typename Lazy,
    typename R,
    std::size_t N,
    std::size_t Released = 0,
    typename... Values>
inline R dispatch(
    const char* op,
    const char* overload,
    const Values&... values) {
  return dispatch<R, N, Released>(op, overload, values...);
}

/// A tensor's layout, as Tensor::layout() (2.11's headers) reads it, through
/// the C shim 2.10's headers already declare: the output builds with 2.10's.
inline torch::headeronly::Layout layout_of(const torch::stable::Tensor& t) {
  int32_t layout = 0;
  SHIMGEN_CHECK(aoti_torch_get_layout(t.get(), &layout));
  return torch::stable::detail::to<torch::headeronly::Layout>(
      torch::stable::detail::from(layout));
}

} // namespace shimgen::detail
