//
// A port's stand-in for ATen's C++ autograd (torch::autograd::Function), which
// the stable ABI has no equivalent of (`shimgen port --fix` names it). A class
// written as
//
//   class F : public torch::autograd::Function<F> {
//     static variable_list forward(AutogradContext* ctx, Variable a, int64_t k);
//     static variable_list backward(AutogradContext* ctx, variable_list grads);
//   };
//
// keeps its two methods as written; the port registers them as two ops of the
// library,
//
//   ns::F(Tensor a0, int a1) -> Tensor[]                          the forward
//   ns::F_backward(Tensor[] grads, int needs, Tensor a0, int a1) -> Tensor?[]
//
// (shimgen::autograd::def<F> / impl<F>, the schema from forward's C++ types),
// and `F::apply(a, k)` calls ns::F through the dispatcher, where the autograd
// formula the port's Python module registers (torch.library.register_autograd,
// shimgen_autograd.py) records the graph. The backward op runs F::forward again
// on the saved inputs to rebuild what it saved in the context (its
// saved_data and save_for_backward), then F::backward: a backward costs one
// forward more than ATen's, which kept the saved values.
//
// What a context holds is ATen's subset that the forward and backward of a
// kernel use: saved_data of numbers, bools, int lists and Tensors,
// save_for_backward / get_saved_variables, needs_input_grad(i), and
// mark_non_differentiable and set_materialize_grads, which change nothing here
// (an integer output is not differentiable in Python's autograd either, and
// the Python module materializes a missing gradient as zeros, as ATen does by
// default); mark_dirty stops the build (the forward runs again in backward).
// any_variable_requires_grad({x}) answers for the op's inputs from the
// backward's `needs` (the inputs' requires_grad); for another tensor, true.
//
// Kept as written (shimgen.generate.emit.fmt.UNFORMATTED).

#pragma once

#include <cstdint>
#include <initializer_list>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/stableivalue_conversions.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/HeaderOnlyArrayRef.h>

// Hidden visibility for the types holding torch::stable::Tensor (declared
// hidden by HIDDEN_NAMESPACE_BEGIN), as shimgen/scalar.h's.
#if defined(__GNUG__) && !defined(_WIN32)
#define SHIMGEN_AUTOGRAD_HIDDEN __attribute__((visibility("hidden")))
#else
#define SHIMGEN_AUTOGRAD_HIDDEN
#endif
#include <torch/headeronly/util/Exception.h>

namespace shimgen::autograd {

using Variable = torch::stable::Tensor;
using variable_list = std::vector<torch::stable::Tensor>;

// What ATen's ctx->saved_data holds (an IValue): here a number, a bool, an int
// list (t.sizes()) or a Tensor, read back with toInt(), toDouble(), toBool(),
// toIntList() (a std::vector<int64_t>), toTensor().
class SHIMGEN_AUTOGRAD_HIDDEN SavedValue {
 public:
  SavedValue() = default;
  template <
      typename T,
      std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> =
          0>
  SavedValue& operator=(T v) {
    kind_ = Kind::Int;
    i_ = static_cast<int64_t>(v);
    return *this;
  }
  SavedValue& operator=(bool v) {
    kind_ = Kind::Bool;
    i_ = v;
    return *this;
  }
  SavedValue& operator=(double v) {
    kind_ = Kind::Double;
    d_ = v;
    return *this;
  }
  SavedValue& operator=(torch::headeronly::IntHeaderOnlyArrayRef v) {
    kind_ = Kind::IntList;
    list_.assign(v.begin(), v.end());
    return *this;
  }
  SavedValue& operator=(const torch::stable::Tensor& v) {
    kind_ = Kind::Tensor;
    t_ = v;
    return *this;
  }
  int64_t toInt() const {
    STD_TORCH_CHECK(kind_ == Kind::Int, "saved_data: not an int");
    return i_;
  }
  double toDouble() const {
    STD_TORCH_CHECK(
        kind_ == Kind::Double || kind_ == Kind::Int,
        "saved_data: not a number");
    return kind_ == Kind::Double ? d_ : static_cast<double>(i_);
  }
  bool toBool() const {
    STD_TORCH_CHECK(kind_ == Kind::Bool, "saved_data: not a bool");
    return i_ != 0;
  }
  // ATen's toIntList() is a c10::List<int64_t>: here a std::vector
  std::vector<int64_t> toIntList() const {
    STD_TORCH_CHECK(kind_ == Kind::IntList, "saved_data: not an int list");
    return list_;
  }
  std::vector<int64_t> toIntVector() const {
    return toIntList();
  }
  torch::stable::Tensor toTensor() const {
    STD_TORCH_CHECK(kind_ == Kind::Tensor, "saved_data: not a Tensor");
    return *t_;
  }

