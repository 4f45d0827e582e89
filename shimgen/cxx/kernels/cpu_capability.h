// ---- kernel `cpu_capability`: what a replicated aten CPU kernel asks of the
// process: the CPU capability aten chose, its vector widths, libtorch's
// threads and parallel_for ----
//
// aten compiles each CPU kernel once per capability and picks one per process
// (DispatchStub: the environment's ATEN_CPU_CAPABILITY, else the CPU's
// features): AVX512 (64-byte vectors), AVX2 (32) or DEFAULT (32, elementwise).
// A kernel registered without ALSO_REGISTER_AVX512_DISPATCH runs its AVX2 form
// at AVX512. The AVX512 and AVX2 forms are built with FMA, which the compiler
// contracts a * b + c into; the DEFAULT form rounds each step. A section
// replicating a kernel takes its chunks from libtorch's own parallel_for
// (torch_parallel_for, 2.10 on), so they are aten's.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(_WIN32)
#define SHIMGEN_CPU_X86 1
#endif

/// aten's CPU capability in this process, as DispatchStub computes it once:
/// 2 AVX512, 1 AVX2, 0 DEFAULT; -1 where this section cannot tell (not
/// x86-64 with GCC or clang). ATEN_CPU_CAPABILITY "avx512", "avx2" or
/// "default" chooses; another value is ignored (aten warns) for the CPU's
/// features: AVX512 with avx512vl, avx512bw, avx512dq and fma, AVX2 with
/// avx2 and fma.
template <typename = void>
inline int cpu_capability_now() {
#if defined(SHIMGEN_CPU_X86)
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
#else
  return -1;
#endif
}

/// cpu_capability_now(), asked once (aten's choice is made once a process).
template <typename = void>
inline int cpu_capability() {
  static const int capability = cpu_capability_now();
  return capability;
}

/// Lanes of Vectorized<T> at a capability (64 or 32 bytes a vector).
template <typename T>
inline int64_t cpu_lanes(int capability) {
  const int64_t bytes = capability == 2 ? 64 : 32;
  return bytes / static_cast<int64_t>(sizeof(T));
}

/// A value the compiler cannot see through (an empty asm holding it in an SSE
/// register): the product it holds is rounded before the addition that
/// follows, even where the extension is built with FMA and contraction.
template <typename T>
inline T cpu_opaque(T v) {
#if defined(SHIMGEN_CPU_X86)
  asm volatile("" : "+x"(v));
#endif
  return v;
}

/// a * b + c as aten's compiled kernel rounds it: one rounding where its
/// form contracts the multiply-add (`fused`), else the product rounded first.
template <typename T>
inline T cpu_mul_add(T a, T b, T c, bool fused) {
  return fused ? std::fma(a, b, c) : cpu_opaque(a * b) + c;
}

/// Throws libtorch's own reason where a C shim call failed (failure_reason).
template <typename = void>
inline void cpu_check(AOTITorchError err) {
  if (err != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(failure_reason());
  }
}

/// libtorch's thread count (at::get_num_threads; 1 in a build below 2.10).
template <typename = void>
inline int64_t cpu_threads() {
  uint32_t threads = 1;
#if defined(TORCH_VERSION_2_10_0)
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  cpu_check(torch_get_num_threads(&threads));
#endif
#endif
  return static_cast<int64_t>(threads);
}

/// Can this build run cpu_parallel_for (libtorch's parallel_for, 2.10 on)?
template <typename = void>
inline bool cpu_parallel_available() {
  bool available = false;
#if defined(TORCH_VERSION_2_10_0)
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  available = true;
#endif
#endif
  return available;
}

/// `chunk` over [begin, end) in aten's chunks: libtorch's at::parallel_for
/// with `grain` (serial below it or with one thread). A build below 2.10 has
/// none (cpu_parallel_available): its callers refuse before.
template <typename = void>
inline void cpu_parallel_for(
    int64_t begin,
    int64_t end,
    int64_t grain,
    void (*chunk)(int64_t, int64_t, void*),
    void* ctx) {
  // a build below 2.10 has no parallel_for to pass these to
  static_cast<void>(begin);
  static_cast<void>(end);
  static_cast<void>(grain);
  static_cast<void>(chunk);
  static_cast<void>(ctx);
#if defined(TORCH_VERSION_2_10_0)
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
  cpu_check(torch_parallel_for(begin, end, grain, chunk, ctx));
#endif
#endif
}
