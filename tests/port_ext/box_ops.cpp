// A detection-style CPU operator library written against ATen, as extensions were before the stable ABI:
// box areas, pairwise IoU, greedy non-maximum suppression and a box encoder. Input of tests/test_port_fix.py:
// `shimgen port --fix` converts it, the test builds both and compares them.
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace box_ops {

at::Tensor box_area(const at::Tensor& boxes) {
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) == 4, "box_area: boxes must be [N, 4]");
  auto widths = boxes.select(1, 2) - boxes.select(1, 0);
  auto heights = boxes.select(1, 3) - boxes.select(1, 1);
  return widths * heights;
}

template <typename scalar_t>
void iou_kernel(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  auto A = a.accessor<scalar_t, 2>();
  auto B = b.accessor<scalar_t, 2>();
  auto O = out.accessor<scalar_t, 2>();
  for (int64_t i = 0; i < A.size(0); ++i) {
    const scalar_t area_a = (A[i][2] - A[i][0]) * (A[i][3] - A[i][1]);
    for (int64_t j = 0; j < B.size(0); ++j) {
      const scalar_t area_b = (B[j][2] - B[j][0]) * (B[j][3] - B[j][1]);
      const scalar_t w = std::max<scalar_t>(0, std::min(A[i][2], B[j][2]) - std::max(A[i][0], B[j][0]));
      const scalar_t h = std::max<scalar_t>(0, std::min(A[i][3], B[j][3]) - std::max(A[i][1], B[j][1]));
      const scalar_t inter = w * h;
      const scalar_t uni = area_a + area_b - inter;
      O[i][j] = uni > 0 ? inter / uni : scalar_t(0);
    }
  }
}

at::Tensor box_iou(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && a.size(1) == 4, "box_iou: a must be [N, 4]");
  TORCH_CHECK(b.dim() == 2 && b.size(1) == 4, "box_iou: b must be [M, 4]");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "box_iou: a and b must have one dtype");
  auto ac = a.contiguous();
  auto bc = b.contiguous();
  at::Tensor out = at::zeros({a.size(0), b.size(0)}, a.options());
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "box_iou", [&] { iou_kernel<scalar_t>(ac, bc, out); });
  return out;
}

template <typename scalar_t>
void nms_kernel(const at::Tensor& dets, const at::Tensor& order, double threshold, at::Tensor& suppressed,
                at::Tensor& keep, int64_t& num_kept) {
  const int64_t n = dets.size(0);
  const scalar_t* d = dets.data_ptr<scalar_t>();
  const int64_t* ord = order.data_ptr<int64_t>();
  uint8_t* sup = suppressed.data_ptr<uint8_t>();
  int64_t* k = keep.data_ptr<int64_t>();
  for (int64_t oi = 0; oi < n; ++oi) {
    const int64_t i = ord[oi];
    if (sup[i]) {
      continue;
    }
    k[num_kept++] = i;
    const scalar_t ix1 = d[i * 4], iy1 = d[i * 4 + 1], ix2 = d[i * 4 + 2], iy2 = d[i * 4 + 3];
    const scalar_t iarea = (ix2 - ix1) * (iy2 - iy1);
    for (int64_t oj = oi + 1; oj < n; ++oj) {
      const int64_t j = ord[oj];
      if (sup[j]) {
        continue;
      }
      const scalar_t w = std::max<scalar_t>(0, std::min(ix2, d[j * 4 + 2]) - std::max(ix1, d[j * 4]));
      const scalar_t h = std::max<scalar_t>(0, std::min(iy2, d[j * 4 + 3]) - std::max(iy1, d[j * 4 + 1]));
      const scalar_t inter = w * h;
      const scalar_t jarea = (d[j * 4 + 2] - d[j * 4]) * (d[j * 4 + 3] - d[j * 4 + 1]);
      if (inter / (iarea + jarea - inter) > threshold) {
        sup[j] = 1;
      }
    }
  }
}

