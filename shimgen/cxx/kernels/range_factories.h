// @needs legacy_shims compositions cpu_capability
// ---- kernels `arange_factory` / `range_factory`: aten's range factories as
// aten::cumsum of [start, step, step, ...], decided per number
// (shimgen/generate/routes/composition.py) ----

/// The least e >= 0 with x * 2^e a whole number (x finite; doubling is exact).
template <typename = void>
inline int binary_places(double x) {
  int e = 0;
  while (x != std::floor(x)) {
    x *= 2;
    ++e;
  }
  return e;
}

/// a - b (`sign` -1) or a + b (`sign` 1) in int64, false where it overflows.
template <typename = void>
inline bool int64_step(int64_t a, int64_t b, int sign, int64_t& r) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  if (sign < 0) {
    if ((b > 0 && a < lo + b) || (b < 0 && a > hi + b)) {
      return false;
    }
    r = a - b;
    return true;
  }
  if ((b > 0 && a > hi - b) || (b < 0 && a < lo - b)) {
    return false;
  }
  r = a + b;
  return true;
}

/// aten's bounds check (true: it raises) over the numbers as doubles.
template <typename = void>
inline bool range_check_fails(double start, double end, double step) {
  if (!(step > 0 || step < 0)) {
    return true;
  }
  if (!(std::isfinite(start) && std::isfinite(end))) {
    return true;
  }
  return !((step > 0 && end >= start) || (step < 0 && end <= start));
}

/// aten's bounds check (true: it raises) over the numbers as int64.
template <typename = void>
inline bool range_check_fails(int64_t start, int64_t end, int64_t step) {
  if (step == 0) {
    return true;
  }
  return !((step > 0 && end >= start) || (step < 0 && end <= start));
}

/// Why a range is refused, with the remedy (raises).
template <typename = void>
inline void range_refuse(
    const char* op,
    const char* arg,
    const Scalar& s,
    const std::string& why) {
  std::string text = why;
  text += "; define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for";
  text += " each torch release) for aten's own kernel";
  refuse(op, arg, s, text);
}

/// An empty 1-D tensor of `size` elements of dtype `t` on the device, made by
/// libtorch's aoti_torch_empty_strided.
template <typename = void>
inline torch::stable::Tensor empty_1d(
    int64_t size,
    ScalarType t,
    int32_t device_type,
    int32_t device_index) {
  const std::array<int64_t, 1> sizes{size};
  const std::array<int64_t, 1> strides{1};
  const int32_t dtype =
      torch::stable::detail::to<int32_t>(torch::stable::detail::from(t));
  AtenTensorHandle h = nullptr;
  check(
      aoti_torch_empty_strided(
          1,
          sizes.data(),
          strides.data(),
          dtype,
          device_type,
          device_index,
          &h),
      "aoti_torch_empty_strided");
  return torch::stable::Tensor(h);
}

/// The dtype aten's range factories give: the one given, else int64 for an
/// arange of integers and bools, else the default dtype.
template <typename = void>
inline ScalarType range_dtype(
    bool inclusive,
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    std::optional<ScalarType> dtype) {
  if (dtype.has_value()) {
    return dtype.value();
  }
  bool floats = start.is_floating_point();
  floats = floats || end.is_floating_point();
  floats = floats || step.is_floating_point();
  if (inclusive || floats) {
    return default_dtype();
  }
  return ScalarType::Long;
}

/// A floating dtype's significand bits and the binary places of its least
/// subnormal (0 and 0 for an integral dtype); false where aten's range kernels
/// take no such dtype (bool, complex, uint16+).
template <typename = void>
inline bool range_precision(ScalarType t, int& bits, int& places) {
  bits = 0;
  places = 0;
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      return true;
    case ScalarType::Half:
      bits = 11;
      places = 24;
      return true;
    case ScalarType::BFloat16:
      bits = 8;
      places = 133;
      return true;
    case ScalarType::Float:
      bits = 24;
      places = 149;
      return true;
    case ScalarType::Double:
      bits = 53;
      places = 1074;
      return true;
    default:
      return false;
  }
}

