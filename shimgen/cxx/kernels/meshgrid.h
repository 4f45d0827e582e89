// ---- kernel `meshgrid`: meshgrid with an indexing string (.indexing) as
// aten computes it (TensorShape.cpp, CompositeImplicitAutograd) ----
//
// Views only: each 1-D (or 0-D) tensor viewed along its own dimension and
// expanded to the grid's shape, the first two swapped for "xy" indexing. The
// string is compared here, so no `str` crosses the ABI. The calls name the
// wrappers unqualified on T (torch::stable::Tensor): argument-dependent lookup
// finds them where the wrapper instantiates the template (the row's `calls`).

/// aten's meshgrid error, its text with "(aten raises)", as a shimgen: error.
template <typename = void>
[[noreturn]] inline void meshgrid_fail(const std::string& text) {
  fail("meshgrid.indexing", (text + " (aten raises)").c_str());
}

/// Are a and b on the same device (type and index)?
template <typename T>
inline bool meshgrid_same_device(const T& a, const T& b) {
  int32_t a_type = 0;
  int32_t b_type = 0;
  int32_t a_index = 0;
  int32_t b_index = 0;
  check(aoti_torch_get_device_type(a.get(), &a_type), "get_device_type");
  check(aoti_torch_get_device_type(b.get(), &b_type), "get_device_type");
  check(aoti_torch_get_device_index(a.get(), &a_index), "get_device_index");
  check(aoti_torch_get_device_index(b.get(), &b_index), "get_device_index");
  return a_type == b_type && a_index == b_index;
}

/// aten::meshgrid(tensors, indexing), by the wrappers of its calls.
template <typename T>
inline std::vector<T> meshgrid_compute(
    torch::headeronly::HeaderOnlyArrayRef<T> tensors,
    std::string_view indexing) {
  const size_t size = tensors.size();
  if (size == 0) {
    meshgrid_fail("meshgrid expects a non-empty TensorList");
  }
  for (size_t i = 0; i + 1 < size; ++i) {
    if (tensors[i].scalar_type() != tensors[i + 1].scalar_type()) {
      meshgrid_fail("meshgrid expects all tensors to have the same dtype");
    }
    if (!meshgrid_same_device(tensors[i], tensors[i + 1])) {
      meshgrid_fail("meshgrid expects all tensors to have the same device");
    }
  }
  std::vector<T> inputs;
  for (size_t i = 0; i < size; ++i) {
    inputs.push_back(tensors[i]);
  }
  bool swapped = false;
  if (indexing == "xy") {
    swapped = size >= 2;
    if (swapped) {
      std::swap(inputs[0], inputs[1]);
    }
  } else if (indexing != "ij") {
    std::string text = "torch.meshgrid: indexing must be one of \"xy\" or ";
    text += "\"ij\", but received: ";
    text += indexing;
    meshgrid_fail(text);
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < size; ++i) {
    if (inputs[i].dim() > 1) {
      std::string text = "torch.meshgrid: Expected 0D or 1D tensor in the ";
      text += "tensor list but got one of ";
      text += std::to_string(inputs[i].dim()) + " dimensions";
      meshgrid_fail(text);
    }
    shape.push_back(inputs[i].numel());
  }
  std::vector<T> grids;
  std::vector<int64_t> view_shape(size, 1);
  for (size_t i = 0; i < size; ++i) {
    view_shape[i] = -1;
    T viewed = view(inputs[i], IntList(view_shape));
    grids.push_back(expand(viewed, IntList(shape)));
    view_shape[i] = 1;
  }
  if (swapped) {
    std::swap(grids[0], grids[1]);
  }
  return grids;
}
