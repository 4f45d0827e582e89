// List arguments as extension code writes them (braced lists, one value, a
// variable, a std::vector, upstream's std::optional<HeaderOnlyArrayRef>,
// std::nullopt), built with AddressSanitizer and UndefinedBehaviorSanitizer
// against shimgen's ops.h (tests/test_list_args.py). Each line printed is
//   <label> <sizes...> : <values...>
// and the test compares it with eager PyTorch.

#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdio>
#include <optional>
#include <vector>

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
namespace ts = torch::stable;

namespace {

void print(const char* label, const Tensor& result) {
  Tensor c = ts::contiguous(ts::to(result, ScalarType::Double));
  std::printf("%s", label);
  for (int64_t d = 0; d < c.dim(); ++d) {
    std::printf(" %lld", static_cast<long long>(c.size(d)));
  }
  std::printf(" :");
  const double* p = static_cast<const double*>(c.data_ptr());
  for (int64_t k = 0; k < c.numel(); ++k) {
    std::printf(" %.17g", p[k]);
  }
  std::printf("\n");
}

Tensor from(const float* data, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  ts::Device cpu(torch::headeronly::DeviceType::CPU);
  return ts::clone(ts::from_blob(const_cast<float*>(data), sizes, strides, cpu, ScalarType::Float));
}

} // namespace

int main() {
  static const float xs[6] = {1, 2, 4, 8, 16, 32};
  static float x4s[16];
  for (int k = 0; k < 16; ++k) {
    x4s[k] = static_cast<float>(k * k % 7);
  }
  Tensor x = from(xs, {2, 3}, {3, 1});
  Tensor x4 = from(x4s, {1, 1, 4, 4}, {16, 16, 4, 1});
  std::vector<int64_t> dims{0};
  std::optional<torch::headeronly::IntHeaderOnlyArrayRef> opt_dims(dims);
  int64_t dim = 1;

  print("sum_1_keepdim", ts::sum(x, {1}, true));
  print("sum_0_1", ts::sum(x, {0, 1}));
  print("sum_int", ts::sum(x, 1));
  print("sum_variable", ts::sum(x, dim));
  print("sum_vector", ts::sum(x, dims));
  print("sum_upstream_optional", ts::sum(x, opt_dims));
  print("sum_nullopt", ts::sum(x, std::nullopt));
  print("mean_0_1", ts::mean(x, {0, 1}));
  print("mean_1", ts::mean(x, {1}));
  print("std_1", ts::std(x, {1}));
  print("std_0_1", ts::std(x, {0, 1}));
  print("std_int", ts::std(x, 0));
  print("var_1_unbiased_keepdim", ts::var(x, {1}, true, true));
  print("amax_0_1_keepdim", ts::amax(x, {0, 1}, true));
  print("amax_int", ts::amax(x, 1));
  print("max_pool2d", ts::max_pool2d(x4, {2, 2}));
  print("upsample_scales", ts::upsample_bilinear2d(x4, std::nullopt, false, {2.0, 1.5}));
  Tensor idx = ts::narrow(ts::argmax(x, 0), 0, 0, 2);
  print("index", ts::index(x, {idx}));
  Tensor out = ts::new_zeros(x, {0});
  print("sum_out", ts::sum_out(out, x, {1}));
  return 0;
}
