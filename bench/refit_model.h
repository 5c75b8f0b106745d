// Real models' weight lists and their training and inference layouts, for
// the refit model (refit_bench.cc, docs/DESIGN.md §9): every tensor a
// training job hands an inference job after each RL step.
//
// Configurations, as their published config.json files give them:
//  - DeepSeek-V3 (deepseek-ai/DeepSeek-V3, config.json): 61 layers, the
//    first 3 dense; hidden 7168; dense intermediate 18432; 256 routed
//    experts of intermediate 2048 and 1 shared expert per MoE layer; MLA
//    attention with 128 heads, q_lora_rank 1536, kv_lora_rank 512,
//    qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128; vocabulary
//    129280. About 671 B parameters.
//  - LLaMA-3-70B (meta-llama/Meta-Llama-3-70B, config.json): 80 layers;
//    hidden 8192; intermediate 28672; 64 heads, 8 KV heads of 128;
//    vocabulary 128256. About 70.6 B parameters.
// Weights are bf16; a routed expert is one tensor [3, 2048, 7168] (gate,
// up and down transposed), as one expert moves.
#ifndef RESHARD_BENCH_REFIT_MODEL_H_
#define RESHARD_BENCH_REFIT_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace reshard::bench {

// How inference's tensor parallelism splits a weight.
enum class TpSplit { kColumn, kRow, kReplicated };

struct ModelWeight {
  std::string name;
  std::vector<int64_t> shape;
  int layer = -1;   // -1: embedding; layers(): the head and final norm
  int expert = -1;  // a routed expert's index, else -1
  TpSplit tp = TpSplit::kReplicated;
};

struct ModelWeights {
  std::string model;
  int layers = 0;
  std::vector<ModelWeight> weights;
  int64_t Parameters() const;
};

ModelWeights DeepSeekV3();
ModelWeights Llama3_70B();

}  // namespace reshard::bench

#endif  // RESHARD_BENCH_REFIT_MODEL_H_
