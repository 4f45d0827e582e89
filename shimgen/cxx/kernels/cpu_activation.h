// @needs out_inplace
// ---- kernel `cpu_activation`: elu and softplus on a contiguous CPU tensor
// as aten's own CPU kernel computes them, its loop replicated ----
//
// aten's CPU elu and softplus kernels (Activation.cpp, Elu.h) run through
// cpu_kernel_vec on a TensorIterator: for a contiguous tensor the iterator
// is one dimension, split by at::parallel_for (grain 32768) into chunks of
// the thread pool; each chunk computes blocks of 2 * Vectorized<T>::size()
// elements with the vectorized lambda, the rest with the scalar one. The
// kernel is the one of the CPU capability aten chose (DispatchStub: the
// environment's ATEN_CPU_CAPABILITY, else the CPU's features): AVX512 (16
// floats, 8 doubles a vector), AVX2 (8, 4) or DEFAULT (8, 4, elementwise
// libm). Its vector math is Sleef's (Sleef_expm1f16_u10 ...), which
// libtorch_cpu exports and this section looks up at run time (dlsym); its
// scalar math is libm's, called here as aten calls it. The chunks come from
// libtorch's own parallel_for (torch_parallel_for, 2.10 on), the lanes'
// products and selections are IEEE operations without an addition a
// compiler could fuse. Another layout, device, dtype or architecture is
// refused by the caller (act_computes), never computed another way.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(_WIN32)
#define SHIMGEN_ACT_X86 1
#endif

/// aten's CPU capability in this process, as DispatchStub computes it once:
/// 2 AVX512, 1 AVX2, 0 DEFAULT; -1 where this section cannot tell (not
/// x86-64 with GCC or clang). ATEN_CPU_CAPABILITY "avx512", "avx2" or
/// "default" chooses; another value is ignored (aten warns) for the CPU's
/// features: AVX512 with avx512vl, avx512bw, avx512dq and fma, AVX2 with
/// avx2 and fma.
template <typename = void>
inline int act_capability() {
#if defined(SHIMGEN_ACT_X86)
  static const int capability = [] {
    const char* env = std::getenv("ATEN_CPU_CAPABILITY");
    const std::string chosen = env != nullptr ? env : "";
    if (chosen == "avx512") {
      return 2;
    }
    if (chosen == "avx2") {
      return 1;
    }
    if (chosen == "default") {
      return 0;
    }
    __builtin_cpu_init();
    const bool fma = __builtin_cpu_supports("fma");
    const bool vl = __builtin_cpu_supports("avx512vl");
    const bool bw = __builtin_cpu_supports("avx512bw");
    const bool dq = __builtin_cpu_supports("avx512dq");
    if (vl && bw && dq && fma) {
      return 2;
    }
    return __builtin_cpu_supports("avx2") && fma ? 1 : 0;
  }();
  return capability;
#else
  return -1;
#endif
}

/// Lanes of Vectorized<T> at a capability (64 or 32 bytes a vector).
template <typename T>
inline int64_t act_lanes(int capability) {
  const int64_t bytes = capability == 2 ? 64 : 32;
  return bytes / static_cast<int64_t>(sizeof(T));
}

#if defined(SHIMGEN_ACT_X86)
/// One call of Sleef's function `fn` on a 64-byte vector (zmm registers).
template <typename T>
__attribute__((target("avx512f"))) inline void act_sleef512(
    const void* fn,
    const T* in,
    T* out) {
  typedef T Vec __attribute__((vector_size(64)));
  typedef Vec (*Fn)(Vec);
  Vec v;
  __builtin_memcpy(&v, in, sizeof(v));
  const Vec r = reinterpret_cast<Fn>(fn)(v);
  __builtin_memcpy(out, &r, sizeof(r));
}

/// One call of Sleef's function `fn` on a 32-byte vector (ymm registers).
template <typename T>
__attribute__((target("avx2"))) inline void act_sleef256(
    const void* fn,
    const T* in,
    T* out) {
  typedef T Vec __attribute__((vector_size(32)));
  typedef Vec (*Fn)(Vec);
  Vec v;
  __builtin_memcpy(&v, in, sizeof(v));
  const Vec r = reinterpret_cast<Fn>(fn)(v);
  __builtin_memcpy(out, &r, sizeof(r));
}
#endif

