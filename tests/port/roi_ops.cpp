// A torchvision-style CPU operator library: torch:: and at:: calls, integer Scalars, out= forms, Tensor
// methods. Input of tests/test_port.py (never compiled).
#include <torch/extension.h>

#include <vector>

torch::Tensor roi_pool_cpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t pooled, double spatial) {
  TORCH_CHECK(rois.dim() == 2, "rois must be [K, 5]");
  auto boxes = rois.narrow(1, 1, 4).to(torch::kFloat);
  auto clamped = at::clamp(boxes, 0, 4096);
  auto halves = at::div(clamped, 2);
  auto out = torch::zeros({rois.size(0), input.size(1), pooled, pooled}, input.options());
  auto argmax = torch::empty({rois.size(0)}, input.options().dtype(torch::kLong));
  auto widest = at::amax(halves, {1});
  auto best = at::max(halves, 1);
  auto keep = at::where(widest > 0, widest, at::zeros_like(widest));
  auto both = torch::cat({keep, widest}, 0);
  at::sum_out(out, input, {1});
  auto flat = out.reshape({-1});
  out.fill_(0);
  return at::sub(flat, both);
}

std::vector<torch::Tensor> nms_cpu(const torch::Tensor& dets, const torch::Tensor& scores, double threshold) {
  auto order = std::get<1>(scores.sort(0, /*descending=*/true));
  auto areas = (dets.select(1, 2) - dets.select(1, 0)) * (dets.select(1, 3) - dets.select(1, 1));
  auto suppressed = at::zeros_like(order).to(at::kByte);
  auto ranks = at::arange(dets.size(0), dets.options().dtype(at::kLong));
  auto scheme = dets.qscheme();
  return {at::index_select(dets, 0, order), areas, suppressed, ranks};
}

torch::Tensor box_magnitude(const torch::Tensor* boxes) {
  return boxes->abs();
}
