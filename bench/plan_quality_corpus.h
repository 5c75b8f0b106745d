// The corpus of bench/plan_quality_bench.cc: redistributions a training or
// RL framework does on 8 ranks of two hosts, drawn from a seed and
// committed (bench/data/plan_quality_corpus.tsv) before anything is
// measured. Two meshes, the outermost dim across the hosts: dp x tp
// (dp=2,tp=4, dp and tp flattened) and HSDP x tp (dpr=2,dps=2,tp=2, the dp
// dims flattened, and dps with tp). Weights of 1-32 MiB, some uneven, bf16
// and f32, between the layouts those meshes use.
#ifndef RESHARD_BENCH_PLAN_QUALITY_CORPUS_H_
#define RESHARD_BENCH_PLAN_QUALITY_CORPUS_H_

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace reshard::bench {

struct CorpusMesh {
  std::string name;
  std::vector<std::string> flags;  // --mesh and --flatten, as reshardctl
};

inline const std::vector<CorpusMesh>& CorpusMeshes() {
  static const std::vector<CorpusMesh> meshes = {
      {"dp_tp", {"--mesh", "dp=2,tp=4", "--flatten", "dp,tp"}},
      {"hsdp_tp",
       {"--mesh", "dpr=2,dps=2,tp=2", "--flatten", "dpr,dps", "--flatten",
        "dps,tp"}},
  };
  return meshes;
}

struct CorpusRequest {
  int id = 0;
  std::string mesh;
  std::vector<int64_t> shape;
  std::string dtype;
  std::string from;
  std::string to;
};

// Layout changes per mesh: FSDP/TP weights gathered for inference or
// resharded to another TP layout, gradients reduced.
inline std::vector<std::pair<std::string, std::string>> Transitions(
    const std::string& mesh) {
  if (mesh == "dp_tp") {
    return {{"S(0),S(1)", "R,R"},       {"S(0),S(1)", "R,S(1)"},
            {"P(sum),P(sum)", "R,R"},   {"P(sum),S(1)", "S(0),S(1)"},
            {"S(0),S(0)", "R,R"},       {"P(sum),P(sum)", "S(0),S(0)"},
            {"S(0),S(1)", "S(1),S(0)"}, {"P(sum),R", "S(0),S(1)"}};
  }
  return {
      {"S(0),S(0),S(1)", "R,R,R"},        {"S(0),S(0),S(1)", "R,R,S(1)"},
      {"P(sum),P(sum),R", "R,R,R"},       {"P(sum),P(sum),S(1)", "R,R,S(1)"},
      {"S(0),S(0),S(0)", "R,R,R"},        {"P(sum),P(sum),P(sum)", "R,R,R"},
      {"P(sum),P(sum),R", "S(0),S(0),R"}, {"S(0),S(0),R", "R,R,S(0)"}};
}

// `count` requests drawn from `seed`.
inline std::vector<CorpusRequest> MakeCorpus(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  std::vector<CorpusRequest> corpus;
  for (int i = 0; i < count; ++i) {
    CorpusRequest r;
    r.id = i;
    r.mesh = CorpusMeshes()[pick(2)].name;
    const auto transitions = Transitions(r.mesh);
    std::tie(r.from, r.to) = transitions[pick(transitions.size())];
    r.dtype = pick(2) == 0 ? "bf16" : "f32";
    const int64_t item = r.dtype == "bf16" ? 2 : 4;
    const int64_t mib = int64_t{1} << pick(6);  // 1 .. 32 MiB
    const int64_t cols = int64_t{512} << pick(4);
    int64_t rows = (mib << 20) / item / cols;
    if (pick(3) == 0) rows += 1 + pick(7);  // uneven over any group
    r.shape = {rows, cols};
    corpus.push_back(r);
  }
  return corpus;
}

inline std::string CorpusLine(const CorpusRequest& r) {
  return absl::StrCat(r.id, "\t", r.mesh, "\t", absl::StrJoin(r.shape, ","),
                      "\t", r.dtype, "\t", r.from, "\t", r.to);
}

inline absl::StatusOr<std::vector<CorpusRequest>> ReadCorpus(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<CorpusRequest> corpus;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    CorpusRequest r;
    std::vector<std::string> dims =
        f.size() == 6 ? absl::StrSplit(f[2], ',') : std::vector<std::string>{};
    r.shape.resize(dims.size());
    bool ok = f.size() == 6 && absl::SimpleAtoi(f[0], &r.id) && !dims.empty();
    for (size_t d = 0; ok && d < dims.size(); ++d) {
      ok = absl::SimpleAtoi(dims[d], &r.shape[d]);
    }
    if (!ok) return absl::InvalidArgumentError("bad corpus line: " + line);
    r.mesh = f[1];
    r.dtype = f[3];
    r.from = f[4];
    r.to = f[5];
    corpus.push_back(r);
  }
  return corpus;
}

}  // namespace reshard::bench

#endif  // RESHARD_BENCH_PLAN_QUALITY_CORPUS_H_
