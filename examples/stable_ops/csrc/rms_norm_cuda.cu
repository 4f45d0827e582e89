// The CUDA kernel of rms_norm_act: one block per row, the sum of squares in double (as the CPU kernel sums),
// then the row scaled by its inverse RMS and the weight. No torch header: stable_ops.cpp prepares the tensors,
// picks the device and passes the current stream; this file only launches. The CUDA runtime is linked
// statically (shimgen.setuptools' StableExtension(cuda=True)), so the library loads where no libcudart is.

#include <cuda_runtime.h>

#include <cstdint>

#include "rms_norm.h"

namespace stable_ops {
namespace {

constexpr int kThreads = 256;

__global__ void rms_norm_rows_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                     float* __restrict__ y, int64_t hidden, double eps) {
  __shared__ double partial[kThreads];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * hidden;
  float* out = y + static_cast<int64_t>(blockIdx.x) * hidden;
  double sum_sq = 0.0;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    sum_sq += static_cast<double>(row[i]) * row[i];
  }
  partial[threadIdx.x] = sum_sq;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    }
    __syncthreads();
  }
  const float inv = static_cast<float>(1.0 / sqrt(partial[0] / hidden + eps));
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    out[i] = row[i] * inv * w[i];
  }
}

} // namespace

const char* rms_norm_rows_cuda(const float* x, const float* w, float* y, int64_t rows, int64_t hidden, double eps,
                               void* stream) {
  if (rows == 0) {
    return nullptr;
  }
  if (rows > 2147483647) {
    return "more rows than one launch's grid holds (2^31 - 1)";
  }
  rms_norm_rows_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, w, y, hidden, eps);
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

} // namespace stable_ops