/// Vectorized<T>'s math function over `lanes` elements: Sleef's `fn` at
/// AVX512 or AVX2, libm's `scalar` at DEFAULT (vec_base.h: map(std::...)).
template <typename T>
inline void act_vector_math(
    int capability,
    const void* fn,
    T (*scalar)(T),
    const T* in,
    T* out,
    int64_t lanes) {
#if defined(SHIMGEN_ACT_X86)
  if (capability == 2) {
    act_sleef512<T>(fn, in, out);
    return;
  }
  if (capability == 1) {
    act_sleef256<T>(fn, in, out);
    return;
  }
#endif
  for (int64_t l = 0; l < lanes; ++l) {
    out[l] = scalar(in[l]);
  }
}

/// The Sleef symbol aten's Vectorized<T> calls for a math function at a
/// capability: `Sleef_<name><f|d><lanes>_u10`; nullptr at DEFAULT (libm).
template <typename T>
inline const void* act_sleef_symbol(int capability, const char* name) {
  if (capability <= 0) {
    return nullptr;
  }
  std::string symbol = "Sleef_";
  symbol += name;
  symbol += sizeof(T) == 4 ? "f" : "d";
  symbol += std::to_string(act_lanes<T>(capability));
  symbol += "_u10";
#if !defined(_WIN32)
  return dlsym(RTLD_DEFAULT, symbol.c_str());
#else
  return nullptr;
#endif
}

/// libm's functions, as aten's scalar lambdas call them (std::expm1 ... of T).
template <typename T>
inline T act_expm1(T x) {
  return std::expm1(x);
}

template <typename T>
inline T act_exp(T x) {
  return std::exp(x);
}

template <typename T>
inline T act_log1p(T x) {
  return std::log1p(x);
}

/// One activation's call: its input and output, its numbers (in T), its
/// vector functions (Sleef's, or nullptr at DEFAULT) and the capability.
template <typename T>
struct SHIMGEN_HIDDEN ActCall {
  const T* in;
  T* out;
  T c0;
  T c1;
  T c2;
  const void* fn0;
  const void* fn1;
  int capability;
};

/// elu's vectorized lambda on one vector (Elu.h
/// get_vectorized_elu_elementwise_func): `a >= 0 ? a * poscoef :
/// expm1(a * negiptcoef) * negcoef`, lanes where a is not >= 0 (NaN
/// included) by the vector expm1. c0 negcoef (alpha * scale in T), c1
/// poscoef, c2 negiptcoef.
template <typename T>
inline void elu_vector(const ActCall<T>& c, int64_t at, int64_t lanes) {
  std::array<T, 16> arg{};
  std::array<T, 16> e{};
  for (int64_t l = 0; l < lanes; ++l) {
    arg[l] = c.in[at + l] * c.c2;
  }
  act_vector_math<T>(c.capability, c.fn0, &act_expm1<T>, arg.data(), e.data(), lanes);
  for (int64_t l = 0; l < lanes; ++l) {
    const T a = c.in[at + l];
    c.out[at + l] = a >= T(0) ? a * c.c1 : e[l] * c.c0;
  }
}

/// elu's scalar lambda (get_scalar_elu_elementwise_func): `a < 0 ?
/// expm1(a * negiptcoef) * negcoef : a * poscoef`.
template <typename T>
inline void elu_scalar(const ActCall<T>& c, int64_t at) {
  const T a = c.in[at];
  c.out[at] = a < T(0) ? std::expm1(a * c.c2) * c.c0 : a * c.c1;
}

/// softplus's vectorized lambda: `(a * beta) > threshold ? a :
/// log1p(exp(a * beta)) / beta`, by the vector exp and log1p. c0 beta, c1
/// threshold.
template <typename T>
inline void softplus_vector(const ActCall<T>& c, int64_t at, int64_t lanes) {
  std::array<T, 16> arg{};
  std::array<T, 16> e{};
  std::array<T, 16> l1p{};
  for (int64_t l = 0; l < lanes; ++l) {
    arg[l] = c.in[at + l] * c.c0;
  }
  act_vector_math<T>(c.capability, c.fn0, &act_exp<T>, arg.data(), e.data(), lanes);
  act_vector_math<T>(c.capability, c.fn1, &act_log1p<T>, e.data(), l1p.data(), lanes);
  for (int64_t l = 0; l < lanes; ++l) {
    const T a = c.in[at + l];
    c.out[at + l] = arg[l] > c.c1 ? a : l1p[l] / c.c0;
  }
}

