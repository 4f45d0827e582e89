// @needs out_inplace cpu_capability cpu_activation
// ---- kernel `vector_norm_cpu`: linalg_vector_norm with a real ord on a
// contiguous floating CPU tensor as aten's CPU norm kernel computes it, its
// reduction replicated ----
//
// aten's CPU linalg_vector_norm reduces through a TensorIterator with
// binary_kernel_reduce (ReduceOpsKernel.cpp norm_kernel_cpu_impl, Reduce.h):
// each output accumulates its elements one at a time in the accumulate type
// (float for float, bfloat16 and float16, double for double; with a `dtype`,
// the input is read as that dtype first), in the iterator's order, which for a
// contiguous tensor is memory order: NormZeroOps adds 1 for a nonzero,
// NormOneOps adds |x|, AbsMaxOps and AbsMinOps keep the larger and the lesser
// |x| (a NaN met is kept, the last one met winning), NormOps adds
// std::pow(|x|, p) and takes std::pow(sum, 1 / p) of each output's sum (p and
// 1 / p in the accumulate type). Where every reduced dim has size 1, aten
// takes |x| instead (the sum of one |x|). Outputs are computed
// apart (foreach_reduced_elt gives each thread whole outputs); a single
// output of 32768 elements or more is split by at::parallel_for into chunks,
// each accumulated from the identity, and the chunks' results combined in
// order. The chunks here are libtorch's own (torch_parallel_for, 2.10 on).
// A bfloat16 or float16 output is each float result rounded by the scalar
// conversion (NormOps<BFloat16 or Half, float>'s project).
// The operations are IEEE scalar ones, the same on any CPU, and libm's pow,
// which libtorch calls too. A complex ord, another dtype, layout or device,
// an empty tensor and a call autograd records are refused
// (vector_norm_refuse), never computed another way.

/// The reduction of one ord: 0 counts nonzeros, 1 sums |x|, 2 keeps the
/// largest |x| (ord inf), 3 the least (ord -inf), 4 sums |x| to the power p
/// (another ord).
template <typename T>
inline T norm_reduce(int kind, T acc, T x, T p) {
  const T a = std::abs(x);
  switch (kind) {
    case 0:
      return acc + (x == T(0) ? T(0) : T(1));
    case 1:
      return acc + a;
    case 2:
      return std::isnan(a) ? a : std::max(acc, a);
    case 3:
      return std::isnan(a) ? a : std::min(acc, a);
    default:
      return acc + std::pow(a, p);
  }
}

/// The reduction kind of a real ord (norm_reduce's).
template <typename = void>
inline int norm_kind(double p) {
  if (p == 0 || p == 1) {
    return static_cast<int>(p);
  }
  if (std::isinf(p)) {
    return p > 0 ? 2 : 3;
  }
  return 4;
}

/// Two partial results of one ord combined as aten combines its threads'.
template <typename T>
inline T norm_combine(int kind, T acc, T b) {
  if (kind <= 1 || kind == 4) {
    return acc + b;
  }
  if (std::isnan(b)) {
    return b;
  }
  return kind == 2 ? std::max(acc, b) : std::min(acc, b);
}

/// One chunk's partial result of a single output: its elements [begin, end).
template <typename T>
struct SHIMGEN_HIDDEN NormPartial {
  int64_t begin;
  int64_t end;
  T value;
};

/// One reduction of vector_norm_cpu: the input, the output, each output's
/// first element (`starts`, by output) and the reduced elements' offsets
/// from it (`offsets`, in aten's order), the ord's kind, identity, value and
/// root (1 / p, which kind 4 takes of each output's sum); the
/// chunks' partial results of a single output (`partials`, a slot per 16384
/// elements: aten's chunks are at least half its grain of 32768, so no two
/// begin in one slot).
template <typename T>
struct SHIMGEN_HIDDEN NormCall {
  const T* in;
  T* out;
  std::vector<int64_t> starts;
  std::vector<int64_t> offsets;
  int kind;
  T init;
  T p;
  T root;
  std::vector<NormPartial<T>> partials;
};

/// An output's result from its accumulated value (NormOps' project).
template <typename T>
inline T norm_project(const NormCall<T>& c, T acc) {
  return c.kind == 4 ? std::pow(acc, c.root) : acc;
}