 private:
  enum class Kind { None, Int, Double, Bool, IntList, Tensor };
  Kind kind_ = Kind::None;
  int64_t i_ = 0;
  double d_ = 0;
  std::vector<int64_t> list_;
  std::optional<torch::stable::Tensor> t_;
};

namespace detail {
// the op's tensor inputs and whether each needs a gradient, while a backward
// op runs (any_variable_requires_grad reads it)
inline thread_local const std::vector<std::pair<AtenTensorHandle, bool>>*
    needs = nullptr;
} // namespace detail

struct SHIMGEN_AUTOGRAD_HIDDEN AutogradContext {
  std::map<std::string, SavedValue> saved_data;

  void save_for_backward(variable_list to_save) {
    saved_ = std::move(to_save);
  }
  variable_list get_saved_variables() const {
    return saved_;
  }
  void mark_non_differentiable(const variable_list&) {}
  // a forward that writes into an input: its backward op would run the
  // forward, and write, once more
  template <typename L = variable_list>
  void mark_dirty(const L&) {
    static_assert(
        sizeof(L) == 0,
        "shimgen::autograd: mark_dirty (a forward writing into an input) is "
        "not supported: the backward op runs the forward again");
  }
  void set_materialize_grads(bool) {}
  bool needs_input_grad(size_t index) const {
    return index < needs_input_grad_.size() ? needs_input_grad_[index] : true;
  }

  std::vector<bool> needs_input_grad_; // set by the backward op

 private:
  variable_list saved_;
};

inline bool any_variable_requires_grad(const variable_list& xs) {
  for (const auto& x : xs) {
    if (!x.defined()) {
      continue;
    }
    if (detail::needs == nullptr) {
      return true;
    }
    bool found = false;
    for (const auto& [handle, need] : *detail::needs) {
      if (handle == x.get()) {
        found = true;
        if (need) {
          return true;
        }
      }
    }
    if (!found) {
      return true;
    }
  }
  return false;
}

namespace detail {

// the schema type of a forward parameter
template <typename T>
struct SchemaType;
template <>
struct SchemaType<torch::stable::Tensor> {
  static constexpr const char* name = "Tensor";
};
template <>
struct SchemaType<int64_t> {
  static constexpr const char* name = "int";
};
template <>
struct SchemaType<double> {
  static constexpr const char* name = "float";
};
template <>
struct SchemaType<bool> {
  static constexpr const char* name = "bool";
};
template <>
struct SchemaType<std::string> {
  static constexpr const char* name = "str";
};
template <>
struct SchemaType<torch::headeronly::ScalarType> {
  static constexpr const char* name = "ScalarType";
};
template <>
struct SchemaType<std::optional<torch::stable::Tensor>> {
  static constexpr const char* name = "Tensor?";
};
template <>
struct SchemaType<std::optional<int64_t>> {
  static constexpr const char* name = "int?";
};
template <>
struct SchemaType<std::optional<double>> {
  static constexpr const char* name = "float?";
};
template <>
struct SchemaType<std::vector<torch::stable::Tensor>> {
  static constexpr const char* name = "Tensor[]";
};
template <>
struct SchemaType<std::vector<int64_t>> {
  static constexpr const char* name = "int[]";
};

template <typename T>
struct Tag {
  using type = T;
};

template <typename T>
using Param = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename F>
struct Forward;
template <typename R, typename... A>
struct Forward<R (*)(AutogradContext*, A...)> {
  static_assert(
      std::is_same_v<R, variable_list>,
      "forward returns a variable_list");
  using Args = std::tuple<Param<A>...>;

  static std::string params() {
    std::string out;
    size_t i = 0;
    ((out += (i ? ", " : "") + std::string(SchemaType<Param<A>>::name) +
          " a" + std::to_string(i),
      ++i),
     ...);
    return out;
  }

  template <typename C>
  static variable_list forward(Param<A>... a) {
    AutogradContext ctx;
    return C::forward(&ctx, a...);
  }