/// softplus's scalar lambda: `(a * beta) > threshold ? a :
/// log1p(exp(a * beta)) / beta`.
template <typename T>
inline void softplus_scalar(const ActCall<T>& c, int64_t at) {
  const T a = c.in[at];
  const T scaled = a * c.c0;
  c.out[at] = scaled > c.c1 ? a : std::log1p(std::exp(scaled)) / c.c0;
}

/// One chunk of aten's parallel_for, as vectorized_loop (Loops.h) computes
/// it: blocks of two vectors while 2 * lanes elements are left, then the
/// scalar lambda on the rest.
template <
    typename T,
    void (*Vector)(const ActCall<T>&, int64_t, int64_t),
    void (*Scalar1)(const ActCall<T>&, int64_t)>
inline void act_chunk(int64_t begin, int64_t end, void* ctx) {
  const ActCall<T>& c = *static_cast<const ActCall<T>*>(ctx);
  const int64_t lanes = act_lanes<T>(c.capability);
  const int64_t n = end - begin;
  int64_t i = 0;
  for (; i <= n - 2 * lanes; i += 2 * lanes) {
    Vector(c, begin + i, lanes);
    Vector(c, begin + i + lanes, lanes);
  }
  for (; i < n; ++i) {
    Scalar1(c, begin + i);
  }
}

/// May this section compute the activation on `self` as aten does? A dense
/// CPU tensor of float or double, contiguous, not a negative view (its
/// data would be read as it is stored), on x86-64 with a capability and the
/// Sleef symbols aten's kernel calls; and a call autograd does not record
/// (the caller refuses that one by name).
template <typename = void>
inline bool act_computes(const torch::stable::Tensor& self) {
  if (act_capability() < 0 || !self.is_cpu()) {
    return false;
  }
  const ScalarType t = self.scalar_type();
  if (t != ScalarType::Float && t != ScalarType::Double) {
    return false;
  }
  return self.is_contiguous();
}

/// Throws libtorch's own reason where a C shim call failed (failure_reason).
template <typename = void>
inline void act_check(AOTITorchError err) {
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
}

/// A contiguous tensor of self's sizes, dtype and device: aten's result of a
/// unary TensorIterator op on a contiguous self.
template <typename = void>
inline torch::stable::Tensor act_result(const torch::stable::Tensor& self) {
  const auto sizes = self.sizes();
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    strides[d] = step;
    step *= sizes[d] > 1 ? sizes[d] : 1;
  }
  int32_t dtype = 0;
  int32_t device_type = 0;
  act_check(aoti_torch_get_dtype(self.get(), &dtype));
  act_check(aoti_torch_get_device_type(self.get(), &device_type));
  AtenTensorHandle out = nullptr;
  act_check(aoti_torch_empty_strided(
      ndim, sizes.data(), strides.data(), dtype, device_type, 0, &out));
  return torch::stable::Tensor(out);
}

/// The activation's call refused: `why`, and the remedies.
[[noreturn]] inline void act_refuse(const char* op, const std::string& why) {
  std::string text = why;
  text += ": call it under no_grad where autograd records it, or define ";
  text += "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each ";
  text += "torch release)";
  fail(op, text.c_str());
}

