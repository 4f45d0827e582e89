// Per-call cost of the wrappers that take a schema Scalar, on small tensors
// (CPU, or CUDA with bench_scalars.py --device cuda). Built several times by bench_scalars.py: with BENCH_ATEN (calling
// at::), against shimgen's generated ops.h (twice: the noise floor) and against
// upstream's ops.h (only its Scalar wrappers: fill_ and full, which take a
// double). Each build registers
//   BENCH_NS::results(f, i, f2, i2, i3) -> Tensor[]  each case's result, once
//   BENCH_NS::bench(f, i, f2, i2, iters) -> float[]  ns per call of each case
// and, in the at:: build only,
//   BENCH_NS::bench_route(f, i, f2, i2, iters) -> float[]  the same, with at::
//     taking the generated wrapper's route (the 0-dim tensor, the sibling, the
//     composition): what the route costs inside ATen, without the stable ABI
// in the order of kCases in bench_scalars.py. f is a float32 tensor, i an int64
// one; f2, i2, i3 are scratch copies the in-place cases write to (bench
// passes i2 for i3). A build without a case returns NaN for its time and f as
// its result (bench_scalars.py skips the cases whose time is NaN).

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#ifdef BENCH_ATEN
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/bitwise_and.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/fill.h>
#include <ATen/ops/full.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/scalar_tensor.h>
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

static constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

#ifdef BENCH_ATEN
static at::Tensor& aten(const Tensor& t) {
  return *torch::aot_inductor::tensor_handle_to_tensor_pointer(t.get());
}
static Tensor stable(at::Tensor t) {
  return Tensor(torch::aot_inductor::new_tensor_handle(std::move(t)));
}
// Every case as a callable returning at::Tensor, in kCases order.
#define BENCH_CASES(F, I, F2, I2, I3, CASE, NONE)            \
  at::Tensor& f = aten(F);                                   \
  at::Tensor& i = aten(I);                                   \
  at::Tensor& f2 = aten(F2);                                 \
  at::Tensor& i2 = aten(I2);                                 \
  at::Tensor& i3 = aten(I3);                                 \
  CASE([&] { return at::mul(f, 2.5); });                     \
  CASE([&] { return at::mul(i, 2); });                       \
  CASE([&] { return i2.mul_(2); });                          \
  CASE([&] { return at::add(f, f, 2); });                    \
  CASE([&] { return at::bitwise_and(i, 6); });               \
  CASE([&] { return at::clamp(i, 0, 5); });                  \
  CASE([&] { return at::clamp(f, 0.0, 1.0); });              \
  CASE([&] { return at::full({4, 4}, 7); });                 \
  CASE([&] { return at::full({4, 4}, 7.5); });               \
  CASE([&] { return at::fill_(f2, 3); });                    \
  CASE([&] { return at::fill_(i3, 3); });
#define RESULT(call) out.push_back(stable(call()))
// The route each generated wrapper takes for its case (bench_scalars.py's
// CASES), written with at::; a 0-dim tensor has the dtype the wrapper picks
// (the number's own: int64 for an integer, float64 for a double).
#define BENCH_ROUTES(F, I, F2, I2, I3, CASE)                                 \
  at::Tensor& f = aten(F);                                                   \
  at::Tensor& i = aten(I);                                                   \
  at::Tensor& f2 = aten(F2);                                                 \
  at::Tensor& i2 = aten(I2);                                                 \
  at::Tensor& i3 = aten(I3);                                                 \
  auto n = [](const at::Scalar& v) {                                         \
    return at::scalar_tensor(v, v.isIntegral(false) ? at::kLong : at::kDouble); \
  };                                                                         \
  /* on the operand's device: clamp's kernels check devices (CPU: as n) */   \
  auto nd = [](const at::Scalar& v, const at::Tensor& like) {                \
    return at::scalar_tensor(v, at::TensorOptions()                          \
        .dtype(v.isIntegral(false) ? at::kLong : at::kDouble)                \
        .device(like.device()));                                             \
  };                                                                         \
  CASE([&] { return at::mul(f, n(2.5)); });                                  \
  CASE([&] { return at::mul(i, n(2)); });                                    \
  CASE([&] { return i2.mul_(n(2)); });                                       \
  CASE([&] { return at::add(f, f, 2); });                                    \
  CASE([&] { return at::bitwise_and(i, n(6)); });                            \
  CASE([&] { return at::clamp(i, nd(0, i), nd(5, i)); });                    \
  CASE([&] { return at::clamp(f, nd(0.0, f), nd(1.0, f)); });                \
  CASE([&] { return at::empty({4, 4}, at::kLong).fill_(n(7)); });            \
  CASE([&] { return at::full({4, 4}, 7.5); });                               \
  CASE([&] { return at::fill_(f2, 3); });                                    \
  CASE([&] { return i3.fill_(n(3)); });
