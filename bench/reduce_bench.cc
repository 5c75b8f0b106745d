// The reductions a Gloo reduce_scatter or all_reduce applies to every byte
// it moves (executor/run/element_ops.h), against std::memcpy of the same
// bytes in the same run: a reduction reads two buffers and writes one, a copy
// reads one and writes one, so memory-bound they should take ~1.5x as
// long. Buffers of 256 KiB (in cache) and 16 MiB (in memory), out of place
// and in place (out == a, as Gloo's ring reduces into its buffer).
//
//   reduce_bench [--benchmark_repetitions=N --benchmark_report_aggregates_only]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "executor/run/element_ops.h"

namespace reshard::executor {
namespace {

// Three buffers of `bytes` each, filled with small integers so that every
// dtype holds finite values.
struct Buffers {
  explicit Buffers(int64_t bytes)
      : a(static_cast<size_t>(bytes)),
        b(static_cast<size_t>(bytes)),
        out(static_cast<size_t>(bytes)) {
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<char>(i % 7);
      b[i] = static_cast<char>(i % 5);
    }
  }
  std::vector<char> a, b, out;
};

void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  Buffers buffers(bytes);
  for (auto _ : state) {
    std::memcpy(buffers.out.data(), buffers.a.data(),
                static_cast<size_t>(bytes));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// Args: bytes, dtype, op, in place (0/1).
void BM_Reduce(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  const auto dtype = static_cast<DType>(state.range(1));
  const auto op = static_cast<ReduceOp>(state.range(2));
  Buffers buffers(bytes);
  void* out = state.range(3) != 0 ? buffers.a.data() : buffers.out.data();
  const int64_t count = bytes / ItemSize(dtype);
  for (auto _ : state) {
    ReduceElements(dtype, op, out, buffers.a.data(), buffers.b.data(), count);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetLabel(std::string(DTypeName(dtype)) + " " +
                 std::string(ReduceOpName(op)) +
                 (state.range(3) != 0 ? " in place" : ""));
}

constexpr int64_t kSmall = int64_t{256} << 10;
constexpr int64_t kLarge = int64_t{16} << 20;

BENCHMARK(BM_Memcpy)->Arg(kSmall)->Arg(kLarge);
BENCHMARK(BM_Reduce)->ArgsProduct({
    {kSmall, kLarge},
    {static_cast<int64_t>(DType::kFloat32),
     static_cast<int64_t>(DType::kBFloat16)},
    {static_cast<int64_t>(ReduceOp::kSum),
     static_cast<int64_t>(ReduceOp::kMax)},
    {0, 1},
});

}  // namespace
}  // namespace reshard::executor

BENCHMARK_MAIN();
