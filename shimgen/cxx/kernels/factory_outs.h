// @needs legacy_shims compositions out_inplace
// ---- kernels `range_out` and `full_out`: the factories' out= overloads as
// aten computes them (arange.out, arange.start_out, range.out, range.out_,
// full.out; linspace.out / logspace.out's out check; shimgen/generate/routes/composition.py) ----

/// aten's autograd rule for a factory's out (autograd's fallback for an op
/// without a derivative): in grad mode a leaf out that requires grad raises;
/// one with a grad_fn gets a backward that raises, which this composition
/// (whose copy_ autograd would record) refuses.
template <typename = void>
inline void check_factory_out_autograd(const char* op, const torch::stable::Tensor& out) {
  if (!records_grad({&out})) {
    return;
  }
  if (without_grad_fn(out)) {
    std::string why = std::string("shimgen: ") + op;
    why += ": functions with out=... arguments don't support ";
    why += "automatic differentiation, but one of the arguments ";
    why += "requires grad (aten raises)";
    throw std::runtime_error(why);
  }
  std::string why = "out requires grad and has a grad_fn in grad mode, where ";
  why += "aten records a backward that raises and this composition would ";
  why += "record copy_'s: call it under no_grad, or pass an out that does ";
  why += "not require grad";
  fail(op, why.c_str());
}

/// Raises, naming the remedy, where a range factory's out is not on the CPU
/// (the range factory route's calls are proven against aten's CPU kernel, which
/// accumulates in double; CUDA's accumulates a float range in float).
template <typename = void>
inline void refuse_not_cpu(const char* op, const torch::stable::Tensor& out) {
  if (!out.is_cpu()) {
    std::string why = "out is not on the CPU, where this composition is ";
    why += "proven only: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// Raises, naming the remedy, where out is on the meta device: there aten's
/// X.Tensor_Tensor_out is a Python reference (torch._refs), which refuses the
/// CPU 0-dim numbers as a cross-device copy, where aten's Scalar overload
/// takes them. On every other device it is aten's C++ kernel, which reads
/// them with .item() and calls the Scalar overload's kernel on out's device.
template <typename = void>
inline void refuse_meta_out(const char* op, const torch::stable::Tensor& out) {
  int32_t device_type = 0;
  check(aoti_torch_get_device_type(out.get(), &device_type), "get_device_type");
  if (device_type == aoti_torch_device_type_meta()) {
    std::string why = "out is on the meta device, where aten computes the ";
    why += "Tensor overload this route calls in Python, which refuses CPU ";
    why += "numbers: define SHIMGEN_OVERLAY and link libshimgen_overlay ";
    why += "(rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// Sets grad mode back to `was` when it goes out of scope.
struct GradModeRestore {
  bool was = false;
  ~GradModeRestore() {
    aoti_torch_grad_mode_set_enabled(was);
  }
};

/// Does `t` require grad, in grad mode or not (grad mode enabled for the
/// question, then restored)?
template <typename = void>
inline bool requires_grad_any_mode(const torch::stable::Tensor& t) {
  const GradModeRestore restore{aoti_torch_grad_mode_is_enabled()};
  aoti_torch_grad_mode_set_enabled(true);
  return requires_grad_in_grad_mode(t);
}

/// out.resize_(like's sizes), quiet, as aten's factory kernels resize their
/// out (aten::resize_as_); refused on an out that requires grad, which
/// resize_as_ refuses above aten's kernel while the kernel does not.
template <typename = void>
inline void resize_quiet(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& like) {
  if (requires_grad_any_mode(out)) {
    std::string why = "out requires grad and must be resized, which ";
    why += "aten::resize_as_ refuses where aten's kernel does not: pass an ";
    why += "out of the result's size, or define SHIMGEN_OVERLAY and link ";
    why += "libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
  dispatch_tensors<3>(
      "aten::resize_as_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(like),
       torch::stable::detail::from(std::nullopt)});
}

/// aten's rules for the out of arange_out / range_out around `result` (the
/// range in out's dtype on out's device, contiguous): where out's number of
/// elements differs, out is resized to the range's length (`warns`, arange:
/// by aten::where.self_out(true, result, result, out), TensorIterator's
/// resize_output, whose warning on a non-empty out stands for arange's own,
/// refused where out writes an element twice, which TensorIterator refuses;
/// range: resize_quiet); else out keeps its shape and gets the elements in
/// its row-major order (aten::view_as, aten::copy_), as aten computes a
/// non-contiguous out in a contiguous copy.
template <typename = void>
inline torch::stable::Tensor& range_out_assign(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& result,
    bool warns) {
  if (out.numel() != result.numel()) {
    if (!warns) {
      resize_quiet(op, out, result);
    } else if (written_twice(out)) {
      std::string why = "out writes an element twice and must be resized, ";
      why += "which this composition cannot do as aten does: define ";
      why += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
      why += "torch release), or pass a new tensor";
      fail(op, why.c_str());
    } else {
      write_resized(out, result);
      return out;
    }
  }
  torch::stable::Tensor shaped = result;
  if (!same_sizes(out, result)) {
    shaped = dispatch_tensors<2>(
        "aten::view_as",
        "",
        {torch::stable::detail::from(result), torch::stable::detail::from(out)});
  }
  dispatch_tensors<3>(
      "aten::copy_",
      "",
      {torch::stable::detail::from(out),
       torch::stable::detail::from(shaped),
       torch::stable::detail::from(false)});
  return out;
}

/// aten's full_out resize: where out's sizes differ from `size`,
/// out.resize_(size) (resize_quiet, like a new contiguous tensor of those
/// sizes, out's dtype and device).
template <typename = void>
inline void full_out_resize(
    const char* op,
    torch::stable::Tensor& out,
    const int64_t* size,
    size_t n) {
  int64_t* sizes = nullptr;
  check(aoti_torch_get_sizes(out.get(), &sizes), "aoti_torch_get_sizes");
  bool same = static_cast<size_t>(out.dim()) == n;
  for (size_t d = 0; same && d < n; ++d) {
    same = sizes[d] == size[d];
  }
  if (same) {
    return;
  }
  std::vector<int64_t> strides(n, 1);
  for (size_t d = n; d > 1; --d) {
    strides[d - 2] = strides[d - 1] * (size[d - 1] > 1 ? size[d - 1] : 1);
  }
  int32_t device_type = 0;
  int32_t device_index = 0;
  check(aoti_torch_get_device_type(out.get(), &device_type), "get_device_type");
  check(aoti_torch_get_device_index(out.get(), &device_index), "get_device_index");
  const int32_t dtype = torch::stable::detail::to<int32_t>(
      torch::stable::detail::from(out.scalar_type()));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          static_cast<int64_t>(n),
          size,
          strides.data(),
          dtype,
          device_type,
          device_index,
          &h),
      "aoti_torch_empty_strided");
  resize_quiet(op, out, torch::stable::Tensor(h));
}

