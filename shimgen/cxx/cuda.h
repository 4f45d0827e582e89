//
// A port's stand-ins for ATen's CUDA helpers a kernel file calls, over the
// CUDA runtime and libtorch's C shim (`shimgen port --fix` writes them):
//
//   at::cuda::getCurrentCUDAStream([device])  -> shimgen::cuda::current_stream([device])
//   c10::cuda::MaybeSetDevice(device)         -> shimgen::cuda::set_device(device)
//   at::cuda::detail::TensorInfo<T, I>        -> shimgen::cuda::TensorInfo<T, I>
//   at::cuda::detail::IndexToOffset<T, I, D>  -> shimgen::cuda::IndexToOffset<T, I, D>
//   at::cuda::detail::getTensorInfo<T, I>(t)  -> shimgen::cuda::getTensorInfo<T, I>(t)
//
// current_stream is libtorch's current CUDA stream (a cudaStream_t, where
// ATen's CUDAStream converts to one): aoti_torch_get_current_cuda_stream,
// which libtorch_cuda exports and CPU builds of torch lack, is looked up when
// first asked (a CUDA tensor has arrived: libtorch_cuda is loaded), never
// linked, so the library loads on every build of torch. set_device makes
// `device` the current CUDA device where it is not, as MaybeSetDevice does.
// Where the CUDA runtime's headers are not on the include path (a CPU build of
// a file whose CUDA code is under #ifdef), this header declares only
// TensorInfo, IndexToOffset and getTensorInfo: ATen's
// (ATen/cuda/detail/TensorInfo.cuh, IndexUtils.cuh) over torch::stable::Tensor,
// a tensor's data pointer, sizes and strides for a kernel to index.
//
// Kept as written (shimgen.generate.emit.fmt.UNFORMATTED).

#pragma once

#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define SHIMGEN_CUDA_HOST_DEVICE __host__ __device__
#else
#define SHIMGEN_CUDA_HOST_DEVICE
#endif

namespace shimgen::cuda {

// ATen's MAX_TENSORINFO_DIMS
constexpr int kMaxTensorInfoDims = 25;

// ATen's at::cuda::detail::TensorInfo: a kernel argument of a tensor's data,
// sizes and strides (IndexType each), dims of them
template <typename T, typename IndexType>
struct TensorInfo {
  TensorInfo() : data(nullptr), dims(0) {}
  TensorInfo(
      T* p,
      int dim,
      IndexType sz[kMaxTensorInfoDims],
      IndexType st[kMaxTensorInfoDims])
      : data(p), dims(dim) {
    STD_TORCH_CHECK(
        dims < kMaxTensorInfoDims, "shimgen::cuda::TensorInfo: too many dims");
    for (int i = 0; i < dim; ++i) {
      sizes[i] = sz[i];
      strides[i] = st[i];
    }
  }
  SHIMGEN_CUDA_HOST_DEVICE bool isContiguous() const {
    return dims == 1 && strides[0] == 1;
  }

  T* data;
  IndexType sizes[kMaxTensorInfoDims];
  IndexType strides[kMaxTensorInfoDims];
  int dims;
};

// ATen's at::cuda::detail::IndexToOffset: the offset of the linearId-th
// element, over Dims dimensions (-1: info.dims, known at run time)
template <typename T, typename IndexType, int Dims>
struct IndexToOffset {
  static SHIMGEN_CUDA_HOST_DEVICE IndexType
  get(IndexType linearId, const TensorInfo<T, IndexType>& info) {
    IndexType offset = 0;
    for (int i = Dims - 1; i > 0; --i) {
      IndexType curDimIndex = linearId % info.sizes[i];
      offset += curDimIndex * info.strides[i];
      linearId /= info.sizes[i];
    }
    return offset + linearId * info.strides[0];
  }
};

template <typename T, typename IndexType>
struct IndexToOffset<T, IndexType, -1> {
  static inline SHIMGEN_CUDA_HOST_DEVICE IndexType
  get(IndexType linearId, const TensorInfo<T, IndexType>& info) {
    IndexType offset = 0;
    for (int i = info.dims - 1; i > 0; --i) {
      IndexType curDimIndex = linearId % info.sizes[i];
      offset += curDimIndex * info.strides[i];
      linearId /= info.sizes[i];
    }
    return offset + linearId * info.strides[0];
  }
};

// ATen's at::cuda::detail::getTensorInfo<T, IndexType>(t)
template <typename T, typename IndexType>
TensorInfo<T, IndexType> getTensorInfo(const torch::stable::Tensor& t) {
  IndexType sz[kMaxTensorInfoDims];
  IndexType st[kMaxTensorInfoDims];
  int dims = static_cast<int>(t.dim());
  STD_TORCH_CHECK(
      dims < kMaxTensorInfoDims, "shimgen::cuda::getTensorInfo: too many dims");
  for (int i = 0; i < dims; ++i) {
    sz[i] = static_cast<IndexType>(t.size(i));
    st[i] = static_cast<IndexType>(t.stride(i));
  }
  return TensorInfo<T, IndexType>(
      static_cast<T*>(t.data_ptr()), dims, sz, st);
}

} // namespace shimgen::cuda

#if __has_include(<cuda_runtime_api.h>)

#include <cstdint>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <torch/csrc/stable/accelerator.h>

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
