// ---- kernel `pad_packed` (_pad_packed_sequence): aten's
// CompositeImplicitAutograd function (PackedSequence.cpp) ----
//
// The wrapper makes aten's dispatching calls in aten's order, each by its
// wrapper (composition.py _pad_packed_body); these are aten's checks, the
// output's sizes, and the lengths aten writes through a pointer. Lists cross
// the dispatcher from 2.10, so the wrapper exists from then.

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
/// aten's checks of the contiguous batch_sizes, in its order (a 1-D CPU int64
/// tensor; not empty, which 2.9 does not check before reading it), then its
/// values, read from its data as aten reads them.
template <typename = void>
inline std::vector<int64_t> pad_packed_sizes(
    const char* op,
    const torch::stable::Tensor& sizes) {
  const bool is_long = sizes.scalar_type() == ScalarType::Long;
  if (!(sizes.dim() == 1 && sizes.is_cpu() && is_long)) {
    std::string why = "'lengths' argument should be a 1D CPU int64 tensor ";
    why += "(aten raises)";
    fail(op, why.c_str());
  }
  if (sizes.numel() == 0) {
    fail(op, "batch_sizes can not be empty (aten raises)");
  }
  const int64_t* first = static_cast<const int64_t*>(sizes.data_ptr());
  return std::vector<int64_t>(first, first + sizes.numel());
}

/// The output's length: total_length where it is positive, after aten's check
/// that it is at least the longest sequence's (the number of batch sizes).
template <typename = void>
inline int64_t pad_packed_length(
    const char* op,
    const std::vector<int64_t>& sizes,
    int64_t total_length) {
  const int64_t longest = static_cast<int64_t>(sizes.size());
  if (total_length > 0 && total_length < longest) {
    std::string why = "Expected total_length to be at least the length of the ";
    why += "longest sequence in input, but got total_length=";
    why += std::to_string(total_length);
    why += " and max sequence length being ";
    why += std::to_string(longest);
    why += " (aten raises)";
    fail(op, why.c_str());
  }
  return total_length > 0 ? total_length : longest;
}

/// aten's output sizes, [length, max batch size, data's sizes after the
/// first]; a 0-dim data raises aten's error (it slices data's empty sizes).
template <typename = void>
inline std::vector<int64_t> pad_packed_output_size(
    const char* op,
    const torch::stable::Tensor& data,
    int64_t length,
    int64_t max_batch_size) {
  if (data.dim() == 0) {
    fail(op, "ArrayRef: invalid slice, N = 1; size = 0 (aten raises)");
  }
  std::vector<int64_t> size;
  size.push_back(length);
  size.push_back(max_batch_size);
  for (int64_t d = 1; d < data.dim(); ++d) {
    size.push_back(data.size(d));
  }
  return size;
}

/// Batch sizes that never grow and are never negative: aten writes one length
/// per unit of decrease from the last element of its lengths tensor down, so
/// for others it writes out of that tensor's bounds or leaves elements
/// unwritten (what it returns is not defined): refused.
template <typename = void>
inline void pad_packed_check_runs(
    const char* op,
    const std::vector<int64_t>& sizes) {
  int64_t before = sizes[0];
  for (const int64_t size : sizes) {
    if (size < 0 || size > before) {
      std::string why = "batch_sizes that grow or are negative, for which ";
      why += "aten writes its lengths out of bounds or leaves them ";
      why += "unwritten";
      fail(op, why.c_str());
    }
    before = size;
  }
}

/// aten's lengths: for each step i where the batch size falls, i once per
/// sequence that ends there, written from the last element down.
template <typename = void>
inline void pad_packed_lengths(
    const torch::stable::Tensor& lengths,
    const std::vector<int64_t>& sizes) {
  int64_t* out = static_cast<int64_t*>(lengths.data_ptr());
  int64_t next = lengths.numel() - 1;
  const int64_t n = static_cast<int64_t>(sizes.size());
  int64_t before = sizes[0];
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t batch = i != n ? sizes[i] : 0;
    for (int64_t j = batch; j < before; ++j) {
      out[next] = i;
      --next;
    }
    before = batch;
  }
}
#endif

