// A CUDA-style operator library written against ATen: row softmax, a scaled row gather and a bias + GELU
// epilogue, each with a CPU kernel and (built with -DWITH_CUDA by nvcc) a CUDA kernel launched on the current
// stream under a device guard. Input of tests/test_port_fix.py.
#include <torch/extension.h>

#include <cmath>
#include <cstdint>

#ifdef WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace row_ops {

template <typename scalar_t>
void row_softmax_cpu_kernel(const at::Tensor& x, at::Tensor& out) {
  auto X = x.accessor<scalar_t, 2>();
  auto O = out.accessor<scalar_t, 2>();
  for (int64_t r = 0; r < X.size(0); ++r) {
    scalar_t top = X[r][0];
    for (int64_t c = 1; c < X.size(1); ++c) {
      top = X[r][c] > top ? X[r][c] : top;
    }
    scalar_t total = 0;
    for (int64_t c = 0; c < X.size(1); ++c) {
      O[r][c] = std::exp(X[r][c] - top);
      total += O[r][c];
    }
    for (int64_t c = 0; c < X.size(1); ++c) {
      O[r][c] /= total;
    }
  }
}

#ifdef WITH_CUDA
template <typename scalar_t>
__global__ void row_softmax_cuda_kernel(at::PackedTensorAccessor32<scalar_t, 2, at::RestrictPtrTraits> x,
                                        at::PackedTensorAccessor32<scalar_t, 2, at::RestrictPtrTraits> out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= x.size(0)) {
    return;
  }
  scalar_t top = x[r][0];
  for (int c = 1; c < x.size(1); ++c) {
    top = x[r][c] > top ? x[r][c] : top;
  }
  scalar_t total = 0;
  for (int c = 0; c < x.size(1); ++c) {
    out[r][c] = exp(x[r][c] - top);
    total += out[r][c];
  }
  for (int c = 0; c < x.size(1); ++c) {
    out[r][c] /= total;
  }
}

at::Tensor row_softmax_cuda(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2, "row_softmax: x must be a 2-D CUDA tensor");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  auto out = at::empty_like(xc);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const int threads = 128;
  const int blocks = static_cast<int>((xc.size(0) + threads - 1) / threads);
  AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "row_softmax_cuda", [&] {
    row_softmax_cuda_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
        xc.packed_accessor32<scalar_t, 2, at::RestrictPtrTraits>(),
        out.packed_accessor32<scalar_t, 2, at::RestrictPtrTraits>());
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
#endif

at::Tensor row_softmax(const at::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) > 0, "row_softmax: x must be [R, C] with C > 0");
  auto xc = x.contiguous();
  auto out = at::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "row_softmax", [&] { row_softmax_cpu_kernel<scalar_t>(xc, out); });
  return out;
}

// out[r][j] = x[r][index[r][j]] * scale
at::Tensor gather_scale(const at::Tensor& x, const at::Tensor& index, double scale) {
  TORCH_CHECK(x.dim() == 2 && index.dim() == 2 && index.size(0) == x.size(0),
              "gather_scale: x [R, C] and index [R, K]");
  auto picked = at::gather(x, 1, index);
  return picked * scale;
}

// gelu(x + bias), tanh approximation, computed as the fused epilogue's reference
at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias) {
  TORCH_CHECK(bias.dim() == 1 && bias.size(0) == x.size(-1), "bias_gelu: bias must be [C]");
  auto y = x + bias;
  auto inner = (y + at::pow(y, 3) * 0.044715) * std::sqrt(2.0 / M_PI);
  return y * 0.5 * (at::tanh(inner) + 1);
}

}  // namespace row_ops

TORCH_LIBRARY(row_ops, m) {
  m.def("row_softmax(Tensor x) -> Tensor");
  m.def("gather_scale(Tensor x, Tensor index, float scale) -> Tensor");
  m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
}

TORCH_LIBRARY_IMPL(row_ops, CPU, m) {
  m.impl("row_softmax", &row_ops::row_softmax);
  m.impl("gather_scale", &row_ops::gather_scale);
  m.impl("bias_gelu", &row_ops::bias_gelu);
}

#ifdef WITH_CUDA
TORCH_LIBRARY_IMPL(row_ops, CUDA, m) {
  m.impl("row_softmax", &row_ops::row_softmax_cuda);
  m.impl("gather_scale", &row_ops::gather_scale);
  m.impl("bias_gelu", &row_ops::bias_gelu);
}
#endif
