// @needs out_inplace cpu_capability
// ---- kernel `cpu_activation`: elu, softplus, gelu's tanh form, pow and lerp
// with a number on contiguous CPU tensors as aten's own CPU kernel computes
// them, its loop replicated ----
//
// aten's CPU elu, softplus and gelu kernels (Activation.cpp, Elu.h, Gelu.h)
// run through cpu_kernel_vec on a TensorIterator: for a contiguous tensor the
// iterator is one dimension, split by at::parallel_for (grain 32768; gelu's
// its own) into chunks of the thread pool; each chunk computes blocks of
// 2 * Vectorized<T>::size() elements with the vectorized lambda, the rest
// with the scalar one. The kernel is the one of the CPU capability aten chose
// (DispatchStub: the environment's ATEN_CPU_CAPABILITY, else the CPU's
// features): AVX512 (16 floats, 8 doubles a vector), AVX2 (8, 4) or DEFAULT
// (8, 4, elementwise libm). Its vector math is Sleef's (Sleef_expm1f16_u10
// ...), which libtorch_cpu exports and this section looks up at run time
// (dlsym); its scalar math is libm's, called here as aten calls it. The
// chunks come from libtorch's own parallel_for (torch_parallel_for, 2.10
// on); each product, sum and selection is rounded in aten's order (gelu's one
// multiply-add fused where aten's kernel fuses it). Another layout, device,
// dtype or architecture is refused by the caller (act_computes), never
// computed another way.

#if defined(SHIMGEN_CPU_X86)
// The two callers of Sleef's vector functions are compiled for the ISA that
// passes their vectors in registers (zmm, ymm); nothing else is.
#if defined(__clang__)
#define SHIMGEN_ACT_ISA(isa) __attribute__((target(isa)))
#pragma clang attribute push(SHIMGEN_ACT_ISA("avx512f"), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
/// One call of Sleef's function `fn` on a 64-byte vector (zmm registers).
template <typename T>
inline void act_sleef512(void* fn, const T* in, T* out) {
  typedef T Vec __attribute__((vector_size(64)));
  typedef Vec (*Fn)(Vec);
  Vec v;
  __builtin_memcpy(&v, in, sizeof(v));
  const Vec r = reinterpret_cast<Fn>(fn)(v);
  __builtin_memcpy(out, &r, sizeof(r));
}

