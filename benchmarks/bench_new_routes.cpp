// Per-call cost of the libtorch-only routes on small CPU tensors.
// Built three times by bench_new_routes.py: with BENCH_ATEN (at::), against the
// generated headers as an extension builds by default (libtorch alone), and
// with -DSHIMGEN_OVERLAY (the overlay routes they replace). Each build
// registers BENCH_NS::bench(Tensor x, int iters) -> float[]: nanoseconds per
// call for add(x, y) (equivalent route), pow(x, 2) (number rule: mul),
// std(x, {1}) (dispatcher, correction None), gelu(x, "tanh") (dispatcher,
// a str), addmm(x, x, x) (libtorch's legacy aoti_torch_addmm_out),
// threshold_backward(x, x, 0) (composition: le, where), add_(x, x)
// (add, then copy_) and add_out(o, x, x) (add, then aten's out= rules and
// copy_; in grad mode, the requires-grad checks), arange(0.0, 16.0, 1.0)
// (composition: cumsum of [start, step, ...]) and linalg_vector_norm(x)
// (linalg_norm with ord None).

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <chrono>
#include <tuple>
#include <vector>

#ifdef BENCH_ATEN
#include <ATen/ops/_add_relu.h>
#include <ATen/ops/add.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/_addmm_activation.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/linalg_matrix_norm.h>
#include <ATen/ops/renorm.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/cumulative_trapezoid.h>
#include <ATen/ops/dist.h>
#include <ATen/ops/norm.h>
#include <ATen/ops/special_legendre_polynomial_p.h>
#include <ATen/ops/trapezoid.h>
#include <ATen/ops/_test_serialization_subcmul.h>
#include <ATen/ops/_pad_packed_sequence.h>
#include <ATen/ops/isin.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/elu_backward.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/hardshrink.h>
#include <ATen/ops/hardtanh.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_reduce.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/std.h>
#include <ATen/ops/threshold.h>
#include <ATen/ops/threshold_backward.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/inductor/aoti_torch/utils.h>
#else
#include <torch/csrc/stable/ops.h>
#endif

