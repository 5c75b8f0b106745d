#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "executor/backends/nccl/divide_kernel.h"

namespace reshard::executor {
namespace {

// IEEE round-to-nearest division for every type: __fdiv_rn and __ddiv_rn
// stay correctly rounded whatever the fast-math flags.
__device__ inline float Divide(float x, float d) { return __fdiv_rn(x, d); }
__device__ inline double Divide(double x, double d) { return __ddiv_rn(x, d); }
__device__ inline int32_t Divide(int32_t x, int32_t d) { return x / d; }
__device__ inline int64_t Divide(int64_t x, int64_t d) { return x / d; }
// Widened to float, divided, rounded to nearest even: float's 24 bits hold
// the quotient of two 16-bit floats exactly enough that rounding twice
// gives the correctly rounded 16-bit quotient.
__device__ inline __nv_bfloat16 Divide(__nv_bfloat16 x, float d) {
  return __float2bfloat16_rn(__fdiv_rn(__bfloat162float(x), d));
}
__device__ inline __half Divide(__half x, float d) {
  return __float2half_rn(__fdiv_rn(__half2float(x), d));
}

template <typename T, typename D>
__global__ void DivideKernel(T* data, int64_t count, D divisor) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < count; k += stride) {
    data[k] = Divide(data[k], divisor);
  }
}

template <typename T, typename D>
cudaError_t Launch(void* data, int64_t count, D divisor, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 4096;  // grid-stride beyond this
  int64_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  DivideKernel<T, D><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<T*>(data), count, divisor);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchDivide(DivideType type, void* data, int64_t count,
                         int64_t divisor, cudaStream_t stream) {
  if (count <= 0 || divisor == 1) return cudaSuccess;
  switch (type) {
    case DivideType::kFloat32:
      return Launch<float>(data, count, static_cast<float>(divisor), stream);
    case DivideType::kFloat64:
      return Launch<double>(data, count, static_cast<double>(divisor), stream);
    case DivideType::kBFloat16:
      return Launch<__nv_bfloat16>(data, count, static_cast<float>(divisor),
                                   stream);
    case DivideType::kFloat16:
      return Launch<__half>(data, count, static_cast<float>(divisor), stream);
    case DivideType::kInt32:
      return Launch<int32_t>(data, count, static_cast<int32_t>(divisor),
                             stream);
    case DivideType::kInt64:
      return Launch<int64_t>(data, count, divisor, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace reshard::executor
