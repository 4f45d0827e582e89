// shimgen's worked example: custom ops written the way kernel libraries write them, on the LibTorch stable ABI
// alone. Every aten call goes through the torch::stable wrappers shimgen generates from [tool.shimgen] (the
// generated torch/csrc/stable/ops.h shadows torch's), built with -DTORCH_STABLE_ONLY and
// -DTORCH_TARGET_VERSION for 2.10: the library runs on every libtorch from 2.10 on.
//
//   rms_norm_act(x, weight, eps, act)    a fused RMSNorm + activation: one pass per row (the "kernel": a CPU
//                                        loop on the CPU key, rms_norm_cuda.cu on the CUDA key, launched on the
//                                        current stream), then the activation (0 none, 1 silu, 2 relu,
//                                        3 sigmoid, 4 tanh)
//   masked_softmax(x, mask, dim)         softmax over the kept positions; a row with none kept is all zeros
//   quantize_int8(x) -> (q, scale)       symmetric per-row int8 quantization (integer Scalars in the clamp)
//   dequantize_int8(q, scale)            back to float32
//   requantize_int8(acc, mult, shift)    integer-only rescaling of an int32 accumulator: (acc * mult) >> shift,
//                                        saturated to int8 (integer Scalars throughout)
//   linear_act(x, w, b, act)             linear + activation, as a fused-epilogue GEMM's reference path
//
// The ops made of aten calls alone run on any device (CompositeExplicitAutograd); rms_norm_act reads its data, so
// each device has its own kernel, registered for its own dispatch key. The CUDA one exists when the library is
// built with STABLE_OPS_WITH_CUDA (setup.py does when it finds a CUDA toolkit); its libtorch entry point (the
// current CUDA stream) is looked up at run time, so the one library loads on CPU builds of torch too.

#include <cmath>
#include <cstdint>
#ifdef STABLE_OPS_WITH_CUDA
#include <dlfcn.h>
#endif
#include <limits>
#include <optional>
#include <tuple>

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include "rms_norm.h"

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

void rms_norm_rows_cpu(const float* xs, const float* ws, float* ys, int64_t rows, int64_t hidden, double eps) {
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
}

// The rows the kernels read and write: float32, contiguous, [rows, hidden], on x's device.
struct Rows {
  Tensor x, w, y;
};

Rows rms_norm_rows(const Tensor& x, const Tensor& weight) {
  STD_TORCH_CHECK(x.dim() >= 1, "rms_norm_act: x must have at least one dimension");
  const int64_t hidden = x.size(-1);
  STD_TORCH_CHECK(weight.dim() == 1 && weight.size(0) == hidden, "rms_norm_act: weight must have shape [",
                  hidden, "]");
  // Compute in float32 on contiguous rows, as the CUDA kernels of kernel libraries do.
  Tensor xf = torch::stable::contiguous(torch::stable::reshape(torch::stable::to(x, ScalarType::Float), {-1, hidden}));
  Tensor wf = torch::stable::contiguous(torch::stable::to(weight, ScalarType::Float));
  Tensor yf = torch::stable::empty_like(xf);
  return {xf, wf, yf};
}

Tensor rms_norm_finish(const Tensor& x, const Rows& rows, int64_t act) {
  Tensor y = activate(torch::stable::reshape(rows.y, x.sizes()), act);
  return torch::stable::to(y, x.scalar_type());
}

Tensor rms_norm_act_cpu(const Tensor& x, const Tensor& weight, double eps, int64_t act) {
  STD_TORCH_CHECK(x.is_cpu() && weight.is_cpu(), "rms_norm_act: x and weight must be on the same device");
  Rows rows = rms_norm_rows(x, weight);
  rms_norm_rows_cpu(static_cast<const float*>(rows.x.data_ptr()), static_cast<const float*>(rows.w.data_ptr()),
                    static_cast<float*>(rows.y.data_ptr()), rows.x.size(0), rows.x.size(1), eps);
  return rms_norm_finish(x, rows, act);
}

#ifdef STABLE_OPS_WITH_CUDA
// libtorch's current CUDA stream of `device` (a cudaStream_t). aoti_torch_get_current_cuda_stream is exported
// by libtorch_cuda, which CPU builds of torch lack: looked up when a CUDA tensor arrives (libtorch_cuda is loaded
// then), never linked, so the library loads everywhere.
void* current_cuda_stream(int32_t device) {
  using GetStream = int32_t (*)(int32_t, void**);
  static const GetStream get_stream = []() -> GetStream {
    void* lib = dlopen("libtorch_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    return lib ? reinterpret_cast<GetStream>(dlsym(lib, "aoti_torch_get_current_cuda_stream")) : nullptr;
  }();
  STD_TORCH_CHECK(get_stream != nullptr, "rms_norm_act: this torch has no aoti_torch_get_current_cuda_stream ",
                  "(libtorch_cuda.so is not loaded)");
  void* stream = nullptr;
  STD_TORCH_CHECK(get_stream(device, &stream) == 0, "rms_norm_act: cannot get the current CUDA stream of device ",
                  device);
  return stream;
}

Tensor rms_norm_act_cuda(const Tensor& x, const Tensor& weight, double eps, int64_t act) {
  STD_TORCH_CHECK(x.is_cuda() && weight.is_cuda() && x.get_device_index() == weight.get_device_index(),
                  "rms_norm_act: x and weight must be on the same device");
  const int32_t device = x.get_device_index();
  torch::stable::accelerator::DeviceGuard guard(device);
  Rows rows = rms_norm_rows(x, weight);
  const char* failed = rms_norm_rows_cuda(
      static_cast<const float*>(rows.x.data_ptr()), static_cast<const float*>(rows.w.data_ptr()),
      static_cast<float*>(rows.y.data_ptr()), rows.x.size(0), rows.x.size(1), eps, current_cuda_stream(device));
  STD_TORCH_CHECK(failed == nullptr, "rms_norm_act: the CUDA kernel did not launch: ", failed);
  return rms_norm_finish(x, rows, act);
}
#endif

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

// Made of aten calls: one registration serves every device.
STABLE_TORCH_LIBRARY_IMPL(stable_ops, CompositeExplicitAutograd, m) {
  m.impl("masked_softmax", TORCH_BOX(&stable_ops::masked_softmax));
  m.impl("quantize_int8", TORCH_BOX(&stable_ops::quantize_int8));
  m.impl("dequantize_int8", TORCH_BOX(&stable_ops::dequantize_int8));
  m.impl("requantize_int8", TORCH_BOX(&stable_ops::requantize_int8));
  m.impl("linear_act", TORCH_BOX(&stable_ops::linear_act));
}

// Reads the data: a kernel per device, each for its own dispatch key.
STABLE_TORCH_LIBRARY_IMPL(stable_ops, CPU, m) {
  m.impl("rms_norm_act", TORCH_BOX(&stable_ops::rms_norm_act_cpu));
}

#ifdef STABLE_OPS_WITH_CUDA
STABLE_TORCH_LIBRARY_IMPL(stable_ops, CUDA, m) {
  m.impl("rms_norm_act", TORCH_BOX(&stable_ops::rms_norm_act_cuda));
}
#endif

#ifdef Py_LIMITED_API
// Built by setuptools as the Python module stable_ops._C (abi3): importing it loads the library, whose
// registrations above run at load time. An empty module: the ops are reached through torch.ops.stable_ops.
#include <Python.h>

extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr, nullptr, nullptr, nullptr, nullptr};
  return PyModule_Create(&module);
}
#endif
