// The copy kernel (executor/backends/nccl/copy_kernel.h) on a GPU: 10,000+ copy
// programs of random steps, each encoded as a device table, uploaded and
// run by one launch on device buffers, equal byte for byte to the same
// program run on the host (RESHARD_DEVICE_COPY_PROGRAMS sets how many:
// fewer under compute-sanitizer). Every other program runs with the
// table's own threads per unit (LanesPerUnit), the rest with each count
// from 1 to 256 in turn: the result must not depend on it. Half the
// programs send every copy that fits to cudaMemcpy2DAsync/3DAsync
// (executor/memory/pitched_copy.h) instead. Skips without a usable GPU.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "executor/backends/nccl/copy_kernel.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/memory/device_copy_table.h"
#include "gtest/gtest.h"
#include "tests/executor/device_copy_steps.h"

namespace reshard::executor {
namespace {

// Device memory holding a copy of `host` (at least one byte), freed on
// destruction.
class DeviceBytes {
 public:
  explicit DeviceBytes(const void* host, size_t bytes) : bytes_(bytes) {
    ok_ = cudaMalloc(&data_, bytes == 0 ? 1 : bytes) == cudaSuccess &&
          cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  ~DeviceBytes() { cudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  bool ok() const { return ok_; }
  char* data() const { return static_cast<char*>(data_); }
  bool Download(std::vector<char>& host) const {
    return cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost) ==
           cudaSuccess;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool ok_ = false;
};

// Runs `table` on device copies of `buffers`, `lanes` threads per unit,
// and downloads the result into them; the CUDA error's name, or "".
std::string RunOnDevice(const DeviceCopyTable& table, int lanes,
                        testing::ProgramBuffers& buffers) {
  DeviceBytes in(buffers.in.data(), buffers.in.size());
  DeviceBytes out(buffers.out.data(), buffers.out.size());
  DeviceBytes wire_in(buffers.wire_in.data(), buffers.wire_in.size());
  DeviceBytes wire_out(buffers.wire_out.data(), buffers.wire_out.size());
  DeviceBytes ops(table.ops.data(), table.ops.size() * sizeof(DeviceCopyOp));
  DeviceBytes dims(table.dims.data(), table.dims.size() * sizeof(int64_t));
  for (const DeviceBytes* d : {&in, &out, &wire_in, &wire_out, &ops, &dims}) {
    if (!d->ok()) return "cudaMalloc or upload failed";
  }
  const CopyBuffers device{in.data(), out.data(), wire_in.data(),
                           wire_out.data()};
  for (const ZeroFill& fill : table.fills) {
    cudaMemsetAsync(WritableBuffer(fill.buffer, device) + fill.offset, 0,
                    fill.bytes, nullptr);
  }
  cudaError_t e =
      LaunchCopyUnits(reinterpret_cast<const DeviceCopyOp*>(ops.data()),
                      static_cast<int32_t>(table.ops.size()),
                      reinterpret_cast<const int64_t*>(dims.data()),
                      table.units, lanes, device, nullptr);
  for (const PitchedCopy& copy : table.pitched) {
    if (e == cudaSuccess) e = EnqueuePitchedCopy(copy, device, nullptr);
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return cudaGetErrorName(e);
  const bool downloaded = out.Download(buffers.out) &&
                          wire_in.Download(buffers.wire_in) &&
                          wire_out.Download(buffers.wire_out);
  return downloaded ? "" : "download failed";
}

TEST(DeviceCopyGpuTest, TenThousandProgramsMatchTheHostByteForByte) {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  ASSERT_TRUE(probe.ok()) << probe.status();
  if (probe->count == 0) GTEST_SKIP() << "no usable GPU: " << probe->detail;
  const char* wanted = std::getenv("RESHARD_DEVICE_COPY_PROGRAMS");
  const int programs = wanted != nullptr ? std::atoi(wanted) : 10000;
  std::mt19937_64 rng(2028);
  int index = 0;
  const int visited = testing::ForEachStepProgram(
      programs, rng,
      [&](const CompiledStep& step, const CopyProgram& program,
          const std::string& label) {
        testing::ProgramBuffers host(step, rng);
        testing::ProgramBuffers device = host;
        RunOnHost(program, host.Pointers());
        // Half the programs send every copy that fits to CUDA's pitched
        // copies, half send none.
        const DeviceCopyTable table =
            EncodeForDevice(program, index % 4 < 2 ? PitchedPolicy::Always()
                                                   : PitchedPolicy::Never());
        const int lanes = index % 2 == 0 ? LanesPerUnit(table.max_unit_bytes)
                                         : 1 << (index / 2 % 9);
        ++index;
        const std::string error = RunOnDevice(table, lanes, device);
        EXPECT_EQ(error, "") << label << " with " << lanes << " lanes";
        EXPECT_TRUE(device == host) << label;
        return !::testing::Test::HasFailure();
      });
  EXPECT_GE(visited, programs);
}

}  // namespace
}  // namespace reshard::executor
