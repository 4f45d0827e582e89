// A stable-ABI-only extension (built with -DTORCH_STABLE_ONLY) whose kernels call shimgen's generated C shims.
// tests/test_c_shim_compile.py compiles it with `-I <generated dir>` in front of torch's include directory, so
// <torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h> (included by <torch/csrc/stable/ops.h>) is shimgen's
// header, with -DSHIMGEN_OVERLAY (under which it declares the overlay's shims, c_shim_aten_overlay.h), and links
// it against the overlay library built from shimgen's c_shim_aten.cpp.

#include <torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

using torch::stable::Tensor;

namespace {

Tensor steal(AtenTensorHandle h) {
  return Tensor(h);
}

// add.Tensor: libtorch 2.13 ships no aoti_torch_aten_add_Tensor; the overlay provides it.
Tensor add(Tensor self, Tensor other, double alpha) {
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_add_Tensor(self.get(), other.get(), alpha, &ret));
  return steal(ret);
}

// add.out: an out= variant (out argument first, no ret pointers).
Tensor add_out(Tensor self, Tensor other, Tensor out) {
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_add_out(out.get(), self.get(), other.get(), 1.0));
  return out;
}

// cat.default: Tensor[] argument (pointer + _len_).
Tensor cat2(Tensor a, Tensor b, int64_t dim) {
  std::array<AtenTensorHandle, 2> list{a.get(), b.get()};
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_cat(list.data(), 2, dim, &ret));
  return steal(ret);
}

// index.Tensor: Tensor?[] argument (array of nullable handle pointers + _len_).
Tensor index2(Tensor self, std::optional<Tensor> i0, std::optional<Tensor> i1) {
  std::array<AtenTensorHandle, 2> h{i0 ? i0->get() : nullptr, i1 ? i1->get() : nullptr};
  std::array<AtenTensorHandle*, 2> p{i0 ? &h[0] : nullptr, i1 ? &h[1] : nullptr};
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(
      aoti_torch_aten_index_Tensor(self.get(), const_cast<const AtenTensorHandle**>(p.data()), 2, &ret));
  return steal(ret);
}

// clamp.default: Scalar? arguments (double*, nullptr = None).
Tensor clamp(Tensor self, std::optional<double> lo, std::optional<double> hi) {
  double lo_v = lo.value_or(0.0);
  double hi_v = hi.value_or(0.0);
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_clamp(self.get(), lo ? &lo_v : nullptr, hi ? &hi_v : nullptr, &ret));
  return steal(ret);
}

// sort.default, max.dim, topk.default: tuple returns (one ret pointer each).
std::tuple<Tensor, Tensor> sort(Tensor self, int64_t dim, bool descending) {
  AtenTensorHandle r0 = nullptr, r1 = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_sort(self.get(), dim, descending, &r0, &r1));
  return {steal(r0), steal(r1)};
}

std::tuple<Tensor, Tensor> max_dim(Tensor self, int64_t dim, bool keepdim) {
  AtenTensorHandle r0 = nullptr, r1 = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_max_dim(self.get(), dim, keepdim, &r0, &r1));
  return {steal(r0), steal(r1)};
}

std::tuple<Tensor, Tensor> topk(Tensor self, int64_t k, int64_t dim, bool largest, bool sorted) {
  AtenTensorHandle r0 = nullptr, r1 = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_topk(self.get(), k, dim, largest, sorted, &r0, &r1));
  return {steal(r0), steal(r1)};
}

// unfold.default: a method-only op, so the definition calls at::_ops::unfold::call.
Tensor unfold(Tensor self, int64_t dimension, int64_t size, int64_t step) {
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_unfold(self.get(), dimension, size, step, &ret));
  return steal(ret);
}

// new_ones.default: method-only SymInt op (at::symint::new_ones<c10::SymInt>) with ScalarType?, Layout?,
// Device? (pointer + _index_) and bool? arguments. Asks for float64 on the CPU.
Tensor new_ones_f64(Tensor self, std::vector<int64_t> size) {
  int32_t dtype = aoti_torch_dtype_float64();
  int32_t device = aoti_torch_device_type_cpu();
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_new_ones(
      self.get(), size.data(), static_cast<int64_t>(size.size()), &dtype, nullptr, &device, 0, nullptr, &ret));
  return steal(ret);
}

// randn.generator: Generator? argument, passed as None (the default generator).
Tensor randn(std::vector<int64_t> size) {
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_randn_generator(
      size.data(), static_cast<int64_t>(size.size()), nullptr, nullptr, nullptr, nullptr, 0, nullptr, &ret));
  return steal(ret);
}

// result_type.Tensor: a ScalarType return (int32_t*), converted back to a stable ScalarType.
torch::headeronly::ScalarType result_type(Tensor a, Tensor b) {
  int32_t ret = 0;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_result_type_Tensor(a.get(), b.get(), &ret));
  return torch::stable::detail::to<torch::headeronly::ScalarType>(torch::stable::detail::from(ret));
}

// An upstream shim (libtorch's own symbol) through the same header, next to the overlay ones.
Tensor amax(Tensor self, int64_t dim) {
  AtenTensorHandle ret = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_aten_amax(self.get(), &dim, 1, 0, &ret));
  return steal(ret);
}

} // namespace

STABLE_TORCH_LIBRARY(shimgen_ctest, m) {
  m.def("add(Tensor self, Tensor other, float alpha) -> Tensor");
  m.def("add_out(Tensor self, Tensor other, Tensor(a!) out) -> Tensor(a!)");
  m.def("cat2(Tensor a, Tensor b, int dim) -> Tensor");
  m.def("index2(Tensor self, Tensor? i0, Tensor? i1) -> Tensor");
  m.def("clamp(Tensor self, float? lo, float? hi) -> Tensor");
  m.def("sort(Tensor self, int dim, bool descending) -> (Tensor, Tensor)");
  m.def("max_dim(Tensor self, int dim, bool keepdim) -> (Tensor, Tensor)");
  m.def("topk(Tensor self, int k, int dim, bool largest, bool sorted) -> (Tensor, Tensor)");
  m.def("unfold(Tensor self, int dimension, int size, int step) -> Tensor");
  m.def("new_ones_f64(Tensor self, int[] size) -> Tensor");
  m.def("randn(int[] size) -> Tensor");
  m.def("result_type(Tensor a, Tensor b) -> ScalarType");
  m.def("amax(Tensor self, int dim) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(shimgen_ctest, CompositeExplicitAutograd, m) {
  m.impl("add", TORCH_BOX(&add));
  m.impl("add_out", TORCH_BOX(&add_out));
  m.impl("cat2", TORCH_BOX(&cat2));
  m.impl("index2", TORCH_BOX(&index2));
  m.impl("clamp", TORCH_BOX(&clamp));
  m.impl("sort", TORCH_BOX(&sort));
  m.impl("max_dim", TORCH_BOX(&max_dim));
  m.impl("topk", TORCH_BOX(&topk));
  m.impl("unfold", TORCH_BOX(&unfold));
  m.impl("new_ones_f64", TORCH_BOX(&new_ones_f64));
  m.impl("randn", TORCH_BOX(&randn));
  m.impl("result_type", TORCH_BOX(&result_type));
  m.impl("amax", TORCH_BOX(&amax));
}
