// Every ATen dispatch form and registration form `shimgen port --fix` rewrites, each kernel returning a code of
// the type it dispatched to: 1000 * sizeof(scalar_t) + the sum of the tensor's elements (a complex one's real
// parts). tests/test_port_fix_forms.py ports it, builds both, and compares the codes over every dtype.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Dispatch_v2.h>
#include <torch/library.h>

#include <tuple>

namespace forms {

template <typename T>
double as_double(T v) {
  return static_cast<double>(v);
}

template <typename T>
double as_double(c10::complex<T> v) {
  return static_cast<double>(v.real());
}

template <typename T>
double code(const at::Tensor& x) {
  const T* p = x.const_data_ptr<T>();
  double sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    sum += as_double(p[i]);
  }
  return 1000.0 * sizeof(T) + sum;
}

double floating(const at::Tensor& x) {
  double out = 0;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "floating", [&] { out = code<scalar_t>(x); });
  return out;
}

double floating_and_half(const at::Tensor& x) {
  double out = 0;
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "floating_and_half", [&] { out = code<scalar_t>(x); });
  return out;
}

double floating_and(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_TYPES_AND(at::kHalf, x.scalar_type(), "floating_and", [&] {
    return code<scalar_t>(x);
  });
}

double floating_and2(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(),
                                         "floating_and2", [&] { return code<scalar_t>(x); });
}

double floating_and3(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_TYPES_AND3(at::kHalf, at::kBFloat16, at::kLong, x.scalar_type(), "floating_and3",
                                         [&] { return code<scalar_t>(x); });
}

double floating_and4(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_TYPES_AND4(c10::kHalf, c10::kBFloat16, c10::kInt, c10::kBool, x.scalar_type(),
                                         "floating_and4", [&] { return code<scalar_t>(x); });
}

double reduced_floating(const at::Tensor& x) {
  return AT_DISPATCH_REDUCED_FLOATING_TYPES(x.scalar_type(), "reduced_floating", [&] { return code<scalar_t>(x); });
}

double all(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES(x.scalar_type(), "all", [&] { return code<scalar_t>(x); });
}

double all_and(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES_AND(at::kBool, x.scalar_type(), "all_and", [&] { return code<scalar_t>(x); });
}

double all_and2(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "all_and2", [&] {
    return code<scalar_t>(x);
  });
}

double all_and3(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, x.scalar_type(), "all_and3",
                                    [&] { return code<scalar_t>(x); });
}

double all_and_complex(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES_AND_COMPLEX(x.scalar_type(), "all_and_complex", [&] { return code<scalar_t>(x); });
}

double all_and_complex_and2(const at::Tensor& x) {
  return AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(at::kHalf, at::kBool, x.scalar_type(), "all_and_complex_and2",
                                                [&] { return code<scalar_t>(x); });
}

double integral(const at::Tensor& x) {
  return AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "integral", [&] { return code<scalar_t>(x); });
}

double integral_and(const at::Tensor& x) {
  return AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, x.scalar_type(), "integral_and", [&] { return code<scalar_t>(x); });
}

double floating_and_complex(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(x.scalar_type(), "floating_and_complex", [&] {
    return code<scalar_t>(x);
  });
}

double floating_and_complex_and1(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND1(at::kHalf, x.scalar_type(), "floating_and_complex_and1",
                                                     [&] { return code<scalar_t>(x); });
}

double floating_and_complex_and2(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(),
                                                     "floating_and_complex_and2", [&] { return code<scalar_t>(x); });
}

double complex(const at::Tensor& x) {
  return AT_DISPATCH_COMPLEX_TYPES(x.scalar_type(), "complex", [&] { return code<scalar_t>(x); });
}

double switch_cases(const at::Tensor& x) {
  return AT_DISPATCH_SWITCH(x.scalar_type(), "switch_cases",
                            AT_DISPATCH_CASE_FLOATING_TYPES_AND(at::kHalf, [&] { return code<scalar_t>(x); })
                            AT_DISPATCH_CASE(at::kLong, [&] { return -code<scalar_t>(x); }));
}

#define FORMS_INTEGRAL_CASES(...) \
  AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(at::ScalarType::Bool, __VA_ARGS__)

double switch_defined_cases(const at::Tensor& x) {
  return AT_DISPATCH_SWITCH(x.scalar_type(), "switch_defined_cases",
                            FORMS_INTEGRAL_CASES([&] { return code<scalar_t>(x); }));
}

