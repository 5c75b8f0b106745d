#include "bench/refit_model.h"

#include "absl/strings/str_cat.h"

namespace reshard::bench {
namespace {

void Add(ModelWeights& m, std::string name, std::vector<int64_t> shape,
         int layer, TpSplit tp, int expert = -1) {
  m.weights.push_back({std::move(name), std::move(shape), layer, expert, tp});
}

// DeepSeek-V3's MLA attention and norms of one layer.
void DeepSeekAttention(ModelWeights& m, int layer, const std::string& p) {
  constexpr int64_t kHidden = 7168, kHeads = 128;
  Add(m, p + "q_a_proj", {1536, kHidden}, layer, TpSplit::kReplicated);
  Add(m, p + "q_a_layernorm", {1536}, layer, TpSplit::kReplicated);
  Add(m, p + "q_b_proj", {kHeads * (128 + 64), 1536}, layer, TpSplit::kColumn);
  Add(m, p + "kv_a_proj_with_mqa", {512 + 64, kHidden}, layer,
      TpSplit::kReplicated);
  Add(m, p + "kv_a_layernorm", {512}, layer, TpSplit::kReplicated);
  Add(m, p + "kv_b_proj", {kHeads * (128 + 128), 512}, layer, TpSplit::kColumn);
  Add(m, p + "o_proj", {kHidden, kHeads * 128}, layer, TpSplit::kRow);
  Add(m, p + "input_layernorm", {kHidden}, layer, TpSplit::kReplicated);
  Add(m, p + "post_attention_layernorm", {kHidden}, layer,
      TpSplit::kReplicated);
}

void Mlp(ModelWeights& m, int layer, const std::string& p, int64_t hidden,
         int64_t inner) {
  Add(m, p + "gate_proj", {inner, hidden}, layer, TpSplit::kColumn);
  Add(m, p + "up_proj", {inner, hidden}, layer, TpSplit::kColumn);
  Add(m, p + "down_proj", {hidden, inner}, layer, TpSplit::kRow);
}

void Ends(ModelWeights& m, int64_t vocab, int64_t hidden) {
  Add(m, "embed_tokens", {vocab, hidden}, -1, TpSplit::kColumn);
  Add(m, "norm", {hidden}, m.layers, TpSplit::kReplicated);
  Add(m, "lm_head", {vocab, hidden}, m.layers, TpSplit::kColumn);
}

}  // namespace

int64_t ModelWeights::Parameters() const {
  int64_t n = 0;
  for (const ModelWeight& w : weights) {
    int64_t size = 1;
    for (int64_t e : w.shape) size *= e;
    n += size;
  }
  return n;
}

ModelWeights DeepSeekV3() {
  ModelWeights m{"DeepSeek-V3", 61, {}};
  constexpr int64_t kHidden = 7168;
  for (int layer = 0; layer < m.layers; ++layer) {
    const std::string p = absl::StrCat("layers.", layer, ".");
    DeepSeekAttention(m, layer, p + "attn.");
    if (layer < 3) {
      Mlp(m, layer, p + "mlp.", kHidden, 18432);
      continue;
    }
    Add(m, p + "mlp.gate", {256, kHidden}, layer, TpSplit::kReplicated);
    Mlp(m, layer, p + "mlp.shared_experts.", kHidden, 2048);
    for (int e = 0; e < 256; ++e) {
      // The intermediate dim (1) is what inference's TP splits.
      Add(m, absl::StrCat(p, "mlp.experts.", e), {3, 2048, kHidden}, layer,
          TpSplit::kRow, e);
    }
  }
  Ends(m, 129280, kHidden);
  return m;
}

ModelWeights Llama3_70B() {
  ModelWeights m{"LLaMA-3-70B", 80, {}};
  constexpr int64_t kHidden = 8192;
  for (int layer = 0; layer < m.layers; ++layer) {
    const std::string p = absl::StrCat("layers.", layer, ".");
    Add(m, p + "attn.q_proj", {64 * 128, kHidden}, layer, TpSplit::kColumn);
    Add(m, p + "attn.k_proj", {8 * 128, kHidden}, layer, TpSplit::kColumn);
    Add(m, p + "attn.v_proj", {8 * 128, kHidden}, layer, TpSplit::kColumn);
    Add(m, p + "attn.o_proj", {kHidden, 64 * 128}, layer, TpSplit::kRow);
    Mlp(m, layer, p + "mlp.", kHidden, 28672);
    Add(m, p + "input_layernorm", {kHidden}, layer, TpSplit::kReplicated);
    Add(m, p + "post_attention_layernorm", {kHidden}, layer,
        TpSplit::kReplicated);
  }
  Ends(m, 128256, kHidden);
  return m;
}

}  // namespace reshard::bench
