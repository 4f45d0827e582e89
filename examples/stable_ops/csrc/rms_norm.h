// The row kernel of rms_norm_act, as plain C++ declarations: stable_ops.cpp (compiled by the host compiler with
// the stable headers) calls them; rms_norm_cuda.cu (compiled by nvcc, no torch header) defines the CUDA one.
#pragma once

#include <cstdint>

namespace stable_ops {

// y[r, i] = x[r, i] * rsqrt(mean(x[r, :]^2) + eps) * w[i] over `rows` contiguous float32 rows of `hidden`.
void rms_norm_rows_cpu(const float* x, const float* w, float* y, int64_t rows, int64_t hidden, double eps);

#ifdef STABLE_OPS_WITH_CUDA
// The same on the GPU: device pointers, enqueued on `stream` (a cudaStream_t) of the current device. Returns
// nullptr when the launch went through, else the CUDA runtime's message.
const char* rms_norm_rows_cuda(const float* x, const float* w, float* y, int64_t rows, int64_t hidden, double eps,
                               void* stream);
#endif

} // namespace stable_ops