/// The number as a double (`d`) and as aten's accumulate type holds it
/// (`acc`): truncated to int64 (`whole`) for an integral dtype, rounded to
/// float for half and bfloat16 (`narrow`); refused where releases convert it
/// apart or aten rounds it.
template <typename = void>
inline void range_number(
    const char* op,
    const char* arg,
    const Scalar& s,
    bool integral,
    bool narrow,
    double& d,
    double& acc,
    int64_t& whole) {
  if (s.is_complex() || s.kind() == Scalar::Kind::UInt) {
    range_refuse(op, arg, s, "shimgen computes ranges of real int64 numbers");
  }
  d = s.to_double();
  if (integral) {
    constexpr double two63 = 9223372036854775808.0;
    const bool within = std::isfinite(d) && d > -two63 && d < two63;
    if (s.is_floating_point() && !within) {
      range_refuse(op, arg, s, "releases convert it to int64 apart");
    }
    whole = s.is_floating_point() ? static_cast<int64_t>(d) : s.to_int64();
    acc = static_cast<double>(whole);
    return;
  }
  if (!float_exact(s)) {
    range_refuse(op, arg, s, "aten rounds an integer beyond 2^53");
  }
  const double most = std::numeric_limits<float>::max();
  if (narrow && std::isfinite(d) && std::fabs(d) > most) {
    range_refuse(op, arg, s, "aten's float accumulate type cannot hold it");
  }
  acc = narrow ? static_cast<double>(static_cast<float>(d)) : d;
}

/// aten::range's number of elements, where releases agree (they size it in
/// the accumulate type or in double); -1 where they disagree or it overflows.
template <typename = void>
inline int64_t range_size(
    bool integral,
    bool narrow,
    const double* d,
    const double* acc,
    const int64_t* whole) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  constexpr double two63 = 9223372036854775808.0;
  double size_a = 0;
  if (integral) {
    int64_t diff = 0;
    if (!int64_step(whole[1], whole[0], -1, diff)) {
      return -1;
    }
    if ((whole[2] == -1 && diff == lo) || diff / whole[2] == hi) {
      return -1;
    }
    size_a = static_cast<double>(diff / whole[2] + 1);
  } else if (narrow) {
    const float fs = static_cast<float>(acc[0]);
    const float fe = static_cast<float>(acc[1]);
    const float ft = static_cast<float>(acc[2]);
    size_a = static_cast<double>((fe - fs) / ft + 1.0f);
  } else {
    size_a = (acc[1] - acc[0]) / acc[2] + 1;
  }
  const double size_d = (d[1] - d[0]) / d[2] + 1;
  bool fits = std::isfinite(size_a) && std::isfinite(size_d);
  fits = fits && size_a < two63 && size_d < two63;
  if (!fits) {
    return -1;
  }
  const int64_t size = static_cast<int64_t>(size_a);
  return size == static_cast<int64_t>(size_d) ? size : -1;
}

/// aten::arange's number of elements (an int64 arange counted in integers, or
/// in double on the releases that do so for non-integers), where releases
/// agree; -1 where they disagree or it overflows, -2 where aten raises.
template <typename = void>
inline int64_t arange_size(
    bool int64_dtype,
    bool integers,
    const double* d,
    const int64_t* whole) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr double two63 = 9223372036854775808.0;
  const double q = (d[1] - d[0]) / d[2];
  double size_d = std::isfinite(q) ? std::ceil(q) : q;
  if (int64_dtype) {
    const int64_t sgn = (whole[2] > 0) - (whole[2] < 0);
    int64_t diff = 0;
    int64_t partial = 0;
    int64_t num = 0;
    bool fits = int64_step(whole[1], whole[0], -1, diff);
    fits = fits && int64_step(diff, whole[2], 1, partial);
    fits = fits && int64_step(partial, sgn, -1, num);
    if (!fits || (num == lo && whole[2] == -1)) {
      return -1;
    }
    const double size_i = static_cast<double>(num / whole[2]);
    if (!integers && size_i != size_d) {
      return -1;
    }
    size_d = size_i;
  }
  if (!(size_d >= 0 && size_d <= two63)) {
    return -2;
  }
  return size_d < two63 ? static_cast<int64_t>(size_d) : -1;
}

/// Does no element of an int64 range overflow (|start| + (size - 1) * |step|
/// within 2^62)?
template <typename = void>
inline bool int64_range_fits(int64_t first, int64_t step, int64_t size) {
  constexpr uint64_t limit = uint64_t(1) << 62;
  uint64_t a0 = static_cast<uint64_t>(first);
  uint64_t a2 = static_cast<uint64_t>(step);
  if (first < 0) {
    a0 = uint64_t(0) - a0;
  }
  if (step < 0) {
    a2 = uint64_t(0) - a2;
  }
  if (a0 >= limit) {
    return false;
  }
  return size <= 1 || a2 <= (limit - a0) / uint64_t(size - 1);
}

/// Is every element of a floating range exact in the dtype (`bits`, `places`)
/// and in aten's arithmetic: start and step, scaled by the least power of two
/// that makes both whole, and every element, below 2^bits?
template <typename = void>
inline bool range_exact(
    double first,
    double step,
    int64_t size,
    int bits,
    int places) {
  const int e0 = binary_places(first);
  const int e2 = size > 1 ? binary_places(step) : 0;
  const int e = e0 > e2 ? e0 : e2;
  if (e > places) {
    return false;
  }
  const double s = std::ldexp(first, e);
  const double v = std::ldexp(step, e);
  const double n = static_cast<double>(size - 1);
  const double limit = std::ldexp(1.0, bits);
  if (std::fabs(s) >= limit) {
    return false;
  }
  if (size == 1) {
    return true;
  }
  bool exact = std::fabs(v) < limit && n < limit;
  exact = exact && n * std::fabs(v) < limit;
  return exact && std::fabs(s + n * v) < limit;
}

