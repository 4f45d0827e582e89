//
// A port's stand-ins for ATen's CUDA helpers a kernel file calls, over the
// CUDA runtime and libtorch's C shim (`shimgen port --fix` writes them):
//
//   at::cuda::getCurrentCUDAStream([device])  -> shimgen::cuda::current_stream([device])
//   c10::cuda::MaybeSetDevice(device)         -> shimgen::cuda::set_device(device)
//
// current_stream is libtorch's current CUDA stream (a cudaStream_t, where
// ATen's CUDAStream converts to one): aoti_torch_get_current_cuda_stream,
// which libtorch_cuda exports and CPU builds of torch lack, is looked up when
// first asked (a CUDA tensor has arrived: libtorch_cuda is loaded), never
// linked, so the library loads on every build of torch. set_device makes
// `device` the current CUDA device where it is not, as MaybeSetDevice does.
// Where the CUDA runtime's headers are not on the include path (a CPU build of
// a file whose CUDA code is under #ifdef), this header declares nothing.
//
// Kept as written (shimgen.generate.emit.fmt.UNFORMATTED).

#pragma once

#if __has_include(<cuda_runtime_api.h>)

#include <cstdint>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <torch/csrc/stable/accelerator.h>
#include <torch/headeronly/util/Exception.h>

namespace shimgen::cuda {

inline cudaStream_t current_stream(int64_t device = -1) {
  using GetStream = int32_t (*)(int32_t, void**);
  static const GetStream get_stream = []() -> GetStream {
    void* lib = dlopen("libtorch_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    return lib ? reinterpret_cast<GetStream>(
                     dlsym(lib, "aoti_torch_get_current_cuda_stream"))
               : nullptr;
  }();
  STD_TORCH_CHECK(
      get_stream != nullptr,
      "shimgen::cuda::current_stream: this torch has no "
      "aoti_torch_get_current_cuda_stream (libtorch_cuda.so is not loaded)");
  if (device < 0) {
    device = torch::stable::accelerator::getCurrentDeviceIndex();
  }
  void* stream = nullptr;
  STD_TORCH_CHECK(
      get_stream(static_cast<int32_t>(device), &stream) == 0,
      "shimgen::cuda::current_stream: no current CUDA stream of device ",
      device);
  return static_cast<cudaStream_t>(stream);
}

inline void set_device(int64_t device) {
  int current = -1;
  STD_TORCH_CHECK(
      cudaGetDevice(&current) == cudaSuccess,
      "shimgen::cuda::set_device: cudaGetDevice failed");
  if (current != device) {
    STD_TORCH_CHECK(
        cudaSetDevice(static_cast<int>(device)) == cudaSuccess,
        "shimgen::cuda::set_device: cudaSetDevice(",
        device,
        ") failed");
  }
}

} // namespace shimgen::cuda

#endif // __has_include(<cuda_runtime_api.h>)