/// Reduced elements [begin, end) of output `o` from `acc`, one at a time.
template <typename T>
inline T norm_run(
    const NormCall<T>& c,
    int64_t o,
    int64_t b,
    int64_t e,
    T acc) {
  const T* base = c.in + c.starts[static_cast<size_t>(o)];
  for (int64_t i = b; i < e; ++i) {
    const T x = base[c.offsets[static_cast<size_t>(i)]];
    acc = norm_reduce(c.kind, acc, x, c.p);
  }
  return acc;
}

/// Outputs [begin, end), each accumulated whole.
template <typename T>
inline void norm_outputs(int64_t begin, int64_t end, void* ctx) {
  NormCall<T>& c = *static_cast<NormCall<T>*>(ctx);
  const int64_t n = static_cast<int64_t>(c.offsets.size());
  for (int64_t o = begin; o < end; ++o) {
    c.out[o] = norm_project(c, norm_run(c, o, 0, n, c.init));
  }
}

/// One chunk of a single output, accumulated from the identity, into its
/// slot.
template <typename T>
inline void norm_chunk(int64_t begin, int64_t end, void* ctx) {
  NormCall<T>& c = *static_cast<NormCall<T>*>(ctx);
  const T partial = norm_run(c, 0, begin, end, c.init);
  c.partials[static_cast<size_t>(begin / 16384)] = {begin, end, partial};
}

/// The call refused: `why`, and the remedy.
template <typename = void>
inline void vector_norm_refuse(
    const char* op,
    const char* arg,
    const Scalar& ord,
    const std::string& why) {
  std::string text = "no libtorch route carries this ord; aten's CPU kernel";
  text += " is computed for a real ord on a contiguous floating CPU tensor";
  text += " outside autograd (from target 2.10), and ";
  text += why;
  text += ": define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for";
  text += " each torch release)";
  refuse(op, arg, ord, text);
}

/// The reduced dims of a `ndim`-dim tensor as aten takes `dim` (None or
/// empty: all), wrapped; false where aten would raise (out of range, twice).
/// Dims: the wrapper's optional int list (any type with has_value, size and
/// iteration).
template <typename Dims>
inline bool norm_dims(
    const Dims& dim,
    int64_t ndim,
    std::vector<bool>& reduced) {
  reduced.assign(static_cast<size_t>(ndim), false);
  if (!dim.has_value() || dim->size() == 0) {
    reduced.assign(static_cast<size_t>(ndim), true);
    return true;
  }
  for (const int64_t d : *dim) {
    const int64_t w = d < 0 ? d + ndim : d;
    if (w < 0 || w >= ndim || reduced[static_cast<size_t>(w)]) {
      return false;
    }
    reduced[static_cast<size_t>(w)] = true;
  }
  return true;
}

/// A new CPU tensor of these sizes and strides and dtype.
template <typename = void>
inline torch::stable::Tensor norm_empty(
    int64_t ndim,
    const int64_t* sizes,
    const int64_t* strides,
    int32_t dtype) {
  AtenTensorHandle h = nullptr;
  cpu_check(aoti_torch_empty_strided(
      ndim, sizes, strides, dtype, aoti_torch_device_type_cpu(), 0, &h));
  return torch::stable::Tensor(h);
}

