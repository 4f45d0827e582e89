// A sequence-model CPU operator library written against ATen: segment reductions over ragged batches, a
// masked running mean, a top-k gather and a fused scale-shift. Input of tests/test_port_fix.py.
#include <torch/extension.h>

#include <cstdint>
#include <vector>

namespace seq_ops {

// out[s] = sum of values[offsets[s] : offsets[s + 1]] along dim 0.
template <typename scalar_t>
void segment_sum_kernel(const at::Tensor& values, const at::Tensor& offsets, at::Tensor& out) {
  const int64_t segments = offsets.size(0) - 1;
  const int64_t width = values.size(1);
  auto v = values.accessor<scalar_t, 2>();
  auto o = out.accessor<scalar_t, 2>();
  const int64_t* off = offsets.data_ptr<int64_t>();
  for (int64_t s = 0; s < segments; ++s) {
    for (int64_t r = off[s]; r < off[s + 1]; ++r) {
      for (int64_t c = 0; c < width; ++c) {
        o[s][c] += v[r][c];
      }
    }
  }
}

at::Tensor segment_sum(const at::Tensor& values, const at::Tensor& offsets) {
  TORCH_CHECK(values.dim() == 2, "segment_sum: values must be 2-D");
  TORCH_CHECK(offsets.dim() == 1 && offsets.scalar_type() == at::kLong, "segment_sum: offsets must be int64 [S+1]");
  TORCH_CHECK(offsets.numel() >= 1, "segment_sum: offsets must not be empty");
  const int64_t last = offsets[-1].item<int64_t>();
  TORCH_CHECK(last == values.size(0), "segment_sum: offsets must end at ", values.size(0), ", not ", last);
  auto v = values.contiguous();
  auto off = offsets.contiguous();
  auto out = at::zeros({offsets.size(0) - 1, values.size(1)}, values.options());
  AT_DISPATCH_FLOATING_TYPES(values.scalar_type(), "segment_sum", [&] {
    segment_sum_kernel<scalar_t>(v, off, out);
  });
  return out;
}

// mean over the rows of each segment; an empty segment gives zeros
at::Tensor segment_mean(const at::Tensor& values, const at::Tensor& offsets) {
  auto sums = segment_sum(values, offsets);
  auto counts = offsets.narrow(0, 1, offsets.size(0) - 1) - offsets.narrow(0, 0, offsets.size(0) - 1);
  auto denom = at::clamp_min(counts, 1).to(values.scalar_type()).unsqueeze(1);
  return sums / denom;
}

// running mean along dim 1 of x where mask is set (positions not set repeat the previous mean)
template <typename scalar_t>
void masked_running_mean_kernel(const at::Tensor& x, const at::Tensor& mask, at::Tensor& out) {
  auto X = x.accessor<scalar_t, 2>();
  auto M = mask.accessor<bool, 2>();
  auto O = out.accessor<scalar_t, 2>();
  for (int64_t b = 0; b < X.size(0); ++b) {
    double total = 0;
    int64_t count = 0;
    for (int64_t t = 0; t < X.size(1); ++t) {
      if (M[b][t]) {
        total += static_cast<double>(X[b][t]);
        ++count;
      }
      O[b][t] = count ? static_cast<scalar_t>(total / count) : scalar_t(0);
    }
  }
}

at::Tensor masked_running_mean(const at::Tensor& x, const at::Tensor& mask) {
  TORCH_CHECK(x.dim() == 2 && mask.dim() == 2, "masked_running_mean: x and mask must be 2-D");
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_running_mean: mask must be bool");
  auto xc = x.contiguous();
  auto mc = mask.contiguous();
  auto out = at::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "masked_running_mean", [&] {
    masked_running_mean_kernel<scalar_t>(xc, mc, out);
  });
  return out;
}

// the k largest scores of each row and the matching rows of values: (scores [B, k], values [B, k, D])
std::vector<at::Tensor> topk_gather(const at::Tensor& scores, const at::Tensor& values, int64_t k) {
  TORCH_CHECK(scores.dim() == 2 && values.dim() == 3, "topk_gather: scores [B, N], values [B, N, D]");
  TORCH_CHECK(k >= 1 && k <= scores.size(1), "topk_gather: k must be in [1, ", scores.size(1), "]");
  auto top = at::topk(scores, k, 1);
  auto best = std::get<0>(top);
  auto index = std::get<1>(top);
  auto gathered = at::empty({values.size(0), k, values.size(2)}, values.options());
  for (int64_t b = 0; b < values.size(0); ++b) {
    gathered[b] = at::index_select(values[b], 0, index[b]);
  }
  return {best, gathered};
}

// y = (x - mean) * scale + shift, then clamped to [lo, hi]; -y where flip is set
at::Tensor scale_shift(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift, double lo, double hi,
                       bool flip) {
  TORCH_CHECK(scale.sizes() == shift.sizes(), "scale_shift: scale and shift must have one shape");
  auto mean = x.mean({-1}, /*keepdim=*/true);
  auto y = (x - mean) * scale;
  y += shift;
  y = at::clamp(y, lo, hi);
  if (flip) {
    y = -y;
  }
  auto positive = (y > 0).to(at::kFloat);
  return y * 2.0 - positive;
}

}  // namespace seq_ops

TORCH_LIBRARY(seq_ops, m) {
  m.def("segment_sum(Tensor values, Tensor offsets) -> Tensor");
  m.def("segment_mean(Tensor values, Tensor offsets) -> Tensor");
  m.def("masked_running_mean(Tensor x, Tensor mask) -> Tensor");
  m.def("topk_gather(Tensor scores, Tensor values, int k) -> Tensor[]");
  m.def("scale_shift(Tensor x, Tensor scale, Tensor shift, float lo, float hi, bool flip) -> Tensor");
}

TORCH_LIBRARY_IMPL(seq_ops, CPU, m) {
  m.impl("segment_sum", &seq_ops::segment_sum);
  m.impl("segment_mean", &seq_ops::segment_mean);
  m.impl("masked_running_mean", &seq_ops::masked_running_mean);
  m.impl("topk_gather", &seq_ops::topk_gather);
  m.impl("scale_shift", &seq_ops::scale_shift);
}
