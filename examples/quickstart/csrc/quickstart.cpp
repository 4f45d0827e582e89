// shimgen's quick start: two custom ops on the LibTorch stable ABI. Built against torch 2.13's headers with the
// torch::stable wrappers shimgen generates, it loads into every torch from 2.10 on.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>  // the generated one: it shadows torch's (its folder comes first)
#include <torch/csrc/stable/tensor.h>

using torch::stable::Tensor;

// relu(x) * scale, and the maximum of each row: three aten ops through the generated wrappers.
Tensor scaled_relu(const Tensor& x, double scale) {
  return torch::stable::mul(torch::stable::relu(x), scale);
}

Tensor row_max(const Tensor& x) {
  return torch::stable::amax(x, {-1});
}

STABLE_TORCH_LIBRARY(quickstart, m) {
  m.def("scaled_relu(Tensor x, float scale) -> Tensor");
  m.def("row_max(Tensor x) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(quickstart, CompositeExplicitAutograd, m) {
  m.impl("scaled_relu", TORCH_BOX(&scaled_relu));
  m.impl("row_max", TORCH_BOX(&row_max));
}

#ifdef Py_LIMITED_API
// Built by setuptools as the Python module quickstart._C: importing it loads the library, whose registrations
// above run at load time. The module itself is empty: the ops are torch.ops.quickstart.*.
#include <Python.h>

extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr, nullptr, nullptr, nullptr, nullptr};
  return PyModule_Create(&module);
}
#endif
