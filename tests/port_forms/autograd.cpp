// Written for tests/test_port_autograd.py: torch::autograd::Function classes as extensions write them, registered
// through TORCH_LIBRARY (m.def with a kernel) and torch::RegisterOperators, declared through torch/extension.h; one
// writes into an optional argument (mark_dirty) and saves a computed tensor, as rusty1s/pytorch_scatter's do.
#include <torch/extension.h>

using torch::autograd::AutogradContext;
using torch::autograd::Variable;
using torch::autograd::variable_list;

// y = x * w * scale (scale a number saved in saved_data); w's gradient only where it needs one
class ScaledMul : public torch::autograd::Function<ScaledMul> {
 public:
  static variable_list forward(AutogradContext* ctx, Variable x, Variable w, double scale) {
    ctx->saved_data["scale"] = scale;
    ctx->save_for_backward({x, w});
    auto y = at::mul(at::mul(x, w), scale);
    auto count = at::zeros({1}, x.options().dtype(at::kLong));
    ctx->mark_non_differentiable({count});
    return {y, count};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    auto x = saved[0], w = saved[1];
    auto scale = ctx->saved_data["scale"].toDouble();
    auto grad_x = at::mul(at::mul(grads[0], w), scale);
    auto grad_w = Variable();
    if (torch::autograd::any_variable_requires_grad({w})) {
      grad_w = at::mul(at::mul(grads[0], x), scale);
    }
    return {grad_x, grad_w, Variable()};
  }
};

// y = x ** k (k an int saved in saved_data)
class IntPow : public torch::autograd::Function<IntPow> {
 public:
  static variable_list forward(AutogradContext* ctx, Variable x, int64_t k) {
    ctx->saved_data["k"] = k;
    ctx->save_for_backward({x});
    return {at::pow(x, k)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto x = ctx->get_saved_variables()[0];
    auto k = ctx->saved_data["k"].toInt();
    return {at::mul(at::mul(grads[0], at::pow(x, k - 1)), static_cast<double>(k)), Variable()};
  }
};

static int64_t exp_forwards = 0;

// out = exp(x), written into `optional_out` where one is given (mark_dirty); what backward reads is the computed
// output the forward saved and a size list in saved_data: the forward runs once (exp_forwards counts it)
class ExpInto : public torch::autograd::Function<ExpInto> {
 public:
  static variable_list forward(AutogradContext* ctx, Variable x, std::optional<Variable> optional_out) {
    ++exp_forwards;
    ctx->saved_data["sizes"] = x.sizes();
    auto out = at::exp(x);
    if (optional_out.has_value()) {
      optional_out.value().copy_(out);
      out = optional_out.value();
      ctx->mark_dirty({optional_out.value()});
    }
    ctx->save_for_backward({out});
    return {out};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto out = ctx->get_saved_variables()[0];
    auto sizes = ctx->saved_data["sizes"].toIntVector();
    return {at::mul(grads[0], out).reshape(sizes), Variable()};
  }
};

at::Tensor scaled_mul(at::Tensor x, at::Tensor w, double scale) {
  return ScaledMul::apply(x.contiguous(), w, scale)[0];
}

at::Tensor int_pow(at::Tensor x, int64_t k) {
  return IntPow::apply(x, k)[0];
}

at::Tensor exp_into(at::Tensor x, std::optional<at::Tensor> optional_out) {
  return ExpInto::apply(x, optional_out)[0];
}

int64_t exp_forward_calls() {
  return exp_forwards;
}

// no autograd: its key stays the catch-all's
at::Tensor plain_add(at::Tensor x, at::Tensor y) {
  return at::add(x, y);
}

TORCH_LIBRARY(autograd_forms, m) {
  m.def("scaled_mul", &scaled_mul);
  m.def("plain_add", &plain_add);
  m.def("exp_into", &exp_into);
  m.def("exp_forward_calls", &exp_forward_calls);
}

static auto registry = torch::RegisterOperators().op("autograd_forms::int_pow", &int_pow);
