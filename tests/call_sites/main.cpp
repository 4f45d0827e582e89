// The call-site corpus runner (tests/test_call_sites.py). aten_calls.cpp (ATen)
// and stable_calls.cpp (shimgen's ops.h, stable headers only) each run call i
// on fresh inputs; a RecordFunction callback records the aten operators the
// call dispatches at the top level. One line per call and side:
//   <i> <side> <ran|absent> <operators, comma-separated, or -> <ok|threw> | <error>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/inductor/aoti_torch/utils.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

int call_count();
bool aten_call(int i, const std::vector<at::Tensor>& inputs);
bool stable_call(int i, AtenTensorHandle* inputs);

namespace {

thread_local int depth = 0;
thread_local bool recording = false;
thread_local std::string reached; // the top-level operators, comma-separated

// The variables of the corpus, in the order both sides unpack them.
std::vector<at::Tensor> make_inputs() {
  at::manual_seed(0);
  at::Tensor t = at::randn({2, 3});
  at::Tensor u = at::randn({2, 3});
  std::vector<at::Tensor> in{
      t,
      u,
      at::randn({3}), // w
      at::randn({3, 3}), // m
      at::randn({2, 3, 3}), // mb
      t.t(), // tt
      at::randn({2, 3}) > 0, // b
      at::arange(2), // i
      at::randint(0, 3, {2, 3}), // l
      at::arange(0, 4, 2), // li
      at::randn({1, 2, 4, 4}), // x4
      at::randn({2, 2, 3, 3}), // k4
      at::randn({2}), // bias
      at::empty({0}), // out
      at::empty({0}), // vals
      at::empty({0}, at::kLong), // inds
  };
  return in;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (depth++ == 0 && recording) {
    auto name = fn.operator_name();
    reached += (reached.empty() ? "" : ",") +
        (name ? name->name + "." + name->overload_name : std::string(fn.name()));
  }
  return nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext*) {
  --depth;
}

template <class F>
void run(int i, const char* side, F&& call) {
  std::vector<at::Tensor> in = make_inputs();
  std::vector<AtenTensorHandle> handles;
  for (const at::Tensor& x : in) {
    handles.push_back(torch::aot_inductor::new_tensor_handle(at::Tensor(x)));
  }
  reached.clear();
  recording = true;
  bool ran = false;
  std::string error;
  try {
    ran = call(in, handles.data());
  } catch (const std::exception& e) {
    ran = true;
    error = e.what();
    error = error.substr(0, error.find('\n'));
  }
  recording = false;
  std::printf(
      "%d %s %s %s %s | %s\n",
      i,
      side,
      ran ? "ran" : "absent",
      reached.empty() ? "-" : reached.c_str(),
      error.empty() ? "ok" : "threw",
      error.c_str());
}

} // namespace

int main() {
  at::addGlobalCallback(
      at::RecordFunctionCallback(on_enter, on_exit).needsInputs(false));
  for (int i = 0; i < call_count(); ++i) {
    // The stable side takes the handles it is given (an unused one leaks: harmless here).
    run(i, "aten", [&](const std::vector<at::Tensor>& in, AtenTensorHandle*) {
      return aten_call(i, in);
    });
    run(i, "stable", [&](const std::vector<at::Tensor>&, AtenTensorHandle* h) {
      return stable_call(i, h);
    });
  }
  std::fflush(stdout);
  std::_Exit(0); // no static destructors: libtorch's may run before ours
}