  template <typename C>
  static std::vector<std::optional<torch::stable::Tensor>> backward(
      variable_list grads,
      int64_t needs_mask,
      Param<A>... a) {
    AutogradContext ctx;
    std::vector<std::pair<AtenTensorHandle, bool>> tensors;
    size_t i = 0;
    (
        [&](const auto& x) {
          ctx.needs_input_grad_.push_back((needs_mask >> i) & 1);
          if constexpr (std::is_same_v<
                            std::decay_t<decltype(x)>,
                            torch::stable::Tensor>) {
            tensors.emplace_back(x.get(), (needs_mask >> i) & 1);
          }
          ++i;
        }(a),
        ...);
    C::forward(&ctx, a...); // what the forward saved, again
    const auto* before = needs;
    needs = &tensors;
    variable_list got;
    try {
      got = C::backward(&ctx, std::move(grads));
    } catch (...) {
      needs = before;
      throw;
    }
    needs = before;
    std::vector<std::optional<torch::stable::Tensor>> out;
    for (auto& g : got) {
      out.push_back(g.defined() ? std::optional(g) : std::nullopt);
    }
    return out;
  }
};

template <typename C>
using ForwardOf = Forward<decltype(&C::forward)>;

} // namespace detail

template <typename C>
struct Function {
  // "ns::name" of the op the port registered for C (def<C>): a function's
  // static, made on first use (a template's static member may be initialized
  // after the library's registration ran)
  static std::string& op() {
    static std::string name;
    return name;
  }

  // ATen's F::apply(args...): the forward op through the dispatcher, where
  // its autograd formula records the graph
  template <typename... T>
  static variable_list apply(T&&... args) {
    STD_TORCH_CHECK(
        !op().empty(),
        "shimgen::autograd: no op registered for this Function "
        "(shimgen::autograd::def)");
    using Args = typename detail::ForwardOf<C>::Args;
    static_assert(
        sizeof...(T) == std::tuple_size_v<Args>,
        "apply's arguments are forward's, after the context");
    constexpr size_t n = sizeof...(T) > 0 ? sizeof...(T) : 1;
    StableIValue stack[n];
    size_t i = 0;
    auto push = [&](auto&& x, auto tag) {
      using P = typename decltype(tag)::type;
      stack[i++] = torch::stable::detail::from(P(std::forward<decltype(x)>(x)));
    };
    push_all(push, std::index_sequence_for<T...>{}, std::forward<T>(args)...);
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
    TORCH_ERROR_CODE_CHECK(
        torch_call_dispatcher(op().c_str(), "", stack, TORCH_ABI_VERSION));
#else
    TORCH_ERROR_CODE_CHECK(aoti_torch_call_dispatcher(op().c_str(), "", stack));
#endif
    return torch::stable::detail::to<variable_list>(stack[0]);
  }

 private:
  template <typename Push, size_t... I, typename... T>
  static void push_all(Push& push, std::index_sequence<I...>, T&&... args) {
    using Args = typename detail::ForwardOf<C>::Args;
    (push(
         std::forward<T>(args),
         detail::Tag<std::tuple_element_t<I, Args>>{}),
     ...);
  }
};

// The two ops of class C in a STABLE_TORCH_LIBRARY[_FRAGMENT] block:
// def<C>(m, "ns::name") defines name(...) -> Tensor[] and name_backward.
template <typename C>
void def(torch::stable::detail::StableLibrary& m, const char* qualified) {
  std::string q = qualified;
  auto sep = q.find("::");
  STD_TORCH_CHECK(sep != std::string::npos, "def<C>: \"ns::name\"");
  std::string name = q.substr(sep + 2);
  std::string params = detail::ForwardOf<C>::params();
  static std::list<std::string> kept; // the schemas outlive the call
  kept.push_back(name + "(" + params + ") -> Tensor[]");
  m.def(kept.back().c_str());
  kept.push_back(
      name + "_backward(Tensor[] grads, int needs" +
      (params.empty() ? "" : ", " + params) + ") -> Tensor?[]");
  m.def(kept.back().c_str());
  Function<C>::op() = q;
}

// Their kernels in a STABLE_TORCH_LIBRARY_IMPL block (a key that serves every
// backend: CompositeExplicitAutograd).
template <typename C>
void impl(torch::stable::detail::StableLibrary& m, const char* name) {
  using F = detail::ForwardOf<C>;
  static std::list<std::string> kept;
  kept.push_back(name);
  m.impl(kept.back().c_str(), TORCH_BOX(&F::template forward<C>));
  kept.push_back(std::string(name) + "_backward");
  m.impl(kept.back().c_str(), TORCH_BOX(&F::template backward<C>));
}

} // namespace shimgen::autograd
