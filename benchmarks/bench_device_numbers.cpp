// Per-call time of the wrappers whose number routes docs/cuda.md changed, timed in C++ (benchmarks/bench_device_numbers.py).
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <chrono>

using torch::stable::Tensor;
namespace ts = torch::stable;

template <typename F>
int64_t per_call(int64_t iters, F f) {
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < iters; ++k) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count() / iters;
}

int64_t k_bench(Tensor x, Tensor i, Tensor a, Tensor b, int64_t which, int64_t iters) {
  switch (which) {
    case 0: return per_call(iters, [&] { (void)ts::clamp(x, 0.0, 0.5); });
    case 1: return per_call(iters, [&] { (void)ts::clamp_min(x, 0.1); });
    case 2: return per_call(iters, [&] { (void)ts::clamp(i, 0, 5); });
    case 3: return per_call(iters, [&] { (void)ts::hardtanh(x, -0.25, 0.25); });
    case 4: return per_call(iters, [&] { (void)ts::scatter(x, 1, i, 2.0); });
    case 5: return per_call(iters, [&] { (void)ts::mul(x, 2.5); });
    case 6: return per_call(iters, [&] { (void)ts::addmm(x, a, b, 0.5, 2.0); });
    default: return -1;
  }
}

STABLE_TORCH_LIBRARY(NS, m) { m.def("bench(Tensor x, Tensor i, Tensor a, Tensor b, int which, int iters) -> int"); }
STABLE_TORCH_LIBRARY_IMPL(NS, CompositeExplicitAutograd, m) { m.impl("bench", TORCH_BOX(&k_bench)); }
