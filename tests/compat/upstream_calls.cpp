// Calls every wrapper of upstream's torch/csrc/stable/ops.h (2.10-2.15: each
// release's own functions, under the version its header has) in the way
// extension code written against that header does. The test compiles this
// file twice, against upstream's ops.h and against shimgen's generated one (via
// -I generated/ in front of torch's include directory), and compares results.
// COMPAT_NS names the op namespace so both builds can be loaded side by side.

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <optional>
#include <vector>

#if defined(EXPECT_SHIMGEN_OPS_H) && !defined(SHIMGEN_STABLE_OPS_H)
#error "expected shimgen's generated ops.h to shadow torch's"
#endif

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
namespace ts = torch::stable;

// Deterministic stand-in for the uninitialized memory of empty-like ops.
static Tensor filled(Tensor t, double v) {
  ts::fill_(t, v);
  return t;
}

std::vector<Tensor> run_all(Tensor x) { // x: float32, shape [2, 3]
  std::vector<Tensor> out;
  // Wrappers available since 2.9.
  out.push_back(filled(ts::empty_like(x), 1.5));
  out.push_back(ts::narrow(x, 1, 0, 2));
  out.push_back(filled(ts::new_empty(x, {2, 2}), 0.25));
  out.push_back(ts::new_zeros(x, {3}, ScalarType::Long));
  out.push_back(ts::pad(x, {1, 1}, "constant", 0.5));
  out.push_back(ts::pad(x, {1, 2}));
  out.push_back(ts::amax(x, 1, false));
  out.push_back(ts::amax(x, {0, 1}, true));
  out.push_back(ts::transpose(x, 0, 1));
  Tensor z = ts::clone(x);
  out.push_back(ts::zero_(z));
  Tensor c = filled(ts::empty_like(x), 0.0);
  out.push_back(ts::copy_(c, x));
  out.push_back(ts::clone(x));
  out.push_back(ts::flatten(x));
  out.push_back(ts::flatten(x, 0, 1));
  out.push_back(ts::unsqueeze(x, 0));
  out.push_back(ts::squeeze(ts::unsqueeze(x, 1), 1));
  out.push_back(ts::select(x, 0, 1));
  out.push_back(ts::matmul(x, ts::transpose(x, 0, 1)));
  // Wrappers available since 2.10.
  std::vector<int64_t> counts(static_cast<size_t>(ts::get_num_threads()), 0);
  ts::parallel_for(0, 16, 4, [&](int64_t b, int64_t e) { (void)b, (void)e; });
  out.push_back(filled(ts::empty({2, 3}), 2.0));
  out.push_back(filled(ts::empty({4}, ScalarType::Double), 3.0));
  out.push_back(ts::reshape(x, {3, 2}));
  out.push_back(ts::view(x, {6}));
  static float blob[6] = {1, 2, 3, 4, 5, 6};
  ts::Device cpu(torch::headeronly::DeviceType::CPU);
  out.push_back(ts::clone(ts::from_blob(blob, {2, 3}, {3, 1}, cpu, ScalarType::Float)));
#if defined(TORCH_VERSION_2_11_0) && TORCH_FEATURE_VERSION >= TORCH_VERSION_2_11_0
  static double blob2[2] = {7, 8};
  out.push_back(ts::clone(ts::from_blob(
      blob2, {2}, {1}, cpu, ScalarType::Double, [](void*) {})));
#else
  out.push_back(ts::full({2}, 7.0, ScalarType::Double)); // keeps the count
#endif
  out.push_back(ts::to(x, ScalarType::Double));
  out.push_back(ts::to(x, cpu));
  out.push_back(ts::contiguous(ts::transpose(x, 0, 1)));
  out.push_back(filled(
      ts::new_empty(x, {2}, ScalarType::Double, std::nullopt, std::nullopt, std::nullopt),
      4.0));
  out.push_back(ts::new_zeros(x, {2, 2}, std::nullopt, std::nullopt, cpu));
  out.push_back(ts::sum(x));
  out.push_back(ts::sum(x, std::vector<int64_t>{1}, true));
  out.push_back(ts::sum(x, std::vector<int64_t>{0}, false, ScalarType::Double));
  // The styles of PyTorch's own stable test extensions: a std::optional of a
  // HeaderOnlyArrayRef, std::nullopt, a HeaderOnlyArrayRef.
  std::vector<int64_t> dims{1};
  std::optional<torch::headeronly::HeaderOnlyArrayRef<int64_t>> opt_dims(dims);
  out.push_back(ts::sum(x, opt_dims, false, std::nullopt));
  out.push_back(ts::sum(x, std::nullopt, true, ScalarType::Double));
  out.push_back(ts::sum(x, std::nullopt));
  torch::headeronly::HeaderOnlyArrayRef<int64_t> dim_ref(dims);
  out.push_back(ts::sum(x, dim_ref, false, std::nullopt));
  Tensor s = ts::new_zeros(x, {3});
  out.push_back(ts::sum_out(s, x, std::vector<int64_t>{0}));
  out.push_back(ts::subtract(x, x));
  out.push_back(ts::subtract(x, ts::transpose(ts::transpose(x, 0, 1), 0, 1), 2.0));
  out.push_back(ts::full({2, 2}, 3.0));
  out.push_back(ts::full({2}, 5.0, ScalarType::Double));
#if defined(TORCH_VERSION_2_14_0) && TORCH_FEATURE_VERSION >= TORCH_VERSION_2_14_0
  // Wrappers available since 2.14.
  Tensor xi = ts::to(ts::subtract(x, ts::full({2, 3}, -3.0)), ScalarType::Long);
  Tensor one = ts::full({2, 3}, 1.0, ScalarType::Long);
  out.push_back(ts::bitwise_and(xi, one));
  out.push_back(ts::bitwise_or(xi, one));
  out.push_back(ts::bitwise_left_shift(xi, one));
  out.push_back(ts::bitwise_right_shift(xi, one));
  out.push_back(ts::permute(x, {1, 0}));
  out.push_back(ts::index_select(x, 1, ts::full({2}, 2.0, ScalarType::Long)));
  out.push_back(ts::floor_divide(x, ts::full({2, 3}, 2.0)));
  out.push_back(ts::full({1}, ts::is_pinned(x) ? 1.0 : 0.0));
  out.push_back(ts::clone(ts::view(x, ScalarType::Int)));
#endif
#if defined(TORCH_VERSION_2_15_0) && TORCH_FEATURE_VERSION >= TORCH_VERSION_2_15_0
  // Wrappers available since 2.15.
  auto sorted = ts::sort(x, 1, true);
  out.push_back(std::get<0>(sorted));
  out.push_back(std::get<1>(sorted));
  auto stable = ts::sort(x, std::optional<bool>(true), 0);
  out.push_back(std::get<0>(stable));
  out.push_back(std::get<1>(stable));
#endif
  return out;
}

// One level of indirection expands COMPAT_NS first (2.10's macros stringify
// their argument as written).
#define COMPAT_LIBRARY(ns, m) STABLE_TORCH_LIBRARY(ns, m)
#define COMPAT_LIBRARY_IMPL(ns, k, m) STABLE_TORCH_LIBRARY_IMPL(ns, k, m)

COMPAT_LIBRARY(COMPAT_NS, m) {
  m.def("run_all(Tensor x) -> Tensor[]");
}

COMPAT_LIBRARY_IMPL(COMPAT_NS, CompositeExplicitAutograd, m) {
  m.impl("run_all", TORCH_BOX(&run_all));
}
