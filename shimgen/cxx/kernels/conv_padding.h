// ---- kernel `conv_padding`: conv1d, conv2d and conv3d with a padding string
// (.padding) as aten computes them (Convolution.cpp, CompositeImplicitAutograd:
// batchify, _convolution_mode, convolution_same) ----
//
// The wrappers call the same aten ops in the same order (an unbatched input
// unsqueezed, the input padded with zeros where "same" is not symmetric, then
// aten::convolution, the batch dimension squeezed away again), so no `str`
// crosses the ABI; these are aten's checks before them and the paddings it
// computes.

/// What aten::convolution is called with: whether the input already had its
/// batch dimension, the (symmetric) padding and output padding, and the zero
/// padding aten adds to the input first (constant_pad_nd's list, last
/// dimension first; empty: none).
struct SHIMGEN_HIDDEN ConvPadding {
  bool batched = true;
  std::vector<int64_t> padding;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> pad;
};

/// A list of sizes as aten prints it: [2, 3, 4].
template <typename = void>
inline std::string list_text(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  }
  return text + "]";
}

/// aten's checks of conv<N>d(input, weight, bias, stride, padding, dilation,
/// groups) with a padding string, in its order and words, and the paddings it
/// computes: batchify (an input of `spatial` + 1 dimensions is unbatched),
/// then "valid" (no padding), "same" (stride 1: the padding that keeps each
/// size, its odd part added to the input's end first), or aten's error for
/// another string. A complex input is refused: aten convolves its real and
/// imaginary parts (complex_convolution_mode), which is not composed here.
template <typename = void>
inline ConvPadding conv_padding_plan(
    const char* op,
    const char* func,
    int64_t spatial,
    const torch::stable::Tensor& input,
    const torch::stable::Tensor& weight,
    torch::headeronly::IntHeaderOnlyArrayRef stride,
    std::string_view padding,
    torch::headeronly::IntHeaderOnlyArrayRef dilation,
    int64_t groups) {
  ConvPadding plan;
  const int64_t unbatched = spatial + 1;
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < input.dim(); ++i) {
    sizes.push_back(input.size(i));
  }
  plan.batched = input.dim() == unbatched + 1;
  if (input.dim() != unbatched && !plan.batched) {
    std::string why = "Expected ";
    why += std::to_string(unbatched) + "D (unbatched) or ";
    why += std::to_string(unbatched + 1) + "D (batched) input to " + func;
    why += ", but got input of size: " + list_text(sizes) + " (aten raises)";
    fail(op, why.c_str());
  }
  if (is_complex(static_cast<int>(input.scalar_type()))) {
    std::string why = "a complex input: aten convolves its real and imaginary ";
    why += "parts (complex_convolution_mode), which no composition here ";
    why += "computes; target torch 2.14 (its dispatcher carries the str ";
    why += "without leaking) or define SHIMGEN_LEAKY_STR";
    fail(op, why.c_str());
  }
  if (!plan.batched) {
    sizes.insert(sizes.begin(), 1);
  }
  if (padding == std::string_view("valid")) {
    plan.padding = {0};
    plan.output_padding = {0};
    return plan;
  }
  if (padding != std::string_view("same")) {
    std::string why = "Invalid padding string: '" + std::string(padding);
    why += "' (aten raises)";
    fail(op, why.c_str());
  }
  const int64_t k = weight.dim();
  const int64_t dim = k - 2;
  if (dim <= 0) {
    fail(op, "weight should have at least three dimensions (aten raises)");
  }
  if (groups <= 0) {
    fail(op, "non-positive groups is not supported (aten raises)");
  }
  std::vector<int64_t> weight_sizes;
  for (int64_t i = 0; i < k; ++i) {
    weight_sizes.push_back(weight.size(i));
  }
  if (k != static_cast<int64_t>(sizes.size())) {
    std::string why = "Expected ";
    why += std::to_string(k) + "-dimensional input for ";
    why += std::to_string(k) + "-dimensional weight" + list_text(weight_sizes);
    why += ", but got " + std::to_string(sizes.size());
    why += "-dimensional input of size " + list_text(sizes);
    why += " instead (aten raises)";
    fail(op, why.c_str());
  }
  const auto n = static_cast<size_t>(dim);
  if (stride.size() != n && stride.size() != 1) {
    std::string why = "stride cannot broadcast to " + std::to_string(dim);
    fail(op, (why + " dimensions (aten raises)").c_str());
  }
  if (dilation.size() != n && dilation.size() != 1) {
    std::string why = "dilation cannot broadcast to " + std::to_string(dim);
    fail(op, (why + " dimensions (aten raises)").c_str());
  }
  for (size_t i = 0; i < stride.size(); ++i) {
    if (stride[i] != 1) {
      std::string why = "padding='same' is not supported for strided ";
      fail(op, (why + "convolutions (aten raises)").c_str());
    }
  }
  // pooling_same_mode_padding_lr at stride 1: dilation * (kernel - 1) split,
  // the odd unit on the right; the difference padded into the input first
  plan.pad.assign(2 * n, 0);
  bool symmetric = true;
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[i];
    const int64_t total = d * (weight_sizes[i + 2] - 1);
    const int64_t left = total / 2;
    const int64_t right = total - left;
    plan.padding.push_back(left);
    if (left != right) {
      symmetric = false;
    }
    const int64_t delta = right - left;
    // constant_pad_nd's list names the last dimension first
    const size_t at = 2 * (n - 1 - i);
    if (delta > 0) {
      plan.pad[at + 1] = delta;
    } else {
      plan.pad[at] = delta;
      plan.padding[i] = right;
    }
  }
  if (symmetric) {
    plan.pad.clear();
  }
  plan.output_padding.assign(n, 0);
  return plan;
}