/// The reduction over `reduced` of a contiguous `x` whose elements are `in`
/// (x's read as T), into a new contiguous tensor of dtype `dtype`, T's
/// (keepdim: reduced dims of size 1); `op`, the op called, is named where
/// libtorch's split is unlike aten's.
template <typename T>
inline torch::stable::Tensor norm_typed(
    const char* op,
    const torch::stable::Tensor& x,
    const T* in,
    int32_t dtype,
    const std::vector<bool>& reduced,
    bool keepdim,
    int kind,
    double p) {
  const auto sizes = x.sizes();
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = step;
    step *= sizes[static_cast<size_t>(d)];
  }
  NormCall<T> call;
  call.kind = kind;
  call.init = kind == 3 ? std::numeric_limits<T>::infinity() : T(0);
  call.p = static_cast<T>(p);
  call.root = T(1) / call.p;
  call.starts.assign(1, 0);
  call.offsets.assign(1, 0);
  std::vector<int64_t> out_sizes;
  for (int64_t d = 0; d < ndim; ++d) {
    const size_t k = static_cast<size_t>(d);
    std::vector<int64_t>& list = reduced[k] ? call.offsets : call.starts;
    std::vector<int64_t> grown;
    grown.reserve(list.size() * static_cast<size_t>(sizes[k]));
    for (const int64_t at : list) {
      for (int64_t i = 0; i < sizes[k]; ++i) {
        grown.push_back(at + i * strides[k]);
      }
    }
    list.swap(grown);
    if (!reduced[k] || keepdim) {
      out_sizes.push_back(reduced[k] ? 1 : sizes[k]);
    }
  }
  std::vector<int64_t> out_strides(out_sizes.size());
  step = 1;
  for (int64_t d = static_cast<int64_t>(out_sizes.size()) - 1; d >= 0; --d) {
    const int64_t size = out_sizes[static_cast<size_t>(d)];
    out_strides[static_cast<size_t>(d)] = step;
    step *= size > 1 ? size : 1;
  }
  torch::stable::Tensor result = norm_empty(
      static_cast<int64_t>(out_sizes.size()),
      out_sizes.data(),
      out_strides.data(),
      dtype);
  call.in = in;
  call.out = static_cast<T*>(result.data_ptr());
  const int64_t outputs = static_cast<int64_t>(call.starts.size());
  const int64_t n = static_cast<int64_t>(call.offsets.size());
  // every reduced dim of size 1: aten takes |x|, a sum of one |x|
  if (kind == 4 && n == 1) {
    call.kind = 1;
  }
  constexpr int64_t grain = 32768;
  if (outputs > 1 || n < grain || cpu_threads() == 1) {
    const int64_t rows = n > 0 ? grain / n : grain;
    cpu_parallel_for(0, outputs, rows > 1 ? rows : 1, &norm_outputs<T>, &call);
    return result;
  }
  const NormPartial<T> unset{-1, -1, call.init};
  call.partials.assign(static_cast<size_t>(n / 16384 + 1), unset);
  cpu_parallel_for(0, n, grain, &norm_chunk<T>, &call);
  // the chunks in order, which must tile the elements (else a slot was shared)
  std::vector<NormPartial<T>> chunks;
  for (const NormPartial<T>& part : call.partials) {
    if (part.begin >= 0) {
      chunks.push_back(part);
    }
  }
  int64_t next = 0;
  bool tiled = true;
  for (const NormPartial<T>& part : chunks) {
    tiled = tiled && part.begin == next;
    next = part.end;
  }
  if (!tiled || next != n) {
    fail(op, "libtorch's parallel_for split unlike aten's");
  }
  T total = chunks.size() == 1 ? chunks[0].value : call.init;
  if (chunks.size() > 1) {
    for (const NormPartial<T>& part : chunks) {
      total = norm_combine(kind, total, part.value);
    }
  }
  call.out[0] = norm_project(call, total);
  return result;
}

/// The elements of a contiguous float, bfloat16 (`narrow` 1) or float16
/// (`narrow` 2) tensor read as T, exactly, as aten converts them (a float16
/// NaN quieted).
template <typename T>
inline std::vector<T> norm_widened(const torch::stable::Tensor& x, int narrow) {
  const int64_t n = x.numel();
  std::vector<T> wide(static_cast<size_t>(n));
  if (narrow != 0) {
    const uint16_t* in = static_cast<const uint16_t*>(x.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      wide[static_cast<size_t>(i)] = static_cast<T>(act_widen(in[i], narrow));
    }
    return wide;
  }
  const float* in = static_cast<const float*>(x.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    wide[static_cast<size_t>(i)] = static_cast<T>(in[i]);
  }
  return wide;
}

/// A float result as bfloat16 (`narrow` 1) or float16 (`narrow` 2): each
/// element rounded to nearest even by aten's scalar conversion at the CPU's
/// capability, into a tensor of the same sizes and strides.
template <typename = void>
inline torch::stable::Tensor norm_narrowed(
    const torch::stable::Tensor& result,
    int narrow) {
  const auto sizes = result.sizes();
  const auto strides = result.strides();
  int32_t dtype = aoti_torch_dtype_float16();
  if (narrow == 1) {
    dtype = aoti_torch_dtype_bfloat16();
  }
  torch::stable::Tensor narrowed = norm_empty(
      static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype);
  const float* from = static_cast<const float*>(result.data_ptr());
  uint16_t* to = static_cast<uint16_t*>(narrowed.data_ptr());
  const int capability = cpu_capability();
  const int64_t n = result.numel();
  for (int64_t i = 0; i < n; ++i) {
    to[i] = act_narrow(from[i], narrow, capability, false);
  }
  return narrowed;
}

