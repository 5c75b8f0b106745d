// Local steps' data movement on a GPU: each case's copy program
// (executor/run/copy_program.h, as the device runner runs it: a prepared
// table, one kernel launch; and again with every copy that fits as a
// cudaMemcpy2DAsync/3DAsync, the "pitched us" column, 0 where none fits, which
// decides PitchedPolicy's defaults) against cudaMemcpyAsync device-to-device of
// the same bytes, the HBM limit, both timed with CUDA events on the legacy
// default stream in the same run; medians of --iters runs after 3 warm-ups, at
// 16 MiB and 256 MiB moved. Cases: an outer-dim chunk (one contiguous run),
// inner-dim chunks with rows of 64 B and of 4 KiB, the all_to_all packing of
// S(0)->S(1), and the unpacking of an all_gather on an inner dim (rows of
// 4 KiB). Without a usable GPU it says why and exits 2.
//
//   device_copy_bench [--iters N]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "executor/backends/nccl/cuda_memory_space.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/memory/device_copy_table.h"
#include "executor/run/copy_program.h"
#include "executor/run/step_exec.h"
#include "planner/search/planner.h"

namespace reshard::executor {
namespace {

struct Case {
  const char* name;
  int64_t mesh;  // a 1-D mesh of this many ranks
  const char* src;
  const char* dst;
  int64_t columns;  // f32 elements per row of the global tensor
  bool after;       // the copies after the collective (unpacking)
};

// The bytes a program copies.
int64_t Moved(const CopyProgram& program) {
  int64_t moved = 0;
  for (const StridedCopy& copy : program.copies) {
    int64_t runs = 1;
    for (int64_t n : copy.counts) runs *= n;
    moved += runs * copy.run_bytes;
  }
  return moved;
}

// The case's one step on rank 0 for a tensor of `rows` rows, and its copies.
absl::StatusOr<CopyProgram> ProgramWithRows(const Case& c, int64_t rows,
                                            CompiledStep& step) {
  MeshSpec spec;
  spec.shape = {c.mesh};
  spec.dim_names = {"A"};
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(*mesh, {rows, c.columns}, "f32", c.src, c.dst, {});
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan = MakePlan(*mesh, *request);
  if (!plan.ok()) return plan.status();
  if (plan->steps.size() != 1) {
    return absl::InternalError(std::string(c.name) + ": not one step");
  }
  step = CompileStep(*mesh, request->tensor, plan->steps[0], 0);
  StepCopies copies = CopiesOf(step);
  return c.after ? copies.after : copies.before;
}

// The case's copies moving `bytes` on rank 0: the rows scaled from a small
// tensor's (moved bytes grow with the rows).
absl::StatusOr<CopyProgram> ProgramOf(const Case& c, int64_t bytes,
                                      CompiledStep& step) {
  const int64_t probe_rows = 64 * c.mesh;
  absl::StatusOr<CopyProgram> probe = ProgramWithRows(c, probe_rows, step);
  if (!probe.ok()) return probe.status();
  const int64_t rows = probe_rows * (bytes / Moved(*probe));
  return ProgramWithRows(c, rows, step);
}

// Median seconds of `run` timed by events, after 3 warm-ups.
template <typename Run>
double MedianSeconds(int iters, Run run) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> samples;
  for (int i = 0; i < iters + 3; ++i) {
    cudaEventRecord(start, cudaStreamLegacy);
    run();
    cudaEventRecord(stop, cudaStreamLegacy);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= 3) samples.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

struct Buffers {
  SpaceBuffer in, out, wire_in, wire_out;
};

absl::StatusOr<Buffers> Allocate(CudaMemorySpace& space,
                                 const CompiledStep& step) {
  const WireUse wire = WireOf(step);
  Buffers b;
  for (auto [into, bytes] :
       {std::pair{&b.in, step.Bytes(step.in_numel)},
        std::pair{&b.out, step.Bytes(step.out_numel)},
        std::pair{&b.wire_in, std::max<int64_t>(wire.in, 1)},
        std::pair{&b.wire_out,
                  std::max<int64_t>(wire.out, step.Bytes(step.out_numel))}}) {
    absl::StatusOr<SpaceBuffer> buffer = AllocateIn(space, bytes);
    if (!buffer.ok()) return buffer.status();
    *into = *std::move(buffer);
  }
  return b;
}

// Median seconds of `program` encoded under `policy`; 0 when the policy
// sends no copy to a pitched copy but `pitched_only`.
absl::StatusOr<double> TableSeconds(CudaMemorySpace& space,
                                    const CopyProgram& program,
                                    const PitchedPolicy& policy,
                                    bool pitched_only,
                                    const CopyBuffers& buffers, int iters) {
  DeviceCopyTable encoded = EncodeForDevice(program, policy);
  if (pitched_only && encoded.pitched.empty()) return 0.0;
  absl::StatusOr<const PreparedTable*> table =
      space.PrepareTable(std::move(encoded));
  if (!table.ok()) return table.status();
  return MedianSeconds(iters, [&] { (void)space.RunTable(**table, buffers); });
}

// One row of the table: the case's copies by the kernel alone, with every
// copy that fits as a pitched copy (cudaMemcpy2DAsync/3DAsync), and the
// memcpy baseline.
absl::Status RunCase(CudaMemorySpace& space, const Case& c, int64_t bytes,
                     int iters) {
  CompiledStep step;
  absl::StatusOr<CopyProgram> program = ProgramOf(c, bytes, step);
  if (!program.ok()) return program.status();
  absl::StatusOr<Buffers> b = Allocate(space, step);
  if (!b.ok()) return b.status();
  const CopyBuffers buffers{b->in.get(), b->out.get(), b->wire_in.get(),
                            b->wire_out.get()};
  const int64_t moved = Moved(*program);
  absl::StatusOr<double> step_s = TableSeconds(
      space, *program, PitchedPolicy::Never(), false, buffers, iters);
  absl::StatusOr<double> pitched_s = TableSeconds(
      space, *program, PitchedPolicy::Always(), true, buffers, iters);
  if (!step_s.ok() || !pitched_s.ok()) {
    return step_s.ok() ? pitched_s.status() : step_s.status();
  }
  // The baseline on buffers of its own, `moved` bytes each.
  absl::StatusOr<SpaceBuffer> from = AllocateIn(space, moved);
  absl::StatusOr<SpaceBuffer> to = AllocateIn(space, moved);
  if (!from.ok() || !to.ok()) {
    return from.ok() ? to.status() : from.status();
  }
  const double copy_s = MedianSeconds(iters, [&] {
    cudaMemcpyAsync(to->get(), from->get(), moved, cudaMemcpyDeviceToDevice,
                    cudaStreamLegacy);
  });
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    return absl::InternalError(std::string(c.name) + ": " +
                               cudaGetErrorString(e));
  }
  std::printf(
      "| %s | %lld MiB | %zu | %.1f | %.0f | %.1f | %.1f | %.0f | %.2f |\n",
      c.name, static_cast<long long>(moved >> 20), program->copies.size(),
      *step_s * 1e6, 2.0 * moved / *step_s / 1e9, *pitched_s * 1e6,
      copy_s * 1e6, 2.0 * moved / copy_s / 1e9, copy_s / *step_s);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::atoi(argv[i + 1]);
  }
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  if (!probe.ok() || probe->count == 0) {
    std::fprintf(stderr, "device_copy_bench: no usable GPU (%s)\n",
                 probe.ok() ? probe->detail.c_str()
                            : std::string(probe.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<CudaMemorySpace>> space =
      CudaMemorySpace::Create(0);
  if (!space.ok()) return 2;
  const Case cases[] = {
      {"outer-dim chunk R->S(0)", 2, "R", "S(0)", 1024, false},
      {"inner-dim chunk R->S(1), 64 B rows", 2, "R", "S(1)", 32, false},
      {"inner-dim chunk R->S(1), 4 KiB rows", 2, "R", "S(1)", 2048, false},
      {"all_to_all packing S(0)->S(1), 4 KiB rows", 4, "S(0)", "S(1)", 4096,
       false},
      {"all_gather unpacking S(1)->R, 4 KiB rows", 4, "S(1)", "R", 4096, true},
  };
  std::printf(
      "| case | moved | copies | step us | step GB/s | pitched us | memcpy us "
      "| memcpy GB/s | memcpy/step |\n|---|---|---|---|---|---|---|---|---|\n");
  int failed = 0;
  for (int64_t mib : {16, 256}) {
    for (const Case& c : cases) {
      absl::Status s = RunCase(**space, c, mib << 20, iters);
      if (!s.ok()) {
        std::fprintf(stderr, "%s at %lld MiB: %s\n", c.name,
                     static_cast<long long>(mib),
                     std::string(s.message()).c_str());
        failed = 1;
      }
    }
  }
  return failed;
}

}  // namespace
}  // namespace reshard::executor

int main(int argc, char** argv) { return reshard::executor::Main(argc, argv); }
