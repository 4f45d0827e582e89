// Per-call cost of torch::stable wrappers on small CPU tensors. Built three
// times by bench_calls.py: against upstream's ops.h, against shimgen's
// generated ops.h (-I generated/), and with BENCH_ATEN, calling at:: directly.
// Each build registers BENCH_NS::bench(Tensor x, int iters) -> float[] that
// returns nanoseconds per call for every op in kOps (NaN where the build has
// no such wrapper).

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#ifdef BENCH_ATEN
#include <ATen/ops/add.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/fill.h>
#include <ATen/ops/flatten.h>
#include <ATen/ops/narrow.h>
#include <ATen/ops/new_zeros.h>
#include <ATen/ops/pad.h>
#include <ATen/ops/subtract.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/transpose.h>
#include <torch/csrc/inductor/aoti_torch/utils.h>
#else
#include <torch/csrc/stable/ops.h>
#endif

using torch::stable::Tensor;

template <class F>
static double ns_per_call(int64_t iters, F&& f) {
  f(); // warm up
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) {
    f();
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
}

std::vector<double> bench(Tensor x, int64_t iters) {
  std::vector<double> r;
#ifdef BENCH_ATEN
  at::Tensor t = *torch::aot_inductor::tensor_handle_to_tensor_pointer(x.get());
  r.push_back(ns_per_call(iters, [&] { return at::amax(t, {1}, false); }));
  r.push_back(ns_per_call(iters, [&] { return at::narrow(t, 0, 0, 2); }));
  r.push_back(ns_per_call(iters, [&] { return at::fill_(t, 1.0); }));
  r.push_back(ns_per_call(iters, [&] { return at::pad(t, {1, 1}); }));
  r.push_back(ns_per_call(iters, [&] { return at::subtract(t, t, 1.0); }));
  r.push_back(ns_per_call(iters, [&] { return t.new_zeros({4, 4}); }));
  r.push_back(ns_per_call(iters, [&] { return at::transpose(t, 0, 1); }));
  r.push_back(ns_per_call(iters, [&] { return at::flatten(t, 0, -1); }));
  r.push_back(ns_per_call(iters, [&] { return at::sum(t, {1}, false); }));
  r.push_back(ns_per_call(iters, [&] { return at::add(t, t, 1.0); }));
#else
  namespace ts = torch::stable;
  r.push_back(ns_per_call(iters, [&] { return ts::amax(x, {1}, false); }));
  r.push_back(ns_per_call(iters, [&] { return ts::narrow(x, 0, 0, 2); }));
  r.push_back(ns_per_call(iters, [&] { return ts::fill_(x, 1.0); }));
  r.push_back(ns_per_call(iters, [&] { return ts::pad(x, {1, 1}); }));
  r.push_back(ns_per_call(iters, [&] { return ts::subtract(x, x, 1.0); }));
  r.push_back(ns_per_call(iters, [&] { return ts::new_zeros(x, {4, 4}); }));
  r.push_back(ns_per_call(iters, [&] { return ts::transpose(x, 0, 1); }));
  r.push_back(ns_per_call(iters, [&] { return ts::flatten(x, 0, -1); }));
  r.push_back(ns_per_call(
      iters, [&] { return ts::sum(x, std::vector<int64_t>{1}, false); }));
#ifdef SHIMGEN_STABLE_OPS_H
  r.push_back(ns_per_call(iters, [&] { return ts::add(x, x, 1.0); }));
#else
  r.push_back(std::numeric_limits<double>::quiet_NaN()); // upstream has no add
#endif
#endif
  return r;
}

STABLE_TORCH_LIBRARY(BENCH_NS, m) {
  m.def("bench(Tensor x, int iters) -> float[]");
}

STABLE_TORCH_LIBRARY_IMPL(BENCH_NS, CompositeExplicitAutograd, m) {
  m.impl("bench", TORCH_BOX(&bench));
}
