// The batches the benchmarks move: parameter-like small tensors and a
// transformer layer's weights. One home, so that batch_bench (local Gloo ranks)
// and job_bench (a job's agents) measure the same tensors.
#ifndef RESHARD_BENCH_BATCH_TENSORS_H_
#define RESHARD_BENCH_BATCH_TENSORS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/core/tensor_spec.h"

namespace reshard {

// `count` parameter-like tensors of 4 KiB-256 KiB (log-uniform), bf16 and
// f32 alternating: rows of 64-wide norms/biases stacks and small
// projections. All 2-D, because S(0),R -> R,S(1) needs a second dim.
inline std::vector<TensorSpec> SmallParameters(int count) {
  constexpr double kKiB = 1024;
  std::mt19937_64 rng(14);
  std::vector<TensorSpec> out;
  for (int i = 0; i < count; ++i) {
    const DType dtype = i % 2 ? DType::kBFloat16 : DType::kFloat32;
    const double log_bytes = std::uniform_real_distribution<double>(
        std::log(4 * kKiB), std::log(256 * kKiB))(rng);
    const int64_t numel =
        static_cast<int64_t>(std::exp(log_bytes)) / ItemSize(dtype);
    const int64_t cols = i % 3 == 0 ? 64 : 256;
    out.push_back(
        *TensorSpec::Create({std::max<int64_t>(1, numel / cols), cols}, dtype));
  }
  return out;
}

// Eight 4096x4096 bf16 matrices (q, k, v, o, two MLP up, gate, down at the
// same size) and their 4096 bf16 biases.
inline std::vector<TensorSpec> TransformerLayer() {
  std::vector<TensorSpec> out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(*TensorSpec::Create({4096, 4096}, DType::kBFloat16));
    out.push_back(*TensorSpec::Create({4096}, DType::kBFloat16));
  }
  return out;
}

}  // namespace reshard

#endif  // RESHARD_BENCH_BATCH_TENSORS_H_