/// One arange of aten's CPU kernel (RangeFactoriesKernel.cpp arange_kernel):
/// where it writes, its numbers in its accumulate type (double for float and
/// double), its lanes and whether its form contracts a multiply-add.
template <typename T>
struct SHIMGEN_HIDDEN ArangeCall {
  T* out;
  double start;
  double step;
  int64_t lanes;
  bool fused;
};

/// One chunk of aten's parallel_for over an arange, as cpu_serial_kernel_vec
/// computes it: blocks of two vectors while 2 * lanes elements are left, each
/// Vectorized<T>::arange(start + step * idx, step) (its base rounded to T,
/// lane k base + k * step in double, then T), then the scalar lambda,
/// start + step * idx in double, on the rest.
template <typename T>
inline void arange_chunk(int64_t begin, int64_t end, void* ctx) {
  const ArangeCall<T>& c = *static_cast<const ArangeCall<T>*>(ctx);
  const int64_t n = end - begin;
  int64_t i = 0;
  for (; i <= n - 2 * c.lanes; i += 2 * c.lanes) {
    for (int64_t v = 0; v < 2 * c.lanes; v += c.lanes) {
      const int64_t at = begin + i + v;
      const double idx = static_cast<double>(at);
      const double base =
          static_cast<T>(cpu_mul_add(c.step, idx, c.start, c.fused));
      for (int64_t k = 0; k < c.lanes; ++k) {
        const double lane = static_cast<double>(k);
        const double sum = cpu_mul_add(lane, c.step, base, c.fused);
        c.out[at + k] = static_cast<T>(sum);
      }
    }
  }
  for (; i < n; ++i) {
    const double idx = static_cast<double>(begin + i);
    const double value = cpu_mul_add(c.step, idx, c.start, c.fused);
    c.out[begin + i] = static_cast<T>(value);
  }
}

/// Can arange_cpu compute this arange as aten's CPU kernel does? A float or
/// double range on the CPU, on x86-64 (a known capability), in a build with
/// libtorch's parallel_for (2.10 on).
template <typename = void>
inline bool arange_replicates(ScalarType t, int32_t device_type) {
  bool wide = t == ScalarType::Float || t == ScalarType::Double;
  wide = wide && device_type == aoti_torch_device_type_cpu();
  return wide && cpu_capability() >= 0 && cpu_parallel_available();
}

/// An arange of `size` elements of float or double as aten's CPU kernel
/// computes it (arange_replicates): aten's chunks (grain 32768), each as
/// arange_chunk at the capability whose kernel aten runs (arange has no
/// AVX512 form: AVX2's at AVX512, its multiply-adds fused; DEFAULT's rounds
/// each step; 32-byte vectors in both; measured on 2.9.1-2.15.0).
template <typename = void>
inline torch::stable::Tensor arange_cpu(
    int64_t size,
    double start,
    double step,
    ScalarType t) {
  const int32_t cpu = aoti_torch_device_type_cpu();
  torch::stable::Tensor result = empty_1d(size, t, cpu, -1);
  const int capability = cpu_capability();
  const bool fused = capability > 0;
  if (t == ScalarType::Double) {
    ArangeCall<double> call{nullptr, start, step, 0, fused};
    call.out = static_cast<double*>(result.data_ptr());
    call.lanes = cpu_lanes<double>(1);
    cpu_parallel_for(0, size, 32768, &arange_chunk<double>, &call);
    return result;
  }
  ArangeCall<float> call{nullptr, start, step, 0, fused};
  call.out = static_cast<float*>(result.data_ptr());
  call.lanes = cpu_lanes<float>(1);
  cpu_parallel_for(0, size, 32768, &arange_chunk<float>, &call);
  return result;
}