#else
namespace ts = torch::stable;
#ifdef SHIMGEN_STABLE_OPS_H
#define BENCH_CASES(F, I, F2, I2, I3, CASE, NONE) \
  const Tensor& f = F;                            \
  const Tensor& i = I;                            \
  const Tensor& f2 = F2;                          \
  const Tensor& i2 = I2;                          \
  const Tensor& i3 = I3;                          \
  CASE([&] { return ts::mul(f, 2.5); });          \
  CASE([&] { return ts::mul(i, 2); });            \
  CASE([&] { return ts::mul_(i2, 2); });          \
  CASE([&] { return ts::add(f, f, 2); });         \
  CASE([&] { return ts::bitwise_and(i, 6); });    \
  CASE([&] { return ts::clamp(i, 0, 5); });       \
  CASE([&] { return ts::clamp(f, 0.0, 1.0); });   \
  CASE([&] { return ts::full({4, 4}, 7); });      \
  CASE([&] { return ts::full({4, 4}, 7.5); });    \
  CASE([&] { return ts::fill_(f2, 3); });         \
  CASE([&] { return ts::fill_(i3, 3); });
#else
// Upstream's ops.h: fill_ and full take a double (the caller writes 3.0, 7.0).
#define BENCH_CASES(F, I, F2, I2, I3, CASE, NONE) \
  const Tensor& f = F;                            \
  const Tensor& f2 = F2;                          \
  const Tensor& i3 = I3;                          \
  (void)I;                                        \
  (void)I2;                                       \
  NONE(f);                                        \
  NONE(f);                                        \
  NONE(f);                                        \
  NONE(f);                                        \
  NONE(f);                                        \
  NONE(f);                                        \
  NONE(f);                                        \
  CASE([&] { return ts::full({4, 4}, 7.0); });    \
  CASE([&] { return ts::full({4, 4}, 7.5); });    \
  CASE([&] { return ts::fill_(f2, 3.0); });       \
  CASE([&] { return ts::fill_(i3, 3.0); });
#endif
#define RESULT(call) out.push_back(call())
#endif

std::vector<Tensor> results(Tensor F, Tensor I, Tensor F2, Tensor I2, Tensor I3) {
  std::vector<Tensor> out;
#define NONE_RESULT(t) out.push_back(t)
  BENCH_CASES(F, I, F2, I2, I3, RESULT, NONE_RESULT)
#undef NONE_RESULT
  return out;
}

std::vector<double> bench(Tensor F, Tensor I, Tensor F2, Tensor I2, int64_t iters) {
  std::vector<double> r;
#define TIME(call) r.push_back(ns_per_call(iters, call))
#define NONE_TIME(t) r.push_back(kMissing)
  BENCH_CASES(F, I, F2, I2, I2, TIME, NONE_TIME)
#undef NONE_TIME
#undef TIME
  return r;
}

#ifdef BENCH_ATEN
std::vector<Tensor> route_results(Tensor F, Tensor I, Tensor F2, Tensor I2, Tensor I3) {
  std::vector<Tensor> out;
  BENCH_ROUTES(F, I, F2, I2, I3, RESULT)
  return out;
}

std::vector<double> bench_route(Tensor F, Tensor I, Tensor F2, Tensor I2, int64_t iters) {
  std::vector<double> r;
#define TIME(call) r.push_back(ns_per_call(iters, call))
  BENCH_ROUTES(F, I, F2, I2, I2, TIME)
#undef TIME
  return r;
}
#endif

STABLE_TORCH_LIBRARY(BENCH_NS, m) {
  m.def(
      "results(Tensor f, Tensor i, Tensor(a!) f2, Tensor(b!) i2, "
      "Tensor(c!) i3) -> Tensor[]");
  m.def("bench(Tensor f, Tensor i, Tensor(a!) f2, Tensor(b!) i2, int iters) -> float[]");
#ifdef BENCH_ATEN
  m.def(
      "route_results(Tensor f, Tensor i, Tensor(a!) f2, Tensor(b!) i2, "
      "Tensor(c!) i3) -> Tensor[]");
  m.def("bench_route(Tensor f, Tensor i, Tensor(a!) f2, Tensor(b!) i2, int iters) -> float[]");
#endif
}

STABLE_TORCH_LIBRARY_IMPL(BENCH_NS, CompositeExplicitAutograd, m) {
  m.impl("results", TORCH_BOX(&results));
  m.impl("bench", TORCH_BOX(&bench));
#ifdef BENCH_ATEN
  m.impl("route_results", TORCH_BOX(&route_results));
  m.impl("bench_route", TORCH_BOX(&bench_route));
#endif
}