double index(const at::Tensor& x) {
  return AT_DISPATCH_INDEX_TYPES(x.scalar_type(), "index", [&] { return code<index_t>(x) + 0.5; });
}

double nested(const at::Tensor& x, const at::Tensor& y) {
  return AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "nested_outer", [&] {
    using outer_t = scalar_t;
    return AT_DISPATCH_INTEGRAL_TYPES(y.scalar_type(), "nested_inner", [&] {
      return code<outer_t>(x) * 10 + code<scalar_t>(y);
    });
  });
}

double v2(const at::Tensor& x) {
  return AT_DISPATCH_V2(x.scalar_type(), "v2", AT_WRAP([&] { return code<scalar_t>(x); }),
                        AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, c10::ScalarType::Bool);
}

// ATen's private case macro with a hint of its own, and a c10::optional parameter
double selective(const at::Tensor& x, c10::optional<at::Tensor> y) {
  return AT_DISPATCH_SWITCH(x.scalar_type(), "selective",
                            AT_PRIVATE_CASE_TYPE_USING_HINT(at::kFloat, elem_t, [&] { return code<elem_t>(x); })
                            AT_PRIVATE_CASE_TYPE_USING_HINT(at::ScalarType::Short, elem_t, [&] {
                              return code<elem_t>(x) + (y.has_value() ? 0.25 : 0.0);
                            }));
}

std::tuple<at::Tensor, double> pair(const at::Tensor& x, double scale, int64_t shift, bool twice) {
  return std::make_tuple(x, (twice ? 2 : 1) * scale + shift);
}

double legacy_one(const at::Tensor& x) {
  return AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "legacy_one", [&] { return code<scalar_t>(x); });
}

double legacy_two(const at::Tensor& x, int64_t k) {
  return AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "legacy_two", [&] { return code<scalar_t>(x) + k; });
}

}  // namespace forms

// a name with its kernel, no schema: inferred from the C++ signature; kernels for a dispatch key
TORCH_LIBRARY(forms, m) {
  m.def("floating", &forms::floating);
  m.def("floating_and_half", forms::floating_and_half);
  m.def("floating_and", TORCH_FN(forms::floating_and));
  m.def("floating_and2(Tensor x) -> float", &forms::floating_and2);
  m.def("floating_and3", &forms::floating_and3);
  m.def("floating_and4", &forms::floating_and4);
  m.def("reduced_floating", &forms::reduced_floating);
  m.def("all", &forms::all);
  m.def("all_and", &forms::all_and);
  m.def("all_and2", &forms::all_and2);
  m.def("all_and3", &forms::all_and3);
  m.def("all_and_complex", &forms::all_and_complex);
  m.def("all_and_complex_and2", &forms::all_and_complex_and2);
  m.def("integral", &forms::integral);
  m.def("integral_and", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(forms::integral_and)));
  m.def("floating_and_complex(Tensor x) -> float");
  m.impl("floating_and_complex", c10::kCPU, &forms::floating_and_complex);
  m.def("pair", &forms::pair);
}

// a schema, and the kernels in an IMPL block
TORCH_LIBRARY_FRAGMENT(forms, m) {
  m.def("floating_and_complex_and1(Tensor x) -> float");
  m.def("floating_and_complex_and2(Tensor x) -> float");
  m.def("complex(Tensor x) -> float");
  m.def("switch_cases(Tensor x) -> float");
  m.def("switch_defined_cases(Tensor x) -> float");
  m.def("index(Tensor x) -> float");
  m.def("nested(Tensor x, Tensor y) -> float");
  m.def("v2(Tensor x) -> float");
  m.def(TORCH_SELECTIVE_SCHEMA("forms::selective(Tensor x, Tensor? y) -> float"));
}

TORCH_LIBRARY_IMPL(forms, CPU, m) {
  m.impl("floating_and_complex_and1", &forms::floating_and_complex_and1);
  m.impl("floating_and_complex_and2", forms::floating_and_complex_and2);
  m.impl("complex", TORCH_FN(forms::complex));
  m.impl("switch_cases", &forms::switch_cases);
  m.impl("switch_defined_cases", &forms::switch_defined_cases);
  m.impl("index", &forms::index);
  m.impl("nested", &forms::nested);
  m.impl("v2", &forms::v2);
  m.impl(TORCH_SELECTIVE_NAME("forms::selective"), TORCH_FN(forms::selective));
}

// the legacy API
static auto legacy_registry = torch::RegisterOperators()
                                  .op("forms_legacy::one", &forms::legacy_one)
                                  .op("forms_legacy::two(Tensor x, int k) -> float", &forms::legacy_two);