using torch::headeronly::ScalarType;
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
  const at::Tensor t_bs = at::ones({3}, at::kLong);  // batch sizes [1, 1, 1] of x's first rows
  ns.push_back(ns_per_call(iters, [&] { return at::add(t, t); }));
  ns.push_back(ns_per_call(iters, [&] { return at::pow(t, 2); }));
  ns.push_back(ns_per_call(iters, [&] { return at::std(t, {1}); }));
  ns.push_back(ns_per_call(iters, [&] { return at::gelu(t, "tanh"); }));
  ns.push_back(ns_per_call(iters, [&] { return at::addmm(t, t, t); }));
  ns.push_back(ns_per_call(iters, [&] { return at::threshold_backward(t, t, 0); }));
  at::Tensor u = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return u.add_(t); }));
  at::Tensor o = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return at::add_out(o, t, t); }));
  at::Tensor c = at::gt(t, 0);
  ns.push_back(ns_per_call(iters, [&] { return at::where(c, 1.0, 0.0); }));
  ns.push_back(ns_per_call(iters, [&] { return at::hardtanh(t, -0.5, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::hardshrink(t, 0.5); }));
  at::Tensor sorted = std::get<0>(t.flatten().sort());
  ns.push_back(ns_per_call(iters, [&] { return at::searchsorted(sorted, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::linspace(0.0, 1.0, 16); }));
  ns.push_back(ns_per_call(iters, [&] { return at::constant_pad_nd(t, {1, 1}, 0.5); }));
  at::Tensor index = at::zeros_like(t, at::kLong);
  ns.push_back(ns_per_call(iters, [&] { return at::scatter(t, 0, index, 1.0); }));
  at::Tensor v = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return at::threshold_(v, 0, 0); }));
  at::Tensor i = index.add(1);
  ns.push_back(ns_per_call(iters, [&] { return at::add(i, i); }));
  // ---- kernels arange_factory and number_as_none ----
  ns.push_back(ns_per_call(iters, [&] { return at::arange(0.0, 16.0, 1.0); }));
  ns.push_back(ns_per_call(iters, [&] { return at::linalg_vector_norm(t); }));
  // ---- number rules: pow(x, 0.5) is sqrt, pow(x, -1) reciprocal (no_grad) ----
  ns.push_back(ns_per_call(iters, [&] { return at::pow(t, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::pow(t, -1.0); }));
  // ---- number rule kernel cube: pow(x, 3) is (x * x) * x (no_grad) ----
  ns.push_back(ns_per_call(iters, [&] { return at::pow(t, 3.0); }));
  // ---- kernel elu_grad (is_result=true) ----
  ns.push_back(ns_per_call(iters, [&] { return at::elu_backward(t, 1.0, 1.0, 1.0, true, t); }));
  // ---- kernel add_relu (alpha 1) ----
  ns.push_back(ns_per_call(iters, [&] { return at::_add_relu(t, t); }));
  // ---- number_as_none (norm, dist), trapezoid kernels, wrapped_numbers (legendre) ----
  ns.push_back(ns_per_call(iters, [&] { return at::norm(t); }));
  ns.push_back(ns_per_call(iters, [&] { return at::dist(t, t); }));
  ns.push_back(ns_per_call(iters, [&] { return at::trapezoid(t, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::cumulative_trapezoid(t, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return at::special_legendre_polynomial_p(t, 3); }));
  // ---- kernel subcmul ----
  ns.push_back(ns_per_call(iters, [&] { return at::_test_serialization_subcmul(t, t, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return std::get<0>(at::_pad_packed_sequence(t, t_bs, false, 0.0, 0)); }));
  ns.push_back(ns_per_call(iters, [&] { return at::isin(0.5, t); }));
  // ---- kernel matrix_norm_two (ord 2: permute, linalg_svdvals, amax) ----
  ns.push_back(ns_per_call(iters, [&] { return at::linalg_matrix_norm(t, 2); }));
  // ---- kernel renorm_two (p 2: linalg_vector_norm, gt, add, div, where, mul) ----
  ns.push_back(ns_per_call(iters, [&] { return at::renorm(t, 2, 0, 1.0); }));
  // ---- linalg_matrix_norm.out, kernel out with composite: functional, dtype check, copy_ ----
  at::Tensor n = at::linalg_matrix_norm(t, 2);
  ns.push_back(ns_per_call(iters, [&] { return at::linalg_matrix_norm_out(n, t, 2); }));
  // ---- out= forms (kernel out; wrapped_numbers via an out= overload), an int64 plus a float tensor ----
  at::Tensor o_relu = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return at::_add_relu_out(o_relu, t, t); }));
  at::Tensor o_ss = at::ones({}, at::kLong);
  ns.push_back(ns_per_call(iters, [&] { return at::searchsorted_out(o_ss, sorted, 0.5); }));
  at::Tensor t_i = at::zeros_like(t, at::kLong);
  ns.push_back(ns_per_call(iters, [&] { return at::add(t_i, t); }));
  // ---- kernel cpu_kernel: aten's CPU kernel through libtorch's CPU C shim ----
  const at::Tensor t3 = t.view({1, 4, 4});
  ns.push_back(ns_per_call(iters, [&] { return at::baddbmm(t3, t3, t3, 1, 0.125); }));
  at::Tensor r_s = t.clone();
  ns.push_back(ns_per_call(iters, [&] { return r_s.scatter_reduce_(0, index, t, "amax", false); }));
  ns.push_back(ns_per_call(iters, [&] { return at::_addmm_activation(t, t, t, 1, 1, true); }));
  // ---- kernel foreach, a functional op: aten's CPU slow path (add.Scalar on each of 4 tensors) ----
  const std::vector<at::Tensor> t4{t, t, t, t};
  ns.push_back(ns_per_call(iters, [&] { return at::_foreach_add(t4, 1.5); }));
#else
  namespace ts = torch::stable;
  ns.push_back(ns_per_call(iters, [&] { return ts::add(x, x); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::pow(x, 2); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::std(x, {1}); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::gelu(x, "tanh"); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::addmm(x, x, x); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::threshold_backward(x, x, 0); }));
  Tensor u = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::add_(u, x); }));
  Tensor o = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::add_out(o, x, x); }));
  Tensor c = ts::gt(x, 0);
  ns.push_back(ns_per_call(iters, [&] { return ts::where(c, 1.0, 0.0); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::hardtanh(x, -0.5, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::hardshrink(x, 0.5); }));
  Tensor sorted = std::get<0>(ts::sort(ts::flatten(x)));
  ns.push_back(ns_per_call(iters, [&] { return ts::searchsorted(sorted, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::linspace(0.0, 1.0, 16); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::constant_pad_nd(x, {1, 1}, 0.5); }));
  Tensor index = ts::zeros_like(x, ScalarType::Long);
  ns.push_back(ns_per_call(iters, [&] { return ts::scatter(x, 0, index, 1.0); }));
  Tensor v = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::threshold_(v, 0, 0); }));
  Tensor i = ts::add(index, ts::ones_like(index));
  ns.push_back(ns_per_call(iters, [&] { return ts::add(i, i); }));
  // ---- kernels arange_factory and number_as_none (a double end: the overlay's shim refuses an integer) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::arange(0.0, 16.0, 1.0); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::linalg_vector_norm(x); }));
  // ---- number rules (in grad mode: two dispatcher calls ask whether autograd records the call) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::pow(x, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::pow(x, -1.0); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::pow(x, 3.0); }));
  // ---- kernel elu_grad (is_result=true: mul, neg, sub, mul, mul, mul, le, where.self_out; + records_grad) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::elu_backward(x, 1.0, 1.0, 1.0, true, x); }));
  // ---- kernel add_relu (alpha 1: add's wrapper, isnan/eq/signbit/and/or/any, clamp; + records_grad) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::_add_relu(x, x); }));
  // ---- number_as_none (norm, dist), trapezoid kernels, wrapped_numbers (legendre) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::norm(x); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::dist(x, x); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::trapezoid(x, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::cumulative_trapezoid(x, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::special_legendre_polynomial_p(x, 3); }));
  // ---- kernel subcmul (mul.Scalar's and sub.Tensor's wrappers) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::_test_serialization_subcmul(x, x, 0.5); }));
  // ---- kernel pad_packed (batch sizes [1, 1, 1] of x's rows), isin of a number (wrapped_numbers) ----
  const Tensor x_bs = ts::full({3}, 1, torch::headeronly::ScalarType::Long);
  ns.push_back(ns_per_call(iters, [&] { return std::get<0>(ts::_pad_packed_sequence(x, x_bs, false, 0.0, 0)); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::isin(0.5, x); }));
  // ---- kernel matrix_norm_two (ord 2: permute, linalg_svdvals, amax) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::linalg_matrix_norm(x, 2); }));
  // ---- kernel renorm_two (p 2: linalg_vector_norm, gt, add, div, where, mul) ----
  ns.push_back(ns_per_call(iters, [&] { return ts::renorm(x, 2, 0, 1.0); }));
  // ---- linalg_matrix_norm.out, kernel out with composite: functional, dtype check, copy_ ----
  Tensor n = ts::linalg_matrix_norm(x, 2);
  ns.push_back(ns_per_call(iters, [&] { return ts::linalg_matrix_norm_out(n, x, 2); }));
  // ---- out= forms (kernel out; wrapped_numbers via an out= overload), an int64 plus a float tensor ----
  Tensor o_relu = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::_add_relu_out(o_relu, x, x); }));
  Tensor o_ss = ts::zeros_like(ts::select(ts::flatten(index), 0, 0));
  ns.push_back(ns_per_call(iters, [&] { return ts::searchsorted_out(o_ss, sorted, 0.5); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::add(index, x); }));
  // ---- kernel cpu_kernel (+ records_grad, resolve_neg/conj, the autocast probe for baddbmm) ----
  const Tensor x3 = ts::view(x, {1, 4, 4});
  ns.push_back(ns_per_call(iters, [&] { return ts::baddbmm(x3, x3, x3, 1, 0.125); }));
  Tensor r_s = ts::clone(x);
  ns.push_back(ns_per_call(iters, [&] { return ts::scatter_reduce_(r_s, 0, index, x, "amax", false); }));
  ns.push_back(ns_per_call(iters, [&] { return ts::_addmm_activation(x, x, x, 1, 1, true); }));
  // ---- kernel foreach, a functional op: add.Scalar's wrapper on each of 4 tensors ----
  const std::vector<Tensor> x4{x, x, x, x};
  ns.push_back(ns_per_call(iters, [&] { return ts::_foreach_add(x4, 1.5); }));
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