/// aten's range factories (`inclusive`: aten::range, whose end is included;
/// otherwise aten::arange) as aten::cumsum of [start, step, step, ...] in int64
/// (an integral dtype: the numbers truncated, as aten's int64 accumulate type
/// holds them) or float64, then aten::_to_copy to the dtype (range_dtype).
/// aten's checks and its number of elements are mirrored where every release
/// 2.9-2.15 computes them alike (they check in double or in the accumulate
/// type, and size an int64 arange in integers or in double); elsewhere the call
/// is refused. A floating dtype is served only where every element is exact in
/// it and in aten's arithmetic: aten's vectorized kernel rounds each vector's
/// first element before adding the steps, which no composition reproduces
/// (0.1 steps are refused, 0.25 steps are exact).
template <typename = void>
inline torch::stable::Tensor range_select(
    const char* op,
    bool inclusive,
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    std::optional<ScalarType> dtype,
    bool strided,
    bool pinned,
    int32_t device_type,
    int32_t device_index) {
  if (!strided || pinned) {
    fail(op, "shimgen computes strided, unpinned ranges only");
  }
  const ScalarType t = range_dtype(inclusive, start, end, step, dtype);
  int bits = 0;
  int places = 0;
  if (!range_precision(t, bits, places)) {
    fail(op, "shimgen computes ranges of integral and floating dtypes only");
  }
  const bool integral = bits == 0;
  const bool narrow = t == ScalarType::Half || t == ScalarType::BFloat16;
  const std::array<const char*, 3> names{"start", "end", "step"};
  const std::array<const Scalar*, 3> numbers{&start, &end, &step};
  double d[3] = {0, 0, 0};
  double acc[3] = {0, 0, 0};
  int64_t whole[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const Scalar& s = *numbers[i];
    range_number(op, names[i], s, integral, narrow, d[i], acc[i], whole[i]);
  }
  const bool fails = range_check_fails(d[0], d[1], d[2]);
  bool fails_acc = range_check_fails(acc[0], acc[1], acc[2]);
  if (integral) {
    fails_acc = range_check_fails(whole[0], whole[1], whole[2]);
  }
  if (fails != fails_acc) {
    std::string why = "releases check these bounds in double or in aten's";
    why += " accumulate type, which disagree here";
    range_refuse(op, "step", step, why);
  }
  if (fails) {
    fail(op, "step 0, start or end not finite, or a wrong sign (aten raises)");
  }
  if (std::isinf(d[2])) {
    range_refuse(op, "step", step, "releases answer an infinite step apart");
  }
  int64_t size = 0;
  if (inclusive) {
    size = range_size(integral, narrow, d, acc, whole);
  } else {
    bool integers = start.is_integral() && end.is_integral();
    integers = integers && step.is_integral();
    size = arange_size(t == ScalarType::Long, integers, d, whole);
  }
  if (size == -2) {
    fail(op, "aten raises: invalid size, possible overflow?");
  }
  if (size < 0) {
    std::string why = "releases size this range apart (in integers or in";
    why += " double, or in aten's accumulate type), or it overflows int64";
    range_refuse(op, "step", step, why);
  }
  if (size == 0) {
    return empty_1d(0, t, device_type, device_index);
  }
  Scalar first = Scalar(acc[0]);
  Scalar stride = Scalar(acc[2]);
  if (integral) {
    if (!int64_range_fits(whole[0], whole[2], size)) {
      range_refuse(op, "end", end, "an element of this range overflows int64");
    }
    first = Scalar(whole[0]);
    stride = Scalar(whole[2]);
  } else {
    const bool zero_start = acc[0] == 0 && std::signbit(acc[0]);
    const bool negative_zero = zero_start && acc[2] < 0;
    bool exact = range_exact(acc[0], acc[2], size, bits, places);
    exact = exact && !negative_zero;
    if (!exact && !inclusive && arange_replicates(t, device_type)) {
      return arange_cpu(size, acc[0], acc[2], t);
    }
    if (negative_zero) {
      std::string why = "aten's first element is -0.0 here (-0.0 + -0.0),";
      why += " which cumsum does not give";
      range_refuse(op, "step", step, why);
    }
    if (!exact) {
      std::string why = "an element of this range is not exact in the dtype,";
      why += " where aten's vectorized kernel rounds in its own way (computed";
      why += " as aten's CPU kernel for a float or double arange on an x86-64";
      why += " CPU from target 2.10; elsewhere use integers or power-of-two";
      why += " steps such as 0.25, or compute start + step * arange(n))";
      range_refuse(op, "step", step, why);
    }
  }
  const ScalarType work_t = integral ? ScalarType::Long : ScalarType::Double;
  const torch::stable::Tensor work =
      empty_1d(size, work_t, device_type, device_index);
  tensor_op("aten::fill_", "Tensor", work, number_tensor(stride, work_t));
  const torch::stable::Tensor head = dispatch_tensors<4>(
      "aten::narrow",
      "",
      {torch::stable::detail::from(work),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(int64_t(1))});
  tensor_op("aten::fill_", "Tensor", head, number_tensor(first, work_t));
  const torch::stable::Tensor sums = dispatch_tensors<3>(
      "aten::cumsum",
      "",
      {torch::stable::detail::from(work),
       torch::stable::detail::from(int64_t(0)),
       torch::stable::detail::from(std::optional<ScalarType>())});
  return to_dtype(sums, t);
}
