// Per-call cost of the `scalars_tensor` routes (addcmul, addcdiv, their
// in-place and _foreach_ forms) on small CPU tensors. Built three times by
// bench_addc.py: with BENCH_ATEN (at::), against the generated headers as an
// extension builds by default (libtorch alone: _foreach_X.Tensor on
// one-element lists through the dispatcher), and with -DSHIMGEN_OVERLAY
// (shimgen's overlay shims, the route they replace). Each build registers
// BENCH_NS::bench(Tensor x, int iters) -> float[]: nanoseconds per call.

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <chrono>
#include <vector>

#ifdef BENCH_ATEN
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/addcdiv.h>
#include <ATen/ops/addcmul.h>
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

namespace BENCH_NS {
std::vector<double> bench(Tensor x, int64_t iters) {
  std::vector<double> ns;
#ifdef BENCH_ATEN
  at::Tensor t = *torch::aot_inductor::tensor_handle_to_tensor_pointer(x.get());
  at::Tensor d = at::add(at::abs(t), 1);
  ns.push_back(ns_per_call(iters, [&] { return at::addcmul(t, t, t, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::addcdiv(t, t, d, 0.5); }));
  at::Tensor u = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return u.addcmul_(t, t, 0.001); }));
  ns.push_back(ns_per_call(iters, [&] { return u.addcdiv_(t, d, -0.001); }));
  std::vector<at::Tensor> us{t.clone(), t.clone()};
  std::vector<at::Tensor> ts{t, t};
  ns.push_back(ns_per_call(iters, [&] { at::_foreach_addcmul_(us, ts, ts, 0.001); }));
#else
  namespace ts = torch::stable;
  Tensor d = ts::add(ts::abs(x), 1.0);
  ns.push_back(ns_per_call(iters, [&] { return ts::addcmul(x, x, x, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::addcdiv(x, x, d, 0.5); }));
  Tensor u = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::addcmul_(u, x, x, 0.001); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::addcdiv_(u, x, d, -0.001); }));
  std::vector<Tensor> us{ts::clone(x), ts::clone(x)};
  std::vector<Tensor> xs{x, x};
  ns.push_back(ns_per_call(iters, [&] { ts::_foreach_addcmul_(us, xs, xs, shimgen::Scalar(0.001)); }));
#endif
  return ns;
}
} // namespace BENCH_NS

STABLE_TORCH_LIBRARY(BENCH_NS, m) {
  m.def("bench(Tensor x, int iters) -> float[]");
}

STABLE_TORCH_LIBRARY_IMPL(BENCH_NS, CompositeExplicitAutograd, m) {
  m.impl("bench", TORCH_BOX(&BENCH_NS::bench));
}