/// linalg_vector_norm(self, ord, dim, keepdim, dtype) for an ord no libtorch
/// route carries (`arg`: the number's name in the op called): aten's CPU
/// kernel replicated where this section computes it (see its heading), else
/// refused naming why.
template <typename Dims>
inline torch::stable::Tensor vector_norm_cpu(
    const char* op,
    const char* arg,
    const torch::stable::Tensor& self,
    const Scalar& ord,
    const Dims& dim,
    bool keepdim,
    std::optional<ScalarType> dtype) {
  if (ord.is_complex()) {
    vector_norm_refuse(op, arg, ord, "this ord is complex");
  }
  const double p = ord.to_double();
  const int kind = norm_kind(p);
  if (!cpu_parallel_available()) {
    vector_norm_refuse(op, arg, ord, "this build's target is below 2.10");
  }
  const ScalarType t = self.scalar_type();
  const int narrow = act_reduced(self);
  const bool wide = t == ScalarType::Float || t == ScalarType::Double;
  if (!self.is_cpu() || (narrow == 0 && !wide)) {
    vector_norm_refuse(op, arg, ord, "this tensor is not a floating CPU one");
  }
  // the result's dtype: the tensor's, or a wider floating one given
  const ScalarType into = dtype.has_value() ? *dtype : t;
  const bool to_float = into == ScalarType::Float && narrow != 0;
  const bool to_double = into == ScalarType::Double && t != ScalarType::Double;
  if (into != t && !to_float && !to_double) {
    vector_norm_refuse(
        op, arg, ord, "the dtype given is not the tensor's or a wider one");
  }
  const torch::stable::Tensor x = dispatch_tensors<1>(
      "aten::resolve_neg", "", {torch::stable::detail::from(self)});
  if (!x.is_contiguous() || x.numel() == 0) {
    vector_norm_refuse(op, arg, ord, "this tensor is not contiguous, or empty");
  }
  std::vector<bool> reduced;
  const int64_t ndim = static_cast<int64_t>(x.sizes().size());
  if (!norm_dims(dim, ndim, reduced)) {
    vector_norm_refuse(op, arg, ord, "`dim` names a dim out of range or twice");
  }
  if (records_grad({&self})) {
    std::string why = "autograd would record this call (call it under no_grad";
    why += " inside your op's kernel)";
    vector_norm_refuse(op, arg, ord, why);
  }
  if (into == ScalarType::Double) {
    const int32_t f64 = aoti_torch_dtype_float64();
    if (t == ScalarType::Double) {
      const double* in = static_cast<const double*>(x.data_ptr());
      return norm_typed<double>(op, x, in, f64, reduced, keepdim, kind, p);
    }
    const std::vector<double> in = norm_widened<double>(x, narrow);
    return norm_typed<double>(
        op, x, in.data(), f64, reduced, keepdim, kind, p);
  }
  const int32_t f32 = aoti_torch_dtype_float32();
  if (narrow == 0) {
    const float* in = static_cast<const float*>(x.data_ptr());
    return norm_typed<float>(op, x, in, f32, reduced, keepdim, kind, p);
  }
  const std::vector<float> in = norm_widened<float>(x, narrow);
  const torch::stable::Tensor result =
      norm_typed<float>(op, x, in.data(), f32, reduced, keepdim, kind, p);
  return into == t ? norm_narrowed(result, narrow) : result;
}

/// norm(self, p): aten's linalg_vector_norm(self, p) over every dim
/// (impl_func_norm), as vector_norm_cpu above.
template <typename = void>
inline torch::stable::Tensor vector_norm_cpu(
    const char* op,
    const char* arg,
    const torch::stable::Tensor& self,
    const Scalar& ord) {
  const std::optional<std::vector<int64_t>> all;
  return vector_norm_cpu(op, arg, self, ord, all, false, std::nullopt);
}

/// norm(self, p, dim, keepdim): aten's linalg_vector_norm(self, p, dim,
/// keepdim) (impl_func_norm; an empty dim is every dim), as vector_norm_cpu
/// above. List: the wrapper's int list (begin and end).
template <typename List>
inline torch::stable::Tensor vector_norm_cpu(
    const char* op,
    const char* arg,
    const torch::stable::Tensor& self,
    const Scalar& ord,
    const List& dim,
    bool keepdim) {
  const std::vector<int64_t> dims(dim.begin(), dim.end());
  const std::optional<std::vector<int64_t>> listed(dims);
  return vector_norm_cpu(op, arg, self, ord, listed, keepdim, std::nullopt);
}
