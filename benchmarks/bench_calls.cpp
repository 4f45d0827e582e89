// Per-call cost of torch::stable wrappers on small CPU tensors. Built several
// times by bench_calls.py: against upstream's ops.h (twice: the noise floor),
// against shimgen's generated ops.h (-I generated/), against one generated as
// if bool[N] had no dispatcher conversion, and with BENCH_ATEN, calling at::.
// Each build registers BENCH_NS::bench(Tensor x, int iters) -> float[] that
// returns nanoseconds per call for every op in kOps (NaN where the build has
// no such wrapper).

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <exception>

#ifdef BENCH_ATEN
#include <ATen/ops/empty_like.h>
#include <ATen/ops/add.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <ATen/ops/native_group_norm_backward.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <ATen/ops/ones.h>
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
#ifdef BENCH_DEVICE
#include <torch/csrc/stable/cpu/ops.h>
#endif
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

#ifdef BENCH_BACKWARD
// The backward ops whose bool[3] output_mask crosses the boxed dispatcher from
// 2.10 on (they used shimgen's C shim in the overlay before): built with
// BENCH_ATEN, with the generated ops.h (dispatcher route), and with an ops.h
// generated as if bool[N] had no dispatcher conversion (overlay C shim route).
std::vector<double> bench_backward(Tensor x, int64_t iters) {
  std::vector<double> r;
#ifdef BENCH_ATEN
  at::Tensor t = *torch::aot_inductor::tensor_handle_to_tensor_pointer(x.get());
  auto z = [&](at::IntArrayRef sizes) { return at::ones(sizes, t.options()); };
  at::Tensor g4 = z({4, 4}), m41 = z({4, 1}), v4 = z({4});
  r.push_back(ns_per_call(iters, [&] {
    return at::native_layer_norm_backward(
        g4, t, {4}, m41, m41, v4, v4, {true, true, true});
  }));
  r.push_back(ns_per_call(iters, [&] {
    return at::native_batch_norm_backward(
        g4, t, v4, v4, v4, v4, v4, true, 1e-5, {true, true, true});
  }));
  at::Tensor in3 = z({2, 4, 2}), m22 = z({2, 2});
  r.push_back(ns_per_call(iters, [&] {
    return at::native_group_norm_backward(
        in3, in3, m22, m22, v4, 2, 4, 2, 2, {true, true, true});
  }));
  at::Tensor in4 = z({1, 2, 4, 4}), w4 = z({3, 2, 2, 2}), go = z({1, 3, 3, 3});
  r.push_back(ns_per_call(iters, [&] {
    return at::convolution_backward(
        go, in4, w4, std::vector<int64_t>{3}, {1, 1}, {0, 0}, {1, 1}, false,
        {0, 0}, 1, {true, true, true});
  }));
#else
  namespace ts = torch::stable;
  auto z = [&](std::vector<int64_t> sizes) {
    Tensor out = ts::new_zeros(x, sizes);
    ts::fill_(out, 1.0);
    return out;
  };
  Tensor g4 = z({4, 4}), m41 = z({4, 1}), v4 = z({4});
  r.push_back(ns_per_call(iters, [&] {
    return ts::native_layer_norm_backward(
        g4, x, {4}, m41, m41, v4, v4, {true, true, true});
  }));
  r.push_back(ns_per_call(iters, [&] {
    return ts::native_batch_norm_backward(
        g4, x, v4, v4, v4, v4, v4, true, 1e-5, {true, true, true});
  }));
  Tensor in3 = z({2, 4, 2}), m22 = z({2, 2});
  r.push_back(ns_per_call(iters, [&] {
    return ts::native_group_norm_backward(
        in3, in3, m22, m22, v4, 2, 4, 2, 2, {true, true, true});
  }));
  Tensor in4 = z({1, 2, 4, 4}), w4 = z({3, 2, 2, 2}), go = z({1, 3, 3, 3});
  r.push_back(ns_per_call(iters, [&] {
    return ts::convolution_backward(
        go, in4, w4, std::vector<int64_t>{3}, {1, 1}, {0, 0}, {1, 1}, false,
        {0, 0}, 1, {true, true, true});
  }));
#endif
  return r;
}
#endif

#ifdef BENCH_DEVICE_CALLS
// The calls the device route (torch::stable::cpu::, libtorch's cpu C shims) serves, built with BENCH_ATEN
// (at::), with the generated ops.h (the default wrappers: the route the device route would replace) and with
// BENCH_DEVICE (torch::stable::cpu::). A call a build refuses (a shimgen: error) is NaN.
template <class F>
static double ns_or_nan(int64_t iters, F&& f) {
  try {
    return ns_per_call(iters, f);
  } catch (const std::exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

std::vector<double> bench_device(Tensor x, int64_t iters) {
  std::vector<double> r;
#ifdef BENCH_ATEN
  at::Tensor t = *torch::aot_inductor::tensor_handle_to_tensor_pointer(x.get());
  at::Tensor o = at::empty_like(t);
  r.push_back(ns_or_nan(iters, [&] { return at::add(t, t); }));
  r.push_back(ns_or_nan(iters, [&] { return at::add(t, t, 0.5); }));
  r.push_back(ns_or_nan(iters, [&] { return at::pow(t, 2.0); }));
  r.push_back(ns_or_nan(iters, [&] { return at::mul(t, 2.5); }));
  r.push_back(ns_or_nan(iters, [&] { return at::addmm_out(o, t, t, t); }));
  r.push_back(ns_or_nan(iters, [&] { return at::cumsum(t, 1); }));
#else
#ifdef BENCH_DEVICE
  namespace d = torch::stable::cpu;
#else
  namespace d = torch::stable;
#endif
  Tensor o = torch::stable::empty_like(x);
  r.push_back(ns_or_nan(iters, [&] { return d::add(x, x); }));
  r.push_back(ns_or_nan(iters, [&] { return d::add(x, x, 0.5); }));
  r.push_back(ns_or_nan(iters, [&] { return d::pow(x, 2.0); }));
  r.push_back(ns_or_nan(iters, [&] { return d::mul(x, 2.5); }));
  r.push_back(ns_or_nan(iters, [&] { return d::addmm_out(o, x, x, x); }));
  r.push_back(ns_or_nan(iters, [&] { return d::cumsum(x, 1); }));
#endif
  return r;
}
#endif

STABLE_TORCH_LIBRARY(BENCH_NS, m) {
  m.def("bench(Tensor x, int iters) -> float[]");
#ifdef BENCH_BACKWARD
  m.def("bench_backward(Tensor x, int iters) -> float[]");
#endif
#ifdef BENCH_DEVICE_CALLS
  m.def("bench_device(Tensor x, int iters) -> float[]");
#endif
}

STABLE_TORCH_LIBRARY_IMPL(BENCH_NS, CompositeExplicitAutograd, m) {
  m.impl("bench", TORCH_BOX(&bench));
#ifdef BENCH_BACKWARD
  m.impl("bench_backward", TORCH_BOX(&bench_backward));
#endif
#ifdef BENCH_DEVICE_CALLS
  m.impl("bench_device", TORCH_BOX(&bench_device));
#endif
}
