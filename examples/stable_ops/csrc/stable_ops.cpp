// shimgen's worked example: custom ops written the way kernel libraries write them, on the LibTorch stable ABI
// alone. Every aten call goes through the torch::stable wrappers shimgen generates from [tool.shimgen] (the
// generated torch/csrc/stable/ops.h shadows torch's), built with -DTORCH_STABLE_ONLY and
// -DTORCH_TARGET_VERSION for 2.10: the library runs on every libtorch from 2.10 on.
//
//   rms_norm_act(x, weight, eps, act)    a fused RMSNorm + activation: one pass per row (the "kernel"), then
//                                        the activation (0 none, 1 silu, 2 relu, 3 sigmoid, 4 tanh)
//   masked_softmax(x, mask, dim)         softmax over the kept positions; a row with none kept is all zeros
//   quantize_int8(x) -> (q, scale)       symmetric per-row int8 quantization (integer Scalars in the clamp)
//   dequantize_int8(q, scale)            back to float32
//   requantize_int8(acc, mult, shift)    integer-only rescaling of an int32 accumulator: (acc * mult) >> shift,
//                                        saturated to int8 (integer Scalars throughout)
//   linear_act(x, w, b, act)             linear + activation, as a fused-epilogue GEMM's reference path

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

namespace stable_ops {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

enum Activation : int64_t { kNone = 0, kSilu = 1, kRelu = 2, kSigmoid = 3, kTanh = 4 };

Tensor activate(const Tensor& y, int64_t act) {
  switch (act) {
    case kNone:
      return y;
    case kSilu:
      return torch::stable::silu(y);
    case kRelu:
      return torch::stable::relu(y);
    case kSigmoid:
      return torch::stable::sigmoid(y);
    case kTanh:
      return torch::stable::tanh(y);
  }
  STD_TORCH_CHECK(false, "stable_ops: unknown activation ", act, " (0 none, 1 silu, 2 relu, 3 sigmoid, 4 tanh)");
}

Tensor rms_norm_act(const Tensor& x, const Tensor& weight, double eps, int64_t act) {
  STD_TORCH_CHECK(x.dim() >= 1, "rms_norm_act: x must have at least one dimension");
  const int64_t hidden = x.size(-1);
  STD_TORCH_CHECK(weight.dim() == 1 && weight.size(0) == hidden, "rms_norm_act: weight must have shape [",
                  hidden, "]");
  // Compute in float32 on contiguous rows, as the CUDA kernels of kernel libraries do.
  Tensor xf = torch::stable::contiguous(torch::stable::reshape(torch::stable::to(x, ScalarType::Float), {-1, hidden}));
  Tensor wf = torch::stable::contiguous(torch::stable::to(weight, ScalarType::Float));
  Tensor yf = torch::stable::empty_like(xf);
  const float* xs = static_cast<const float*>(xf.data_ptr());
  const float* ws = static_cast<const float*>(wf.data_ptr());
  float* ys = static_cast<float*>(yf.data_ptr());
  const int64_t rows = xf.size(0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = xs + r * hidden;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < hidden; ++i) {
      sum_sq += static_cast<double>(row[i]) * row[i];
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / hidden + eps));
    for (int64_t i = 0; i < hidden; ++i) {
      ys[r * hidden + i] = row[i] * inv * ws[i];
    }
  }
  Tensor y = activate(torch::stable::reshape(yf, x.sizes()), act);
  return torch::stable::to(y, x.scalar_type());
}

Tensor masked_softmax(const Tensor& x, const Tensor& mask, int64_t dim) {
  Tensor keep = torch::stable::to(mask, ScalarType::Bool);
  Tensor filled = torch::stable::masked_fill(x, torch::stable::logical_not(keep),
                                             -std::numeric_limits<double>::infinity());
  Tensor y = torch::stable::softmax(filled, dim);
  // A row with nothing kept is NaN after the softmax: make it zeros, as fused attention kernels do.
  Tensor none_kept = torch::stable::logical_not(torch::stable::any(keep, dim, /*keepdim=*/true));
  return torch::stable::where(none_kept, torch::stable::zeros_like(y), y);
}

std::tuple<Tensor, Tensor> quantize_int8(const Tensor& x) {
  Tensor xf = torch::stable::to(x, ScalarType::Float);
  Tensor absmax = torch::stable::amax(torch::stable::abs(xf), {-1}, /*keepdim=*/true);
  Tensor scale = torch::stable::div(torch::stable::clamp_min(absmax, 1e-8), 127.0);
  Tensor q = torch::stable::clamp(torch::stable::round(torch::stable::div(xf, scale)), -127, 127);
  return {torch::stable::to(q, ScalarType::Char), scale};
}

Tensor dequantize_int8(const Tensor& q, const Tensor& scale) {
  STD_TORCH_CHECK(q.scalar_type() == ScalarType::Char, "dequantize_int8: q must be int8");
  return torch::stable::mul(torch::stable::to(q, ScalarType::Float), scale);
}

Tensor requantize_int8(const Tensor& acc, int64_t multiplier, int64_t shift) {
  STD_TORCH_CHECK(acc.scalar_type() == ScalarType::Int, "requantize_int8: acc must be int32");
  STD_TORCH_CHECK(shift >= 0 && shift < 63, "requantize_int8: shift must be in [0, 63)");
  Tensor wide = torch::stable::to(acc, ScalarType::Long);  // the product of two int32 needs 64 bits
  Tensor scaled = torch::stable::bitwise_right_shift(torch::stable::mul(wide, multiplier), shift);
  return torch::stable::to(torch::stable::clamp(scaled, -128, 127), ScalarType::Char);
}

Tensor linear_act(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, int64_t act) {
  return activate(torch::stable::linear(x, w, b), act);
}

} // namespace stable_ops

STABLE_TORCH_LIBRARY(stable_ops, m) {
  m.def("rms_norm_act(Tensor x, Tensor weight, float eps, int act) -> Tensor");
  m.def("masked_softmax(Tensor x, Tensor mask, int dim) -> Tensor");
  m.def("quantize_int8(Tensor x) -> (Tensor, Tensor)");
  m.def("dequantize_int8(Tensor q, Tensor scale) -> Tensor");
  m.def("requantize_int8(Tensor acc, int multiplier, int shift) -> Tensor");
  m.def("linear_act(Tensor x, Tensor w, Tensor? b, int act) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(stable_ops, CompositeExplicitAutograd, m) {
  m.impl("rms_norm_act", TORCH_BOX(&stable_ops::rms_norm_act));
  m.impl("masked_softmax", TORCH_BOX(&stable_ops::masked_softmax));
  m.impl("quantize_int8", TORCH_BOX(&stable_ops::quantize_int8));
  m.impl("dequantize_int8", TORCH_BOX(&stable_ops::dequantize_int8));
  m.impl("requantize_int8", TORCH_BOX(&stable_ops::requantize_int8));
  m.impl("linear_act", TORCH_BOX(&stable_ops::linear_act));
}

#ifdef Py_LIMITED_API
// Built by setuptools as the Python module stable_ops._C (abi3): importing it loads the library, whose
// registrations above run at load time. An empty module: the ops are reached through torch.ops.stable_ops.
#include <Python.h>

extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr, nullptr, nullptr, nullptr, nullptr};
  return PyModule_Create(&module);
}
#endif