at::Tensor nms(const at::Tensor& dets, const at::Tensor& scores, double threshold) {
  TORCH_CHECK(dets.dim() == 2 && dets.size(1) == 4, "nms: dets must be [N, 4]");
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == dets.size(0), "nms: scores must be [N]");
  if (dets.numel() == 0) {
    return at::empty({0}, dets.options().dtype(at::kLong));
  }
  auto order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
  auto dc = dets.contiguous();
  auto suppressed = at::zeros({dets.size(0)}, dets.options().dtype(at::kByte));
  auto keep = at::empty({dets.size(0)}, dets.options().dtype(at::kLong));
  int64_t num_kept = 0;
  AT_DISPATCH_FLOATING_TYPES(dets.scalar_type(), "nms", [&] {
    nms_kernel<scalar_t>(dc, order, threshold, suppressed, keep, num_kept);
  });
  return keep.narrow(0, 0, num_kept);
}

// Boxes (x1, y1, x2, y2) -> offsets (dx, dy, log dw, log dh) from anchors, weighted; one row per box.
at::Tensor encode_boxes(const at::Tensor& boxes, const at::Tensor& anchors, double wx, double wy) {
  TORCH_CHECK(boxes.sizes() == anchors.sizes(), "encode_boxes: boxes and anchors must have one shape");
  auto bw = boxes.select(1, 2) - boxes.select(1, 0);
  auto bh = boxes.select(1, 3) - boxes.select(1, 1);
  auto aw = anchors.select(1, 2) - anchors.select(1, 0);
  auto ah = anchors.select(1, 3) - anchors.select(1, 1);
  auto bcx = boxes.select(1, 0) + bw * 0.5;
  auto bcy = boxes.select(1, 1) + bh * 0.5;
  auto acx = anchors.select(1, 0) + aw * 0.5;
  auto acy = anchors.select(1, 1) + ah * 0.5;
  auto out = at::empty_like(boxes);
  out.select(1, 0) = (bcx - acx) / aw * wx;
  out.select(1, 1) = (bcy - acy) / ah * wy;
  out.select(1, 2) = at::log(bw / aw);
  out.select(1, 3) = at::log(bh / ah);
  return out;
}

}  // namespace box_ops

TORCH_LIBRARY(box_ops, m) {
  m.def("box_area(Tensor boxes) -> Tensor");
  m.def("box_iou(Tensor a, Tensor b) -> Tensor");
  m.def("nms(Tensor dets, Tensor scores, float threshold) -> Tensor");
  m.def("encode_boxes(Tensor boxes, Tensor anchors, float wx, float wy) -> Tensor");
}

TORCH_LIBRARY_IMPL(box_ops, CPU, m) {
  m.impl("box_area", &box_ops::box_area);
  m.impl("box_iou", &box_ops::box_iou);
  m.impl("nms", &box_ops::nms);
  m.impl("encode_boxes", &box_ops::encode_boxes);
}

namespace box_ops {

// boxes clipped to an image of (height, width); the limits go through a std::vector as callers pass them, and
// the device index through c10::Device (neither is a Tensor)
at::Tensor clip_boxes(const at::Tensor& boxes, int64_t height, int64_t width) {
  std::vector<int64_t> limits = {width, height, width, height};
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) == static_cast<int64_t>(limits.size()),
              "clip_boxes: boxes must be [N, 4]");
  const int64_t device_index = boxes.device().index();
  TORCH_CHECK(device_index == -1 && boxes.is_cpu(), "clip_boxes: CPU tensors only");
  auto out = boxes.clone();
  for (size_t k = 0; k < limits.size(); ++k) {
    const double hi = static_cast<double>(limits.data()[k]);
    out.select(1, static_cast<int64_t>(k)).clamp_(0.0, hi);
  }
  return out;
}

}  // namespace box_ops

TORCH_LIBRARY_FRAGMENT(box_ops_extra, m) {
  m.def("clip_boxes(Tensor boxes, int height, int width) -> Tensor");
}

TORCH_LIBRARY_IMPL(box_ops_extra, CPU, m) {
  m.impl("clip_boxes", &box_ops::clip_boxes);
}
