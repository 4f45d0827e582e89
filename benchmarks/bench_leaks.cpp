// Per-call memory of torch::stable wrappers: each case calls one op in a loop
// on small CPU tensors. Built twice by bench_leaks.py: against shimgen's
// generated headers (stable ABI only) and with LEAKS_ATEN, calling at::
// directly. Each build registers LEAKS_NS::run(int case, Tensor x, int n) ->
// int that makes n calls of case `case` and returns how many of them threw
// (the failing cases throw every time; the loop catches and counts).
// kCases in bench_leaks.py lists the cases in this order.

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#ifdef LEAKS_ATEN
#include <ATen/ATen.h>
#include <torch/csrc/inductor/aoti_torch/utils.h>
#else
#include <torch/csrc/stable/ops.h>
#endif

using torch::stable::Tensor;

namespace {

template <class F>
int64_t loop(int64_t n, F&& f) {
  int64_t failed = 0;
  for (int64_t i = 0; i < n; ++i) {
    try {
      f();
    } catch (const std::exception&) {
      ++failed;
    }
  }
  return failed;
}

#ifdef LEAKS_ATEN
using Fn = std::function<void(const at::Tensor&)>;
std::vector<Fn> cases() {
  return {
      [](const at::Tensor& x) { at::gelu(x, "tanh"); },
      [](const at::Tensor& x) { at::div(x, x, std::string("floor")); },
      [](const at::Tensor& x) { at::div(x, x, std::nullopt); },
      [](const at::Tensor& x) { at::pad(x, {1, 1}, "reflect", std::nullopt); },
      [](const at::Tensor& x) { at::pad(x, {1, 1}, "constant", 2.0); },
      [](const at::Tensor& x) { at::amax(x, {1}, false); },
      [](const at::Tensor& x) { at::sum(x, at::IntArrayRef{1}, false, at::kDouble); },
      [](const at::Tensor& x) { at::transpose(x, 0, 1); },
      [](const at::Tensor& x) { x.new_zeros({2, 3}, at::TensorOptions().dtype(at::kFloat).device(at::kCPU)); },
      [](const at::Tensor& x) { at::cat({x, x}, 0); },
      [](const at::Tensor& x) { at::index(x, {std::optional<at::Tensor>(at::zeros({1}, at::kLong))}); },
      [](const at::Tensor& x) { at::add(x, x, 2.0); },
      [](const at::Tensor& x) { at::clamp(x, -1.0, 1.0); },
      [](const at::Tensor& x) { at::sort(x, -1, false); },
      // failing calls
      [](const at::Tensor& x) { at::gelu(x, "bogus"); },
      [](const at::Tensor& x) { at::div(x, x, std::string("bogus")); },
      [](const at::Tensor& x) { at::pad(x, {1, 1}, "bogus", std::nullopt); },
      [](const at::Tensor& x) { at::narrow(x, 5, 0, 1); },
      [](const at::Tensor& x) { at::add(x, at::zeros({5}), 1.0); },
  };
}
#else
namespace ts = torch::stable;
using Fn = std::function<void(const Tensor&)>;
std::vector<Fn> cases() {
  return {
      [](const Tensor& x) { ts::gelu(x, "tanh"); },
      [](const Tensor& x) { ts::div(x, x, std::string("floor")); },
      [](const Tensor& x) { ts::div(x, x, std::nullopt); },
      [](const Tensor& x) { ts::pad(x, {1, 1}, "reflect", std::nullopt); },
      [](const Tensor& x) { ts::pad(x, {1, 1}, "constant", 2.0); },
      [](const Tensor& x) { ts::amax(x, {1}, false); },
      [](const Tensor& x) {
        ts::sum(x, std::vector<int64_t>{1}, false, torch::headeronly::ScalarType::Double);
      },
      [](const Tensor& x) { ts::transpose(x, 0, 1); },
      [](const Tensor& x) {
        ts::new_zeros(x, {2, 3}, torch::headeronly::ScalarType::Float, std::nullopt,
                      ts::Device(torch::headeronly::DeviceType::CPU), std::nullopt);
      },
      [](const Tensor& x) {
        std::vector<Tensor> xs{x, x};
        ts::cat(xs, 0);
      },
      [](const Tensor& x) {
        std::vector<std::optional<Tensor>> idx{ts::new_zeros(x, {1}, torch::headeronly::ScalarType::Long)};
        ts::index(x, idx);
      },
      [](const Tensor& x) { ts::add(x, x, 2.0); },
      [](const Tensor& x) { ts::clamp(x, -1.0, 1.0); },
      [](const Tensor& x) { ts::sort(x, -1, false); },
      // failing calls
      [](const Tensor& x) { ts::gelu(x, "bogus"); },
      [](const Tensor& x) { ts::div(x, x, std::string("bogus")); },
      [](const Tensor& x) { ts::pad(x, {1, 1}, "bogus", std::nullopt); },
      [](const Tensor& x) { ts::narrow(x, 5, 0, 1); },
      [](const Tensor& x) { ts::add(x, ts::new_zeros(x, {5}), 1.0); },
  };
}
#endif

} // namespace

int64_t run(int64_t which, Tensor x, int64_t n) {
  static const std::vector<Fn> all = cases();
#ifdef LEAKS_ATEN
  at::Tensor t = *torch::aot_inductor::tensor_handle_to_tensor_pointer(x.get());
  return loop(n, [&] { all.at(which)(t); });
#else
  return loop(n, [&] { all.at(which)(x); });
#endif
}

STABLE_TORCH_LIBRARY(LEAKS_NS, m) {
  m.def("run(int which, Tensor x, int n) -> int");
}

STABLE_TORCH_LIBRARY_IMPL(LEAKS_NS, CompositeExplicitAutograd, m) {
  m.impl("run", TORCH_BOX(&run));
}
