#include "executor/run/element_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace reshard::executor {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The loops below are built twice, for AVX2 and for the baseline x86-64,
// and the loader picks one for the machine (GCC's target_clones): twice
// the width where AVX2 exists, without requiring it.
#define RESHARD_VECTOR_LOOP __attribute__((target_clones("avx2", "default")))

// op(a, b) for one element; `kOp` is a template argument so that each
// reduction's loop holds no branch and vectorizes (element_ops.cc is built
// with -O3: executor/CMakeLists.txt).
template <ReduceOp kOp, typename T>
T Combine(T a, T b) {
  if constexpr (kOp == ReduceOp::kMax) {
    return std::max(a, b);
  } else if constexpr (kOp == ReduceOp::kMin) {
    return std::min(a, b);
  } else if constexpr (std::is_integral_v<T>) {
    // Integer sums wrap modulo 2^n (as NCCL's do); padding bytes may hold
    // anything, and signed overflow must not be undefined.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}

template <ReduceOp kOp, typename T>
RESHARD_VECTOR_LOOP void ReduceTyped(void* out, const void* a, const void* b,
                                     int64_t count) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (int64_t k = 0; k < count; ++k) o[k] = Combine<kOp>(x[k], y[k]);
}

// 16-bit floats: combine in float, round once per element.
template <ReduceOp kOp, float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
RESHARD_VECTOR_LOOP void ReduceHalf(void* out, const void* a, const void* b,
                                    int64_t count) {
  uint16_t* o = static_cast<uint16_t*>(out);
  const uint16_t* x = static_cast<const uint16_t*>(a);
  const uint16_t* y = static_cast<const uint16_t*>(b);
  for (int64_t k = 0; k < count; ++k) {
    o[k] = Narrow(Combine<kOp>(Widen(x[k]), Widen(y[k])));
  }
}

template <typename T>
RESHARD_VECTOR_LOOP void DivideTyped(void* x, int64_t count, int64_t divisor) {
  T* v = static_cast<T*>(x);
  const T d = static_cast<T>(divisor);
  for (int64_t k = 0; k < count; ++k) v[k] = v[k] / d;
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
RESHARD_VECTOR_LOOP void DivideHalf(void* x, int64_t count, int64_t divisor) {
  uint16_t* v = static_cast<uint16_t*>(x);
  const float d = static_cast<float>(divisor);
  for (int64_t k = 0; k < count; ++k) v[k] = Narrow(Widen(v[k]) / d);
}

template <ReduceOp kOp>
void ReduceByType(DType dtype, void* out, const void* a, const void* b,
                  int64_t count) {
  switch (dtype) {
    case DType::kFloat32:
      return ReduceTyped<kOp, float>(out, a, b, count);
    case DType::kFloat64:
      return ReduceTyped<kOp, double>(out, a, b, count);
    case DType::kInt32:
      return ReduceTyped<kOp, int32_t>(out, a, b, count);
    case DType::kInt64:
      return ReduceTyped<kOp, int64_t>(out, a, b, count);
    case DType::kBFloat16:
      return ReduceHalf<kOp, BFloat16ToFloat, FloatToBFloat16>(out, a, b,
                                                               count);
    case DType::kFloat16:
      return ReduceHalf<kOp, Float16ToFloat, FloatToFloat16>(out, a, b, count);
  }
}

}  // namespace

float BFloat16ToFloat(uint16_t bits) {
  return BitsFloat(static_cast<uint32_t>(bits) << 16);
}

// Round to nearest even, a NaN kept a (quiet) NaN; a select, not a branch,
// so that reductions over bfloat16 vectorize.
uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  const uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x40;
  const bool nan = (bits & 0x7fffffff) > 0x7f800000;
  return static_cast<uint16_t>(nan ? quiet_nan : rounded);
}

float Float16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return BitsFloat(sign | 0x7f800000 | (mantissa << 13));
  return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToFloat16(float value) {
  uint32_t magnitude = FloatBits(value) & 0x7fffffff;
  const uint16_t sign =
      static_cast<uint16_t>((FloatBits(value) >> 16) & 0x8000);
  if (magnitude > 0x7f800000) return sign | 0x7e00;   // NaN
  if (magnitude >= 0x477ff000) return sign | 0x7c00;  // rounds to infinity
  if (magnitude < 0x38800000) {  // below 2^-14: a subnormal half (or zero)
    const float scaled = BitsFloat(magnitude) * 16777216.0f;  // exact
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  magnitude += 0xfff + ((magnitude >> 13) & 1);  // round to nearest even
  magnitude -= 112u << 23;                       // exponent bias 127 -> 15
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

void ReduceElements(DType dtype, ReduceOp op, void* out, const void* a,
                    const void* b, int64_t count) {
  switch (op) {
    case ReduceOp::kMax:
      return ReduceByType<ReduceOp::kMax>(dtype, out, a, b, count);
    case ReduceOp::kMin:
      return ReduceByType<ReduceOp::kMin>(dtype, out, a, b, count);
    case ReduceOp::kSum:
    case ReduceOp::kAvg:  // reduced as a sum, divided afterwards
      return ReduceByType<ReduceOp::kSum>(dtype, out, a, b, count);
  }
}

void DivideElements(DType dtype, void* x, int64_t count, int64_t divisor) {
  if (divisor == 1) return;
  switch (dtype) {
    case DType::kFloat32:
      return DivideTyped<float>(x, count, divisor);
    case DType::kFloat64:
      return DivideTyped<double>(x, count, divisor);
    case DType::kInt32:
      return DivideTyped<int32_t>(x, count, divisor);
    case DType::kInt64:
      return DivideTyped<int64_t>(x, count, divisor);
    case DType::kBFloat16:
      return DivideHalf<BFloat16ToFloat, FloatToBFloat16>(x, count, divisor);
    case DType::kFloat16:
      return DivideHalf<Float16ToFloat, FloatToFloat16>(x, count, divisor);
  }
}

void StoreInteger(DType dtype, void* buffer, int64_t index, int64_t value) {
  switch (dtype) {
    case DType::kFloat32:
      static_cast<float*>(buffer)[index] = static_cast<float>(value);
      return;
    case DType::kFloat64:
      static_cast<double*>(buffer)[index] = static_cast<double>(value);
      return;
    case DType::kInt32:
      static_cast<int32_t*>(buffer)[index] = static_cast<int32_t>(value);
      return;
    case DType::kInt64:
      static_cast<int64_t*>(buffer)[index] = value;
      return;
    case DType::kBFloat16:
      static_cast<uint16_t*>(buffer)[index] =
          FloatToBFloat16(static_cast<float>(value));
      return;
    case DType::kFloat16:
      static_cast<uint16_t*>(buffer)[index] =
          FloatToFloat16(static_cast<float>(value));
      return;
  }
}

double LoadValue(DType dtype, const void* buffer, int64_t index) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<const float*>(buffer)[index];
    case DType::kFloat64:
      return static_cast<const double*>(buffer)[index];
    case DType::kInt32:
      return static_cast<const int32_t*>(buffer)[index];
    case DType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(buffer)[index]);
    case DType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(buffer)[index]);
    case DType::kFloat16:
      return Float16ToFloat(static_cast<const uint16_t*>(buffer)[index]);
  }
  return 0;
}

}  // namespace reshard::executor
