// @needs legacy_shims
// ---- kernels `item_scalar` and `first_scalar` (item, _local_scalar_dense):
// libtorch's aoti_torch_item_<dtype> shims (shim.h) ----

/// aten::item / aten::_local_scalar_dense (kernel `item_scalar`): libtorch's
/// C shim aoti_torch_item_<dtype> of self's dtype (shim.h, exported from 2.9:
/// each calls Tensor::item(), a dispatching call, and reads the number in
/// that dtype's own C type), given the kind aten's Scalar has for that dtype:
/// a bool, an integer (a uint64 beyond int64's range stays unsigned), a
/// floating-point number (float16 and bfloat16 widened exactly) or a complex
/// one. libtorch has no such shim for complex128 and the other dtypes: those
/// raise an error.
template <typename T, typename Shim>
inline Scalar item_of(AtenTensorHandle h, Shim shim) {
  T value{};
  if (shim(h, &value) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
  return Scalar(value);
}

template <typename = void>
inline Scalar item_scalar_select(
    const char* op,
    const torch::stable::Tensor& self) {
  AtenTensorHandle h = self.get();
  switch (self.scalar_type()) {
    case ScalarType::Bool:
      return item_of<bool>(h, aoti_torch_item_bool);
    case ScalarType::Byte:
      return item_of<uint8_t>(h, aoti_torch_item_uint8);
    case ScalarType::Char:
      return item_of<int8_t>(h, aoti_torch_item_int8);
    case ScalarType::Short:
      return item_of<int16_t>(h, aoti_torch_item_int16);
    case ScalarType::Int:
      return item_of<int32_t>(h, aoti_torch_item_int32);
    case ScalarType::Long:
      return item_of<int64_t>(h, aoti_torch_item_int64);
    case ScalarType::UInt16:
      return item_of<uint16_t>(h, aoti_torch_item_uint16);
    case ScalarType::UInt32:
      return item_of<uint32_t>(h, aoti_torch_item_uint32);
    case ScalarType::UInt64:
      return item_of<uint64_t>(h, aoti_torch_item_uint64);
    case ScalarType::Half:
      return item_of<c10::Half>(h, aoti_torch_item_float16);
    case ScalarType::BFloat16:
      return item_of<c10::BFloat16>(h, aoti_torch_item_bfloat16);
    case ScalarType::Float:
      return item_of<float>(h, aoti_torch_item_float32);
    case ScalarType::Double:
      return item_of<double>(h, aoti_torch_item_float64);
    case ScalarType::ComplexFloat:
      return item_of<c10::complex<float>>(h, aoti_torch_item_complex64);
    default:
      break;
  }
  std::string why = "libtorch has no item C shim for this dtype (complex128, ";
  why += "float8 and the others aoti_torch_item_* does not cover): define ";
  why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
  why += "torch release)";
  fail(op, why.c_str());
}

/// aten::_local_scalar_dense (kernel `first_scalar`): the number at self's
/// data pointer, which is the element at index (0, ..., 0) of a tensor of any
/// size (item raises where there is more than one): item_scalar_select of
/// aten::select.int(aten::flatten.using_ints(self), 0, 0). An empty self
/// raises aten's error, checked first.
template <typename = void>
inline Scalar first_scalar_select(
    const char* op,
    const torch::stable::Tensor& self) {
  if (self.numel() == 0) {
    fail(op, "_local_scalar_dense: Empty tensor not supported (aten raises)");
  }
  const torch::stable::Tensor flat = dispatch_tensors<3>(
      "aten::flatten",
      "using_ints",
      {torch::stable::detail::from(self),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(-1))});
  const torch::stable::Tensor first = dispatch_tensors<3>(
      "aten::select",
      "int",
      {torch::stable::detail::from(flat),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(0))});
  return item_scalar_select(op, first);
}

