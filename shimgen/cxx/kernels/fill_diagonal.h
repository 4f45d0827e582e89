// ---- kernel `fill_diagonal`: aten's fill_diagonal_ (a composite of
// aten::as_strided and aten::fill_; shimgen/generate/routes/composition.py) ----

/// The views aten's fill_diagonal_ fills: the main diagonal (`size`
/// elements, `stride` apart, from `offset`), and where it wraps (`wrap`, 2-D,
/// height > width + 1) `wrap_size` more from `wrap_offset` (-1: none).
struct DiagonalViews {
  int64_t size = 0;
  int64_t stride = 0;
  int64_t offset = 0;
  int64_t wrap_size = -1;
  int64_t wrap_offset = 0;
};

/// aten's fill_diagonal_ geometry and checks (its messages), from self's
/// sizes, strides and storage offset.
template <typename = void>
inline DiagonalViews fill_diagonal_views(
    const char* op,
    const torch::stable::Tensor& self,
    bool wrap) {
  const int64_t dims = self.dim();
  if (dims < 2) {
    fail(op, "dimensions must larger than 1 (aten raises)");
  }
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  DiagonalViews v;
  check(aoti_torch_get_sizes(self.get(), &sizes), "aoti_torch_get_sizes");
  check(aoti_torch_get_strides(self.get(), &strides), "aoti_torch_get_strides");
  check(
      aoti_torch_get_storage_offset(self.get(), &v.offset),
      "aoti_torch_get_storage_offset");
  const int64_t height = sizes[0];
  const int64_t width = sizes[1];
  for (int64_t d = 1; dims > 2 && d < dims; ++d) {
    if (sizes[d] != height) {
      fail(op, "all dimensions of input must be of equal length (aten raises)");
    }
  }
  for (int64_t d = 0; d < dims; ++d) {
    v.stride += strides[d];
  }
  v.size = height < width ? height : width;
  if (wrap && dims == 2 && height > width + 1) {
    const int64_t step = width + 1;
    v.wrap_size = (height * width + step - 1) / step - v.size;
    v.wrap_offset = v.offset + strides[0] * (width + 1);
  }
  return v;
}

