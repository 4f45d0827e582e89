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
// keeps its two methods as written; the port registers three ops of the
// library for it (shimgen::autograd::def<F> / impl<F>, the schema from
// forward's C++ types):
//
//   ns::F(Tensor a0, int a1) -> Tensor[]            forward's outputs
//   ns::F_forward(Tensor a0, int a1) -> Tensor[]    the outputs, then what the
//                                                   context holds
//   ns::F_backward(Tensor[] grads, int needs, Tensor[] saved, Tensor context)
//       -> Tensor?[]                                backward, from that context
//
// `F::apply(a, k)` calls ns::F through the dispatcher. Its Autograd kernel is
// a Python torch.autograd.Function the port's module installs
// (shimgen_autograd.py): it runs ns::F_forward below autograd, keeps the
// saved tensors with ctx.save_for_backward and the rest of the context (one
// int64 CPU tensor: saved_data, which outputs mark_non_differentiable named,
// which inputs mark_dirty named), marks them on its own ctx, and in backward
// calls ns::F_backward with the gradients, the saved tensors and that
// context: the forward runs once, as in ATen, and what it saved is what the
// backward reads. ns::F's own kernel (CompositeExplicitAutograd: no
// autograd, inference mode) runs the forward and returns its outputs.
//
// What a context holds is ATen's subset that the forward and backward of a
// kernel use: saved_data of integers, doubles, bools, int lists and Tensors,
// save_for_backward / get_saved_variables (undefined tensors too),
// needs_input_grad(i) in backward, mark_non_differentiable (of outputs),
// mark_dirty (of Tensor or Tensor? inputs the forward wrote into and returns;
// a tensor named that is not an input is an error when the forward runs) and
// set_materialize_grads, which changes nothing here (a missing gradient is
// zeros, ATen's default). any_variable_requires_grad({x}) answers from the
// backward's `needs` for a saved tensor that was an input; for another
// tensor, true. Not carried: a backward differentiable again (ns::F_backward
// has no autograd of its own: create_graph=True records no graph through it),
// and Tensor[] inputs (a list is no input of a Python autograd.Function: no
// gradient reaches it).
//
// Kept as written (shimgen.generate.emit.fmt.UNFORMATTED).

#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
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

  // into the context's int64 values (a Tensor: its place among `tensors`)
  void pack(std::vector<int64_t>& out, std::vector<torch::stable::Tensor>& tensors)
      const {
    out.push_back(static_cast<int64_t>(kind_));
    switch (kind_) {
      case Kind::Int:
      case Kind::Bool:
        out.push_back(i_);
        break;
      case Kind::Double: {
        int64_t bits;
        std::memcpy(&bits, &d_, sizeof bits);
        out.push_back(bits);
        break;
      }
      case Kind::IntList:
        out.push_back(static_cast<int64_t>(list_.size()));
        out.insert(out.end(), list_.begin(), list_.end());
        break;
      case Kind::Tensor:
        out.push_back(static_cast<int64_t>(tensors.size()));
        tensors.push_back(*t_);
        break;
      case Kind::None:
        break;
    }
  }
  // back from them, at `at` (moved past it)
  static SavedValue unpack(
      const std::vector<int64_t>& in,
      size_t& at,
      const std::vector<torch::stable::Tensor>& tensors) {
    SavedValue v;
    v.kind_ = static_cast<Kind>(in.at(at++));
    switch (v.kind_) {
      case Kind::Int:
      case Kind::Bool:
        v.i_ = in.at(at++);
        break;
      case Kind::Double: {
        int64_t bits = in.at(at++);
        std::memcpy(&v.d_, &bits, sizeof bits);
        break;
      }
      case Kind::IntList: {
        size_t n = static_cast<size_t>(in.at(at++));
        STD_TORCH_CHECK(at + n <= in.size(), "saved_data: a short context");
        v.list_.assign(in.begin() + at, in.begin() + at + n);
        at += n;
        break;
      }
      case Kind::Tensor:
        v.t_ = tensors.at(static_cast<size_t>(in.at(at++)));
        break;
      case Kind::None:
        break;
    }
    return v;
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
template <typename F>
struct Forward;
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
  // outputs autograd gives no gradient (the Python module marks them)
  void mark_non_differentiable(const variable_list& xs) {
    non_differentiable_.insert(non_differentiable_.end(), xs.begin(), xs.end());
  }
  // inputs the forward wrote into and returns (the Python module marks them)
  void mark_dirty(const variable_list& xs) {
    dirty_.insert(dirty_.end(), xs.begin(), xs.end());
  }
  void set_materialize_grads(bool) {}
  bool needs_input_grad(size_t index) const {
    return index < needs_input_grad_.size() ? needs_input_grad_[index] : true;
  }

  std::vector<bool> needs_input_grad_; // set by the backward op
  variable_list non_differentiable_;
  variable_list dirty_;

 private:
  template <typename F>
  friend struct detail::Forward;
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

// an int64 CPU tensor of `values` (the context a forward op returns)
inline torch::stable::Tensor int64_tensor(const std::vector<int64_t>& values) {
  int64_t size = static_cast<int64_t>(values.size());
  int64_t stride = 1;
  AtenTensorHandle handle = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(
      1,
      &size,
      &stride,
      aoti_torch_dtype_int64(),
      aoti_torch_device_type_cpu(),
      0,
      &handle));
  torch::stable::Tensor t(handle);
  if (size > 0) {
    std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(int64_t));
  }
  return t;
}

