// A CUDA-style attention extension as kernel libraries wrote them before the stable ABI: ATen calls, Tensor
// methods, a kernel launch, a macro and a `using namespace`. Input of tests/test_port.py (never compiled).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#define CHECK_INPUT(x) TORCH_CHECK(x.is_cuda() && x.is_contiguous(), #x " must be a contiguous CUDA tensor")

template <typename scalar_t>
__global__ void scale_rows_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n, float s) {
  const int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i] * s;
  }
}

at::Tensor attention_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& mask, const at::Tensor& bias, double scale) {
  CHECK_INPUT(q);
  auto qc = q.contiguous();
  auto scores = at::matmul(qc, k.transpose(-2, -1));
  scores.mul_(scale);
  scores.masked_fill_(mask, -INFINITY);
  auto probs = at::softmax(scores, -1);
  auto out = at::matmul(probs, v);
  out = at::add(out, bias);
  auto act = at::gelu(out);
  auto scaled = at::empty_like(act);
  const int64_t n = act.numel();
  auto stream = at::cuda::getCurrentCUDAStream();
  scale_rows_kernel<float><<<(n + 255) / 256, 256, 0, stream>>>(act.data_ptr<float>(), scaled.data_ptr<float>(),
                                                                n, 0.5f);
  auto lse = at::logsumexp(scores, {-1}, true);
  at::sum_out(lse, probs, {-1});
  return scaled.sum(-1);
}

using namespace at;

Tensor attention_backward_stub(const Tensor& grad) {
  return relu(grad);
}