/// The checks every activation of this section makes, in this order: a
/// number aten's kernel would convert to T (float or double) exactly and in
/// range, then the tensor (act_computes), then autograd (not recorded).
template <typename = void>
inline torch::stable::Tensor act_operand(
    const char* op,
    const torch::stable::Tensor& self,
    std::initializer_list<std::pair<const char*, const Scalar*>> numbers) {
  const ScalarType t = self.scalar_type();
  const int compute = position(t == ScalarType::Double ? t : ScalarType::Float);
  for (const auto& number : numbers) {
    if (!in_range(*number.second, compute)) {
      const std::string why = "out of the range of the dtype aten computes it in";
      refuse(op, number.first, *number.second, why);
    }
  }
  const torch::stable::Tensor x = dispatch_tensors<1>(
      "aten::resolve_neg", "", {torch::stable::detail::from(self)});
  if (!act_computes(x)) {
    std::string why = "computed only as aten's CPU kernel on a contiguous CPU ";
    why += "tensor of float or double on x86-64 (no libtorch route carries ";
    why += "the op's numbers); this call is not one";
    act_refuse(op, why);
  }
  if (records_grad({&self})) {
    std::string why = "autograd would record the call (grad mode, self ";
    why += "requires grad), and aten's derivative is not computed here";
    act_refuse(op, why);
  }
  return x;
}

/// The Sleef function aten's kernel calls at the capability, or a refusal
/// where the running libtorch does not export it.
template <typename T>
inline const void* act_symbol(const char* op, int capability, const char* name) {
  const void* fn = act_sleef_symbol<T>(capability, name);
  if (capability > 0 && fn == nullptr) {
    std::string why = "the running libtorch does not export Sleef's ";
    why += name;
    why += ", which aten's kernel calls";
    act_refuse(op, why);
  }
  return fn;
}

/// The activation over x into a new tensor: aten's chunks (torch_parallel_for,
/// grain 32768: serial below it or with one thread), each as act_chunk.
template <typename T>
inline torch::stable::Tensor act_run(
    const torch::stable::Tensor& x,
    ActCall<T>& call,
    void (*chunk)(int64_t, int64_t, void*)) {
  torch::stable::Tensor result = act_result(x);
  call.in = static_cast<const T*>(x.data_ptr());
  call.out = static_cast<T*>(result.data_ptr());
#if defined(TORCH_VERSION_2_10_0)
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  act_check(torch_parallel_for(0, x.numel(), 32768, chunk, &call));
#endif
#endif
  return result;
}

/// elu(self, alpha, scale, input_scale) as aten's CPU elu kernel (float and
/// double; act_operand's checks first).
template <typename T>
inline torch::stable::Tensor elu_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale) {
  const int capability = act_capability();
  const T negcoef = static_cast<T>(alpha.to_double()) * static_cast<T>(scale.to_double());
  const T poscoef = static_cast<T>(scale.to_double());
  const T negiptcoef = static_cast<T>(input_scale.to_double());
  const void* expm1 = act_symbol<T>(op, capability, "expm1");
  ActCall<T> call{nullptr, nullptr, negcoef, poscoef, negiptcoef, expm1, nullptr, capability};
  return act_run<T>(x, call, &act_chunk<T, &elu_vector<T>, &elu_scalar<T>>);
}

template <typename = void>
inline torch::stable::Tensor elu_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale) {
  const torch::stable::Tensor x = act_operand(
      op, self, {{"alpha", &alpha}, {"scale", &scale}, {"input_scale", &input_scale}});
  if (x.scalar_type() == ScalarType::Double) {
    return elu_typed<double>(op, x, alpha, scale, input_scale);
  }
  return elu_typed<float>(op, x, alpha, scale, input_scale);
}

/// softplus(self, beta, threshold) as aten's CPU softplus kernel (float and
/// double; act_operand's checks first).
template <typename T>
inline torch::stable::Tensor softplus_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const Scalar& beta,
    const Scalar& threshold) {
  const int capability = act_capability();
  const T b = static_cast<T>(beta.to_double());
  const T limit = static_cast<T>(threshold.to_double());
  const void* exp = act_symbol<T>(op, capability, "exp");
  const void* log1p = act_symbol<T>(op, capability, "log1p");
  ActCall<T> call{nullptr, nullptr, b, limit, T(0), exp, log1p, capability};
  return act_run<T>(x, call, &act_chunk<T, &softplus_vector<T>, &softplus_scalar<T>>);
}

template <typename = void>
inline torch::stable::Tensor softplus_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& beta,
    const Scalar& threshold) {
  const torch::stable::Tensor x =
      act_operand(op, self, {{"beta", &beta}, {"threshold", &threshold}});
  if (x.scalar_type() == ScalarType::Double) {
    return softplus_typed<double>(op, x, beta, threshold);
  }
  return softplus_typed<float>(op, x, beta, threshold);
}