/// One call of Sleef's two-argument function `fn` on 64-byte vectors.
template <typename T>
inline void act_sleef512_2(void* fn, const T* a, const T* b, T* out) {
  typedef T Vec __attribute__((vector_size(64)));
  typedef Vec (*Fn)(Vec, Vec);
  Vec x;
  Vec y;
  __builtin_memcpy(&x, a, sizeof(x));
  __builtin_memcpy(&y, b, sizeof(y));
  const Vec r = reinterpret_cast<Fn>(fn)(x, y);
  __builtin_memcpy(out, &r, sizeof(r));
}
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(SHIMGEN_ACT_ISA("avx2"), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

/// One call of Sleef's function `fn` on a 32-byte vector (ymm registers).
template <typename T>
inline void act_sleef256(void* fn, const T* in, T* out) {
  typedef T Vec __attribute__((vector_size(32)));
  typedef Vec (*Fn)(Vec);
  Vec v;
  __builtin_memcpy(&v, in, sizeof(v));
  const Vec r = reinterpret_cast<Fn>(fn)(v);
  __builtin_memcpy(out, &r, sizeof(r));
}

/// One call of Sleef's two-argument function `fn` on 32-byte vectors.
template <typename T>
inline void act_sleef256_2(void* fn, const T* a, const T* b, T* out) {
  typedef T Vec __attribute__((vector_size(32)));
  typedef Vec (*Fn)(Vec, Vec);
  Vec x;
  Vec y;
  __builtin_memcpy(&x, a, sizeof(x));
  __builtin_memcpy(&y, b, sizeof(y));
  const Vec r = reinterpret_cast<Fn>(fn)(x, y);
  __builtin_memcpy(out, &r, sizeof(r));
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

/// Vectorized<T>'s math function over `lanes` elements: Sleef's `fn` at
/// AVX512 or AVX2, libm's `scalar` at DEFAULT (vec_base.h: map(std::...)).
template <typename T>
inline void act_vector_math(
    int capability,
    void* fn,
    T (*scalar)(T),
    const T* in,
    T* out,
    int64_t lanes) {
#if defined(SHIMGEN_CPU_X86)
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

/// Vectorized<T>'s two-argument math function over `lanes` elements: Sleef's
/// `fn` at AVX512 or AVX2, libm's `scalar` at DEFAULT (vec_base.h:
/// map2(std::...)).
template <typename T>
inline void act_vector_math2(
    int capability,
    void* fn,
    T (*scalar)(T, T),
    const T* a,
    const T* b,
    T* out,
    int64_t lanes) {
#if defined(SHIMGEN_CPU_X86)
  if (capability == 2) {
    act_sleef512_2<T>(fn, a, b, out);
    return;
  }
  if (capability == 1) {
    act_sleef256_2<T>(fn, a, b, out);
    return;
  }
#endif
  for (int64_t l = 0; l < lanes; ++l) {
    out[l] = scalar(a[l], b[l]);
  }
}

/// The Sleef symbol aten's Vectorized<T> calls for a math function at a
/// capability: `Sleef_<name><f|d><lanes>_u10`; nullptr at DEFAULT (libm).
template <typename T>
inline void* act_sleef_symbol(int capability, const char* name) {
  if (capability <= 0) {
    return nullptr;
  }
  std::string symbol = "Sleef_";
  symbol += name;
  symbol += sizeof(T) == 4 ? "f" : "d";
  symbol += std::to_string(cpu_lanes<T>(capability));
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

/// One activation's call: its input (and a second one, of a binary op) and
/// output, its numbers (in T, and one in double where a scalar lambda takes
/// it so), its vector functions (Sleef's, or nullptr at DEFAULT) and the
/// capability.
template <typename T>
struct SHIMGEN_HIDDEN ActCall {
  const T* in;
  T* out;
  T c0;
  T c1;
  T c2;
  double d0;
  void* fn0;
  void* fn1;
  int capability;
  const T* in2;
  const uint16_t* reduced_in;
  const uint16_t* reduced_in2;
  uint16_t* reduced_out;
  int reduced;
  void (*vector)(const ActCall<T>&, int64_t, int64_t);
  void (*scalar)(const ActCall<T>&, int64_t);
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
  act_vector_math<T>(
      c.capability, c.fn0, &act_expm1<T>, arg.data(), e.data(), lanes);
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
  act_vector_math<T>(
      c.capability, c.fn0, &act_exp<T>, arg.data(), e.data(), lanes);
  act_vector_math<T>(
      c.capability, c.fn1, &act_log1p<T>, e.data(), l1p.data(), lanes);
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
template <typename T>
inline void act_chunk(int64_t begin, int64_t end, void* ctx) {
  const ActCall<T>& c = *static_cast<const ActCall<T>*>(ctx);
  const int64_t lanes = cpu_lanes<T>(c.capability);
  const int64_t n = end - begin;
  int64_t i = 0;
  for (; i <= n - 2 * lanes; i += 2 * lanes) {
    c.vector(c, begin + i, lanes);
    c.vector(c, begin + i + lanes, lanes);
  }
  for (; i < n; ++i) {
    c.scalar(c, begin + i);
  }
}

/// A bfloat16 (reduced 1) or float16 (reduced 2) element as a float, exactly
/// (aten's convert_to_float and its scalar conversion agree on every value; a
/// float16 NaN is quieted, its payload kept).
template <typename = void>
inline float act_widen(uint16_t h, int reduced) {
  uint32_t w = static_cast<uint32_t>(h) << 16;
  if (reduced == 2) {
    const uint32_t sign = w & 0x80000000u;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    w = sign | (exponent + 112u) << 23 | mantissa << 13;
    if (exponent == 0x1fu) {
      w = sign | 0x7f800000u | mantissa << 13;
      w |= mantissa != 0 ? 0x400000u : 0u;
    }
    if (exponent == 0) {
      const float tiny = static_cast<float>(mantissa) * 0x1p-24f;
      return sign != 0 ? -tiny : tiny;
    }
  }
  float f = 0;
  std::memcpy(&f, &w, sizeof(f));
  return f;
}

/// A float rounded to float16 to nearest even: a NaN as c10::Half's software
/// conversion writes it (its sign, 0x7e00: DEFAULT), or as F16C's (vcvtps2ph
/// and vcvtss2sh: AVX512 and AVX2, vector and scalar) writes it, the top bits
/// of its payload kept (`keep`).
template <typename = void>
inline uint16_t act_half_bits(uint32_t w, bool keep) {
  const uint32_t sign = (w >> 16) & 0x8000u;
  const uint32_t bits = w & 0x7fffffffu;
  if (bits > 0x7f800000u) {
    const uint32_t payload = keep ? (bits >> 13) & 0x3ffu : 0u;
    return static_cast<uint16_t>(sign | 0x7e00u | payload);
  }
  if (bits >= 0x477ff000u) {
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (bits >= 0x38800000u) {
    const uint32_t r = bits - 0x38000000u;
    return static_cast<uint16_t>(sign | (r + 0xfffu + ((r >> 13) & 1u)) >> 13);
  }
  const uint32_t exponent = bits >> 23;
  if (exponent < 101u) {
    return static_cast<uint16_t>(sign);
  }
  const uint32_t mantissa = (bits & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exponent;
  uint32_t q = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (q & 1u) != 0)) {
    ++q;
  }
  return static_cast<uint16_t>(sign | q);
}

/// A float as bfloat16 (reduced 1) or float16 (reduced 2), rounded to nearest
/// even as aten rounds it at the capability: a bfloat16 NaN 0xffff by the
/// vector conversion of AVX512 and AVX2 (`vector`), 0x7fc0 by the scalar one
/// (c10::BFloat16's), which DEFAULT's vectors use too.
template <typename = void>
inline uint16_t act_narrow(float f, int reduced, int capability, bool vector) {
  uint32_t w = 0;
  std::memcpy(&w, &f, sizeof(w));
  if (reduced == 2) {
    return act_half_bits(w, capability > 0);
  }
  if ((w & 0x7fffffffu) > 0x7f800000u) {
    return vector ? 0xffffu : 0x7fc0u;
  }
  return static_cast<uint16_t>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}

/// One chunk of aten's parallel_for over a bfloat16 or float16 tensor, as
/// vectorized_loop computes it: blocks of two Vectorized<BFloat16 or Half>
/// (four float vectors) converted to float, computed by the float kernel's
/// vectorized lambda and converted back; the rest by the scalar lambda in
/// float, each result rounded by the scalar conversion.
template <typename T>
inline void act_chunk_reduced(int64_t begin, int64_t end, void* ctx) {
  const ActCall<T>& c = *static_cast<const ActCall<T>*>(ctx);
  const int64_t lanes = cpu_lanes<float>(c.capability);
  const int64_t block = 4 * lanes;
  const bool vector = c.capability > 0;
  const int kind = c.reduced;
  const int cap = c.capability;
  std::array<T, 64> wide{};
  std::array<T, 64> wide2{};
  std::array<T, 64> result{};
  ActCall<T> local = c;
  local.in = wide.data();
  local.in2 = wide2.data();
  local.out = result.data();
  const uint16_t* second = c.reduced_in2;
  const int64_t n = end - begin;
  int64_t i = 0;
  for (; i <= n - block; i += block) {
    for (int64_t l = 0; l < block; ++l) {
      wide[l] = act_widen(c.reduced_in[begin + i + l], kind);
      wide2[l] = second ? act_widen(second[begin + i + l], kind) : T(0);
    }
    for (int64_t v = 0; v < block; v += lanes) {
      c.vector(local, v, lanes);
    }
    for (int64_t l = 0; l < block; ++l) {
      const float r = static_cast<float>(result[l]);
      const uint16_t h = act_narrow(r, kind, cap, vector);
      c.reduced_out[begin + i + l] = h;
    }
  }
  for (; i < n; ++i) {
    wide[0] = act_widen(c.reduced_in[begin + i], kind);
    wide2[0] = second ? act_widen(second[begin + i], kind) : T(0);
    c.scalar(local, 0);
    const float r = static_cast<float>(result[0]);
    c.reduced_out[begin + i] = act_narrow(r, kind, cap, false);
  }
}

/// 1 for a bfloat16 tensor, 2 for a float16 one (computed in float), else 0.
template <typename = void>
inline int act_reduced(const torch::stable::Tensor& x) {
  const ScalarType t = x.scalar_type();
  return t == ScalarType::BFloat16 ? 1 : t == ScalarType::Half ? 2 : 0;
}

/// May this section compute the activation on `self` as aten does? A dense
/// CPU tensor of float, double, bfloat16 or float16, contiguous, not a
/// negative view (its data would be read as it is stored), on x86-64 with a
/// capability and the Sleef symbols aten's kernel calls; and a call autograd
/// does not record (the caller refuses that one by name).
template <typename = void>
inline bool act_computes(const torch::stable::Tensor& self) {
  if (cpu_capability() < 0 || !self.is_cpu()) {
    return false;
  }
  const ScalarType t = self.scalar_type();
  if (t != ScalarType::Float && t != ScalarType::Double && !act_reduced(self)) {
    return false;
  }
  return self.is_contiguous();
}

/// t with a negative view resolved, as aten reads it (a helper's input that
/// act_computes took before it resolved; refused should it resolve to a
/// strided tensor).
template <typename = void>
inline torch::stable::Tensor act_resolved(
    const char* op,
    const torch::stable::Tensor& t) {
  const torch::stable::Tensor x = dispatch_tensors<1>(
      "aten::resolve_neg", "", {torch::stable::detail::from(t)});
  if (!act_computes(x)) {
    fail(op, "a negative view that resolves to a strided tensor");
  }
  return x;
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
  cpu_check(aoti_torch_get_dtype(self.get(), &dtype));
  cpu_check(aoti_torch_get_device_type(self.get(), &device_type));
  AtenTensorHandle out = nullptr;
  cpu_check(aoti_torch_empty_strided(
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

/// A number aten's kernel converts to T (float, or double for a double
/// self): refused where it would not convert exactly and in range.
template <typename = void>
inline void act_number(
    const char* op,
    const char* name,
    const Scalar& s,
    const torch::stable::Tensor& self) {
  const bool wide = self.scalar_type() == ScalarType::Double;
  const int compute = position(wide ? ScalarType::Double : ScalarType::Float);
  if (!in_range(s, compute)) {
    const std::string why = "out of the range of the dtype aten computes in";
    refuse(op, name, s, why);
  }
}

/// The checks every activation of this section makes after its numbers'
/// (act_number): the tensor (act_computes, after resolving a negative view),
/// then autograd (not recorded); the tensor to compute on.
template <typename = void>
inline torch::stable::Tensor act_operand(
    const char* op,
    const torch::stable::Tensor& self) {
  const torch::stable::Tensor x = dispatch_tensors<1>(
      "aten::resolve_neg", "", {torch::stable::detail::from(self)});
  if (!act_computes(x)) {
    std::string why = "computed only as aten's CPU kernel on a contiguous CPU ";
    why += "tensor of a floating dtype on x86-64 (no libtorch route carries ";
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
inline void* act_symbol(const char* op, int capability, const char* name) {
  void* fn = act_sleef_symbol<T>(capability, name);
  if (capability > 0 && fn == nullptr) {
    std::string why = "the running libtorch does not export Sleef's ";
    why += name;
    why += ", which aten's kernel calls";
    act_refuse(op, why);
  }
  return fn;
}

/// The activation over x (and y, a binary op's second input of x's sizes and
/// dtype) into a new tensor: aten's chunks (torch_parallel_for with the
/// kernel's grain, 32768 unless it says otherwise: serial below it or with one
/// thread), each as act_chunk.
template <typename T>
inline torch::stable::Tensor act_run(
    const torch::stable::Tensor& x,
    ActCall<T>& call,
    int64_t grain = 32768,
    const torch::stable::Tensor* y = nullptr) {
  torch::stable::Tensor result = act_result(x);
  call.reduced = act_reduced(x);
  void (*chunk)(int64_t, int64_t, void*) = &act_chunk<T>;
  const void* second = y != nullptr ? y->data_ptr() : nullptr;
  if (call.reduced != 0) {
    call.reduced_in = static_cast<const uint16_t*>(x.data_ptr());
    call.reduced_in2 = static_cast<const uint16_t*>(second);
    call.reduced_out = static_cast<uint16_t*>(result.data_ptr());
    chunk = &act_chunk_reduced<T>;
  } else {
    call.in = static_cast<const T*>(x.data_ptr());
    call.in2 = static_cast<const T*>(second);
    call.out = static_cast<T*>(result.data_ptr());
  }
  cpu_parallel_for(0, x.numel(), grain, chunk, &call);
  return result;
}

/// elu(self, alpha, scale, input_scale) as aten's CPU elu kernel (float and
/// double; bfloat16 and float16 by the float kernel, aten's reduced-float
/// path; act_operand's checks first).
template <typename T>
inline torch::stable::Tensor elu_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale) {
  const int capability = cpu_capability();
  const T a = static_cast<T>(alpha.to_double());
  const T poscoef = static_cast<T>(scale.to_double());
  const T negcoef = a * poscoef;
  const T negiptcoef = static_cast<T>(input_scale.to_double());
  ActCall<T> call{};
  call.c0 = negcoef;
  call.c1 = poscoef;
  call.c2 = negiptcoef;
  call.fn0 = act_symbol<T>(op, capability, "expm1");
  call.capability = capability;
  call.vector = &elu_vector<T>;
  call.scalar = &elu_scalar<T>;
  return act_run<T>(x, call);
}

template <typename = void>
inline torch::stable::Tensor elu_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale) {
  act_number(op, "alpha", alpha, self);
  act_number(op, "scale", scale, self);
  act_number(op, "input_scale", input_scale, self);
  const torch::stable::Tensor x = act_operand(op, self);
  if (x.scalar_type() == ScalarType::Double) {
    return elu_typed<double>(op, x, alpha, scale, input_scale);
  }
  // float, and bfloat16 and float16 in float (act_run converts)
  return elu_typed<float>(op, x, alpha, scale, input_scale);
}

/// softplus(self, beta, threshold) as aten's CPU softplus kernel (float and
/// double; bfloat16 and float16 by the float kernel, aten's reduced-float
/// path; act_operand's checks first).
template <typename T>
inline torch::stable::Tensor softplus_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const Scalar& beta,
    const Scalar& threshold) {
  const int capability = cpu_capability();
  const T b = static_cast<T>(beta.to_double());
  const T limit = static_cast<T>(threshold.to_double());
  ActCall<T> call{};
  call.c0 = b;
  call.c1 = limit;
  call.fn0 = act_symbol<T>(op, capability, "exp");
  call.fn1 = act_symbol<T>(op, capability, "log1p");
  call.capability = capability;
  call.vector = &softplus_vector<T>;
  call.scalar = &softplus_scalar<T>;
  return act_run<T>(x, call);
}

template <typename = void>
inline torch::stable::Tensor softplus_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& beta,
    const Scalar& threshold) {
  act_number(op, "beta", beta, self);
  act_number(op, "threshold", threshold, self);
  const torch::stable::Tensor x = act_operand(op, self);
  if (x.scalar_type() == ScalarType::Double) {
    return softplus_typed<double>(op, x, beta, threshold);
  }
  return softplus_typed<float>(op, x, beta, threshold);
}

/// gelu's tanh approximation's argument, `kBeta * (x + kKappa * x^3)` (Gelu.h;
/// kBeta = M_SQRT2 * M_2_SQRTPI * 0.5 and kKappa = 0.044715 as doubles, then
/// T), rounded as aten's compiled kernel rounds it: the multiply-add fused at
/// AVX512 and AVX2 (those kernels are built with FMA, which the compiler
/// contracts, in the vectorized and the scalar lambda alike; measured on
/// 2.10-2.15), each step rounded at DEFAULT.
template <typename T>
inline T gelu_tanh_inner(T x, bool fused) {
  const T beta = static_cast<T>(0x1.9884533d43651p-1);
  const T kappa = static_cast<T>(0x1.6e4e26d4801f7p-5);
  const T cube = x * x * x;
  if (fused) {
    return beta * std::fma(kappa, cube, x);
  }
  return beta * (x + cpu_opaque(kappa * cube));
}

template <typename T>
inline T act_tanh(T x) {
  return std::tanh(x);
}

/// gelu(x, "tanh")'s vectorized lambda
/// (vectorized_gelu_approximated_with_tanh): `0.5 * x * (1 + tanh(inner))` by
/// the vector tanh.
template <typename T>
inline void gelu_tanh_vector(const ActCall<T>& c, int64_t at, int64_t lanes) {
  std::array<T, 16> inner{};
  std::array<T, 16> t{};
  for (int64_t l = 0; l < lanes; ++l) {
    inner[l] = gelu_tanh_inner(c.in[at + l], c.capability > 0);
  }
  act_vector_math<T>(
      c.capability, c.fn0, &act_tanh<T>, inner.data(), t.data(), lanes);
  // Of two NaN factors the product is the first operand of aten's multiply:
  // half in its float and double kernels, the sum (Sleef's tanh of a NaN is
  // all ones) in its reduced-float kernel at AVX512 and AVX2
  const bool sum_first = c.reduced != 0 && c.capability > 0;
  for (int64_t l = 0; l < lanes; ++l) {
    const T half = T(0.5) * c.in[at + l];
    const T sum = T(1) + t[l];
    const T first = sum_first ? sum : half;
    c.out[at + l] = std::isnan(first) ? first : half * sum;
  }
}

/// gelu(x, "tanh")'s scalar lambda (scalar_gelu_approximated_with_tanh).
template <typename T>
inline void gelu_tanh_scalar(const ActCall<T>& c, int64_t at) {
  const T x = c.in[at];
  const T half = T(0.5) * x;
  c.out[at] = half * (T(1) + std::tanh(gelu_tanh_inner(x, c.capability > 0)));
}

/// May gelu_tanh_cpu compute gelu(self, approximate) as aten::gelu does (the
/// wrapper asks only on a running libtorch before 2.14, whose dispatcher
/// would leak converting the str)? "tanh", a tensor act_computes takes, and a
/// call autograd does not record.
template <typename = void>
inline bool gelu_tanh_computes(
    const torch::stable::Tensor& self,
    std::string_view approximate) {
  return approximate == "tanh" && act_computes(self) && !records_grad({&self});
}

/// gelu_tanh_computes for gelu.out, whose out must be contiguous too: aten
/// computes into a strided out in that out's layout, whose loop this section
/// does not replicate (the dispatcher's call).
template <typename = void>
inline bool gelu_tanh_takes_out(
    const torch::stable::Tensor& out,
    const torch::stable::Tensor& self,
    std::string_view approximate) {
  return gelu_tanh_computes(self, approximate) && out.is_contiguous();
}

/// gelu(self, "tanh") as aten's CPU gelu kernel (gelu_tanh_computes said it
/// may): its chunks are parallel_for's with aten's grain (above 16,384
/// elements the numel over the thread count, else 32,768).
template <typename T>
inline torch::stable::Tensor gelu_tanh_typed(const torch::stable::Tensor& x) {
  const int capability = cpu_capability();
  ActCall<T> call{};
  call.fn0 = act_symbol<T>("gelu.default", capability, "tanh");
  call.capability = capability;
  const int64_t n = x.numel();
  const int64_t grain = n > 16384 ? n / cpu_threads() : 32768;
  call.vector = &gelu_tanh_vector<T>;
  call.scalar = &gelu_tanh_scalar<T>;
  return act_run<T>(x, call, grain);
}

template <typename = void>
inline torch::stable::Tensor gelu_tanh_cpu(const torch::stable::Tensor& self) {
  const torch::stable::Tensor x = act_resolved("gelu.default", self);
  if (x.scalar_type() == ScalarType::Double) {
    return gelu_tanh_typed<double>(x);
  }
  return gelu_tanh_typed<float>(x);
}

/// An out= overload's checks before it computes: aten's autograd rule for
/// out= (check_out_autograd), then a strided out refused: aten computes into
/// it in its own layout, whose loop takes other paths than the contiguous one
/// this section replicates.
template <typename = void>
inline void act_out_first(
    const char* op,
    const torch::stable::Tensor& out,
    const torch::stable::Tensor& self) {
  check_out_autograd(op, {&out, &self});
  if (!out.is_contiguous()) {
    std::string why = "out is not contiguous: aten computes into a strided ";
    why += "out in its own layout, whose loop this section does not ";
    why += "replicate; pass a contiguous out, or define SHIMGEN_OVERLAY and ";
    why += "link libshimgen_overlay (rebuilt for each torch release)";
    fail(op, why.c_str());
  }
}

/// May an out= overload compute its functional and write it into out? Every
/// input a contiguous CPU tensor of the first one's sizes, and out a CPU
/// tensor that is contiguous or of other sizes (aten resizes it, and
/// restrides it as the result): aten computes such a call in the
/// functional's very order (the same elements in its vectors and in its
/// scalar tail).
template <typename = void>
inline bool number_out_computes(
    const torch::stable::Tensor& out,
    std::initializer_list<const torch::stable::Tensor*> inputs) {
  const torch::stable::Tensor& first = **inputs.begin();
  for (const torch::stable::Tensor* t : inputs) {
    if (!t->is_cpu() || !t->is_contiguous() || !same_sizes(*t, first)) {
      return false;
    }
  }
  return out.is_cpu() && (out.is_contiguous() || !same_sizes(out, first));
}

/// An out= overload's result written into a contiguous out under aten's out=
/// rules (assign_out: same device, the result dtype out's where `same_dtype`
/// (the unary activations), else cast to out's where it casts (pow, lerp),
/// aten's resize and its warning, an overlap with any of `inputs` refused);
/// out that is self's very view is written as aten writes it, element by
/// element in place.
template <typename = void>
inline void assign_out_or_inplace(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& self,
    std::initializer_list<const torch::stable::Tensor*> inputs,
    const torch::stable::Tensor& result,
    bool same_dtype) {
  const bool same_data = out.data_ptr() == self.data_ptr();
  const bool same_type = out.scalar_type() == self.scalar_type();
  const bool same_view = same_data && same_type && same_sizes(out, self);
  if (same_view && self.is_contiguous()) {
    assign_inplace(op, out, result, {});
    return;
  }
  assign_out(op, out, result, inputs, same_dtype);
}

/// The result written into a contiguous out under aten's out= rules for a
/// unary activation (assign_out_or_inplace: out's dtype must be the
/// result's).
template <typename = void>
inline void act_assign_out(
    const char* op,
    torch::stable::Tensor& out,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& result) {
  assign_out_or_inplace(op, out, self, {&self}, result, true);
}

// pow(self, exponent) with an exponent aten's pow_tensor_scalar_kernel
// computes by its optimized loop (PowKernel.cpp): `x * x`, `x * x * x`,
// `1 / (x * x)` for 2, 3 and -2, else std::pow of each element and the
// exponent (Sleef's pow in the vectorized lambda, libm's in the scalar one:
// for a float tensor the exponent is a float in the vectors and a double in
// the scalar tail, as aten passes it). A bfloat16 tensor's exponent is first
// rounded to bfloat16, a float16 one's to float16 (float16 has no
// specialized path: std::pow for every exponent); each step of a product is
// rounded to the tensor's dtype, as aten's reduced-float arithmetic rounds
// it. Exponents 0.5, -0.5 and -1 of a float, double or bfloat16 tensor are
// aten's sqrt, rsqrt and reciprocal kernels, not computed here.

template <typename T>
inline T act_pow(T a, T b) {
  return std::pow(a, b);
}

/// v rounded to the call's reduced dtype (bfloat16 or float16) and back, as
/// aten's reduced-float arithmetic rounds each step; v itself otherwise.
template <typename T>
inline T act_step(const ActCall<T>& c, T v, bool vector) {
  if (c.reduced == 0) {
    return v;
  }
  const float f = static_cast<float>(v);
  const bool simd = vector && c.capability > 0;
  const uint16_t h = act_narrow(f, c.reduced, c.capability, simd);
  return static_cast<T>(act_widen(h, c.reduced));
}

/// pow's specialized products (c2: 1 `x * x`, 2 `x * x * x`, 3
/// `1 / (x * x)`, 4 one, 6 `1 / sqrt(x)`), each step rounded as aten rounds
/// it (a bfloat16 sqrt to bfloat16 in the scalar lambda and at DEFAULT); the
/// reciprocal of a float square in double, then float, in the scalar lambda
/// (its cast_scalar_t), a correctly rounded float division either way.
template <typename T>
inline T pow_product(const ActCall<T>& c, T x, bool vector) {
  const int kind = static_cast<int>(c.c2);
  if (kind == 4) {
    return T(1);
  }
  // bfloat16's rsqrt: its scalar sqrt, and DEFAULT's, rounds to bfloat16
  if (kind == 6) {
    const T root = std::sqrt(x);
    const bool simd = vector && c.capability > 0;
    return T(1) / (simd ? root : act_step(c, root, false));
  }
  const T square = x * x;
  if (kind == 1) {
    return square;
  }
  if (kind == 2) {
    return act_step(c, square, vector) * x;
  }
  const T rounded = act_step(c, square, vector);
  if (vector || c.reduced != 0) {
    return T(1) / rounded;
  }
  return static_cast<T>(1.0 / static_cast<double>(rounded));
}

/// pow's vectorized lambda on one vector: Sleef's pow of each element and
/// the exponent (c0), or the specialized product.
template <typename T>
inline void pow_vector(const ActCall<T>& c, int64_t at, int64_t lanes) {
  if (c.c2 != T(0)) {
    for (int64_t l = 0; l < lanes; ++l) {
      c.out[at + l] = pow_product(c, c.in[at + l], true);
    }
    return;
  }
  std::array<T, 16> exponent{};
  exponent.fill(c.c0);
  const T* in = c.in + at;
  act_vector_math2<T>(
      c.capability, c.fn0, &act_pow<T>, in, exponent.data(), c.out + at, lanes);
}

/// pow's scalar lambda: std::pow of the element and the exponent, a double
/// (d0) for a float or double tensor, the rounded exponent (c0) in float for
/// bfloat16 and float16; or the specialized product.
template <typename T>
inline void pow_scalar(const ActCall<T>& c, int64_t at) {
  const T x = c.in[at];
  if (c.c2 != T(0)) {
    c.out[at] = pow_product(c, x, false);
    return;
  }
  if (c.reduced != 0) {
    c.out[at] = std::pow(x, c.c0);
    return;
  }
  c.out[at] = static_cast<T>(std::pow(static_cast<double>(x), c.d0));
}

/// The path of aten's pow for `exponent` on a tensor of dtype t, and the
/// exponent as that path takes it (`value`): 4 ones and 5 a copy of the input
/// (pow_Tensor_Scalar_out's 0 and 1, before any kernel), then
/// pow_tensor_scalar_kernel's: 0 std::pow, 1 `x * x`, 2 `x * x * x`, 3
/// `1 / (x * x)`, 6 `1 / sqrt(x)` (-0.5 on bfloat16: aten's rsqrt kernel);
/// -1 where this section does not compute it (0.5 and -1, and -0.5 on float
/// and double: aten's sqrt, rsqrt and reciprocal kernels, the op's number
/// rules' calls; a
/// bool, complex or unsigned exponent; one a reduced dtype does not hold,
/// which aten refuses converting; an integer beyond 2^24 for a reduced
/// dtype, which aten converts through float).
template <typename = void>
inline int pow_kind(const Scalar& exponent, ScalarType t, double& value) {
  const bool integer = exponent.kind() == Scalar::Kind::Int;
  if (!integer && !exponent.is_floating_point()) {
    return -1;
  }
  const double e = exponent.to_double();
  value = e;
  if (e == 0.0 || e == 1.0) {
    return e == 0.0 ? 4 : 5;
  }
  const bool bf16 = t == ScalarType::BFloat16;
  const int reduced = bf16 ? 1 : t == ScalarType::Half ? 2 : 0;
  if (reduced != 0) {
    const double most = reduced == 1 ? 0x1.fep127 : 65504.0;
    const bool large = integer && std::fabs(e) > 16777216.0;
    if (large || (std::isfinite(e) && std::fabs(e) > most)) {
      return -1;
    }
    const float f = static_cast<float>(e);
    value = act_widen(act_narrow(f, reduced, 0, false), reduced);
    if (reduced == 2) {
      return 0;
    }
  }
  if (bf16 && e == -0.5) {
    return 6;
  }
  if (e == 0.5 || e == -0.5 || e == -1.0) {
    return -1;
  }
  if (value == 2.0) {
    return 1;
  }
  if (value == 3.0) {
    return 2;
  }
  return value == -2.0 ? 3 : 0;
}

/// May pow_cpu compute pow(self, exponent) as aten's CPU kernel does? An
/// exponent pow_kind takes, a tensor act_computes takes (from target 2.10,
/// whose libtorch runs parallel_for) and a call autograd does not record.
template <typename = void>
inline bool pow_cpu_computes(
    const torch::stable::Tensor& self,
    const Scalar& exponent) {
  if (!cpu_parallel_available() || !act_computes(self)) {
    return false;
  }
  double value = 0;
  const int kind = pow_kind(exponent, self.scalar_type(), value);
  return kind >= 0 && !records_grad({&self});
}

template <typename T>
inline torch::stable::Tensor pow_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const Scalar& exponent) {
  const int capability = cpu_capability();
  double value = 0;
  const int kind = pow_kind(exponent, x.scalar_type(), value);
  // aten copies the input, bit for bit
  if (kind == 5) {
    torch::stable::Tensor result = act_result(x);
    const size_t bytes = static_cast<size_t>(x.numel()) * x.element_size();
    std::memcpy(result.data_ptr(), x.data_ptr(), bytes);
    return result;
  }
  ActCall<T> call{};
  call.c0 = static_cast<T>(value);
  call.c2 = static_cast<T>(kind);
  call.d0 = value;
  if (kind == 0) {
    call.fn0 = act_symbol<T>(op, capability, "pow");
  }
  call.capability = capability;
  call.vector = &pow_vector<T>;
  call.scalar = &pow_scalar<T>;
  return act_run<T>(x, call);
}

/// pow(self, exponent) as aten's CPU pow kernel (pow_cpu_computes said it may;
/// bfloat16 and float16 by the float loop, aten's reduced-float path).
template <typename = void>
inline torch::stable::Tensor pow_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const Scalar& exponent) {
  const torch::stable::Tensor x = act_resolved(op, self);
  if (x.scalar_type() == ScalarType::Double) {
    return pow_typed<double>(op, x, exponent);
  }
  return pow_typed<float>(op, x, exponent);
}

// lerp(self, end, weight) (aten's lerp_scalar_kernel, Lerp.h; registered
// without an AVX512 kernel, so the AVX2 one runs there, measured: a bfloat16
// NaN is the vector conversion's in each block of 32, the scalar one's after):
// the weight in
// the tensors' dtype (as a float for bfloat16 and float16), each element in
// that dtype (float for the reduced ones): `self + weight * (end - self)`
// where |weight| < 0.5, else `end - (end - self) * (1 - weight)`, the vectors
// by fmadd(coeff, end - self, base) and the scalar lambda as the compiler
// contracts it: one fused rounding at AVX512 and AVX2, a product and a sum at
// DEFAULT; a reduced result rounded once to the tensor's dtype.

/// One element of lerp (`fused` at AVX512 and AVX2).
template <typename T>
inline T lerp_element(T self, T end, T weight, bool fused) {
  const T diff = end - self;
  const bool small = std::fabs(weight) < T(0.5);
  const T coeff = small ? weight : weight - T(1);
  const T base = small ? self : end;
  return cpu_mul_add(coeff, diff, base, fused);
}

template <typename T>
inline void lerp_vector(const ActCall<T>& c, int64_t at, int64_t lanes) {
  const bool fused = c.capability > 0;
  for (int64_t l = 0; l < lanes; ++l) {
    c.out[at + l] = lerp_element(c.in[at + l], c.in2[at + l], c.c0, fused);
  }
}

template <typename T>
inline void lerp_scalar(const ActCall<T>& c, int64_t at) {
  c.out[at] = lerp_element(c.in[at], c.in2[at], c.c0, c.capability > 0);
}

/// May lerp_cpu compute lerp(self, end, weight) as aten's CPU kernel does?
/// Tensors of one floating dtype and the same sizes, each one act_computes
/// takes (from target 2.10), a real weight the dtype aten converts it to
/// holds (it converts with a check), a call autograd does not record. A NaN
/// weight is not taken: which NaN aten's fused multiply-add returns is its
/// compiler's choice of operand order.
template <typename = void>
inline bool lerp_cpu_computes(
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& end,
    const Scalar& weight) {
  if (!cpu_parallel_available() || !act_computes(self)) {
    return false;
  }
  const bool same = end.scalar_type() == self.scalar_type();
  if (!same || !act_computes(end) || !same_sizes(self, end)) {
    return false;
  }
  const bool integer = weight.kind() == Scalar::Kind::Int;
  const bool real = integer || weight.is_floating_point();
  const double w = weight.to_double();
  const bool wide = self.scalar_type() == ScalarType::Double;
  const double most = std::numeric_limits<float>::max();
  const bool beyond = !wide && std::isfinite(w) && std::fabs(w) > most;
  if (!real || std::isnan(w) || beyond) {
    return false;
  }
  return !records_grad({&self, &end});
}

template <typename T>
inline torch::stable::Tensor lerp_typed(
    const torch::stable::Tensor& x,
    const torch::stable::Tensor& y,
    const Scalar& weight) {
  ActCall<T> call{};
  call.c0 = static_cast<T>(weight.to_double());
  // aten registers lerp's kernel for AVX2 and DEFAULT only: at AVX512 the
  // AVX2 kernel runs (its vectors, its blocks)
  call.capability = std::min(cpu_capability(), 1);
  call.vector = &lerp_vector<T>;
  call.scalar = &lerp_scalar<T>;
  return act_run<T>(x, call, 32768, &y);
}

/// lerp(self, end, weight) as aten's CPU lerp kernel (lerp_cpu_computes said
/// it may; a negative view read resolved, as aten reads it).
template <typename = void>
inline torch::stable::Tensor lerp_cpu(
    const char* op,
    const torch::stable::Tensor& self,
    const torch::stable::Tensor& end,
    const Scalar& weight) {
  const torch::stable::Tensor x = act_resolved(op, self);
  const torch::stable::Tensor y = act_resolved(op, end);
  if (x.scalar_type() == ScalarType::Double) {
    return lerp_typed<double>(x, y, weight);
  }
  return lerp_typed<float>(x, y, weight);
}