inline std::vector<int64_t> int64_values(const torch::stable::Tensor& t) {
  STD_TORCH_CHECK(
      t.defined() && t.is_cpu() && t.dim() == 1 &&
          t.scalar_type() == torch::headeronly::ScalarType::Long &&
          (t.numel() == 0 || t.stride(0) == 1),
      "shimgen::autograd: the context is not the int64 CPU tensor the "
      "forward op returned");
  const int64_t* p = static_cast<const int64_t*>(t.data_ptr());
  return std::vector<int64_t>(p, p + t.numel());
}

// x and y the same tensor: one handle, or one view of the same memory
inline bool same_tensor(
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& y) {
  if (!x.defined() || !y.defined()) {
    return false;
  }
  if (x.get() == y.get()) {
    return true;
  }
  if (x.data_ptr() == nullptr || x.data_ptr() != y.data_ptr() ||
      x.scalar_type() != y.scalar_type() || x.dim() != y.dim()) {
    return false;
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.size(d) != y.size(d) || x.stride(d) != y.stride(d)) {
      return false;
    }
  }
  return true;
}

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

  // ns::F: forward's outputs
  template <typename C>
  static variable_list forward(Param<A>... a) {
    AutogradContext ctx;
    return C::forward(&ctx, a...);
  }

  // the forward's tensor inputs: (its place among forward's arguments, it)
  static std::vector<std::pair<int64_t, torch::stable::Tensor>> inputs(
      const Param<A>&... a) {
    std::vector<std::pair<int64_t, torch::stable::Tensor>> out;
    int64_t i = 0;
    (
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, torch::stable::Tensor>) {
            out.emplace_back(i, x);
          } else if constexpr (std::is_same_v<
                                   T,
                                   std::optional<torch::stable::Tensor>>) {
            if (x.has_value()) {
              out.emplace_back(i, *x);
            }
          }
          ++i;
        }(a),
        ...);
    return out;
  }

  // ns::F_forward: the outputs, the saved tensors (save_for_backward's, then
  // saved_data's), then the context: int64 values
  //   [n_out, n_saved, n_non_differentiable, output index..., n_dirty,
  //    input index..., n_save_for_backward, (input index or -1, defined) for
  //    each saved tensor, n_saved_data, (key length, key chars, the value)...]
  // (the Python module reads the first fields; the backward op all of them)
  template <typename C>
  static variable_list forward_saving(Param<A>... a) {
    AutogradContext ctx;
    const auto ins = inputs(a...);
    variable_list out = C::forward(&ctx, a...);
    std::vector<int64_t> c;
    variable_list saved = ctx.saved_;
    const size_t n_for_backward = saved.size();
    std::vector<int64_t> data;
    data.push_back(static_cast<int64_t>(ctx.saved_data.size()));
    for (const auto& [key, value] : ctx.saved_data) {
      data.push_back(static_cast<int64_t>(key.size()));
      for (unsigned char ch : key) {
        data.push_back(ch);
      }
      value.pack(data, saved);
    }
    c.push_back(static_cast<int64_t>(out.size()));
    c.push_back(static_cast<int64_t>(saved.size()));
    c.push_back(static_cast<int64_t>(ctx.non_differentiable_.size()));
    for (const auto& x : ctx.non_differentiable_) {
      int64_t found = -1;
      for (size_t k = 0; k < out.size() && found < 0; ++k) {
        if (same_tensor(x, out[k])) {
          found = static_cast<int64_t>(k);
        }
      }
      STD_TORCH_CHECK(
          found >= 0,
          "shimgen::autograd: mark_non_differentiable of a tensor the forward "
          "does not return");
      c.push_back(found);
    }
    c.push_back(static_cast<int64_t>(ctx.dirty_.size()));
    for (const auto& x : ctx.dirty_) {
      int64_t found = -1;
      for (const auto& [i, in] : ins) {
        if (found < 0 && same_tensor(x, in)) {
          found = i;
        }
      }
      STD_TORCH_CHECK(
          found >= 0,
          "shimgen::autograd: mark_dirty of a tensor that is not an input of "
          "the forward");
      c.push_back(found);
    }
    c.push_back(static_cast<int64_t>(n_for_backward));
    for (auto& s : saved) {
      int64_t input = -1;
      for (const auto& [i, in] : ins) {
        if (input < 0 && same_tensor(s, in)) {
          input = i;
        }
      }
      c.push_back(input);
      c.push_back(s.defined() ? 1 : 0);
      if (!s.defined()) {
        s = int64_tensor({}); // a list holds no undefined tensor
      }
    }
    c.insert(c.end(), data.begin(), data.end());
    out.insert(out.end(), saved.begin(), saved.end());
    out.push_back(int64_tensor(c));
    return out;
  }

  // ns::F_backward: F::backward over the context the forward op returned
  template <typename C>
  static std::vector<std::optional<torch::stable::Tensor>> backward(
      variable_list grads,
      int64_t needs_mask,
      variable_list saved,
      torch::stable::Tensor context) {
    AutogradContext ctx;
    for (size_t i = 0; i < sizeof...(A); ++i) {
      ctx.needs_input_grad_.push_back((needs_mask >> i) & 1);
    }
    const std::vector<int64_t> c = int64_values(context);
    size_t at = 0;
    auto next = [&]() {
      STD_TORCH_CHECK(at < c.size(), "shimgen::autograd: a short context");
      return c[at++];
    };
    next(); // n_out
    const size_t n_saved = static_cast<size_t>(next());
    STD_TORCH_CHECK(
        n_saved == saved.size(),
        "shimgen::autograd: the saved tensors are not the forward's");
    for (int64_t k = next(); k > 0; --k) {
      next(); // a non-differentiable output
    }
    for (int64_t k = next(); k > 0; --k) {
      next(); // a dirty input
    }
    const size_t n_for_backward = static_cast<size_t>(next());
    STD_TORCH_CHECK(
        n_for_backward <= n_saved, "shimgen::autograd: a context not its own");
    std::vector<std::pair<AtenTensorHandle, bool>> tensors;
    for (size_t k = 0; k < n_saved; ++k) {
      int64_t input = next();
      bool defined = next() != 0;
      if (!defined) {
        saved[k] = torch::stable::Tensor();
      } else if (input >= 0) {
        tensors.emplace_back(saved[k].get(), (needs_mask >> input) & 1);
      }
    }
    ctx.saved_.assign(saved.begin(), saved.begin() + n_for_backward);
    for (int64_t k = next(); k > 0; --k) {
      size_t len = static_cast<size_t>(next());
      std::string key;
      for (size_t j = 0; j < len; ++j) {
        key.push_back(static_cast<char>(next()));
      }
      ctx.saved_data[key] = SavedValue::unpack(c, at, saved);
    }
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

// The three ops of class C in a STABLE_TORCH_LIBRARY[_FRAGMENT] block:
// def<C>(m, "ns::name") defines name(...) -> Tensor[], name_forward and
// name_backward.
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
  kept.push_back(name + "_forward(" + params + ") -> Tensor[]");
  m.def(kept.back().c_str());
  kept.push_back(
      name +
      "_backward(Tensor[] grads, int needs, Tensor[] saved, Tensor context) "
      "-> Tensor?[]");
  m.def(kept.back().c_str());
  Function<C>::op() = q;
}

// Their kernels in a STABLE_TORCH_LIBRARY_IMPL block (a key that serves every
// backend: CompositeExplicitAutograd); name's Autograd kernel is the Python
// module's.
template <typename C>
void impl(torch::stable::detail::StableLibrary& m, const char* name) {
  using F = detail::ForwardOf<C>;
  static std::list<std::string> kept;
  kept.push_back(name);
  m.impl(kept.back().c_str(), TORCH_BOX(&F::template forward<C>));
  kept.push_back(std::string(name) + "_forward");
  m.impl(kept.back().c_str(), TORCH_BOX(&F::template forward_saving<C>));
  kept.push_back(std::string(name) + "_backward");
  m.impl(kept.back().c_str(), TORCH_BOX(&F::template backward<C>));
}

} // namespace shimgen::autograd
