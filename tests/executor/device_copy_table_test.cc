// Device copy tables (executor/device_copy_table.h) on host memory: the
// units the kernel runs, executed one by one, do exactly what the copy
// program does (byte for byte, on every buffer) on 10,000+ programs of
// random steps, and every program may run its copies at once.
#include "executor/device_copy_table.h"

#include <random>

#include "gtest/gtest.h"
#include "tests/executor/device_copy_steps.h"

namespace reshard::executor {
namespace {

TEST(DeviceCopyTableTest, TenThousandProgramsRunByUnitsMatchTheirCopies) {
  std::mt19937_64 rng(2027);
  int64_t units = 0;
  const int visited = testing::ForEachStepProgram(
      10000, rng,
      [&](const CompiledStep& step, const CopyProgram& program,
          const std::string& label) {
        const DeviceCopyTable table = EncodeForDevice(program);
        units += table.units;
        const absl::Status parallel = CheckParallel(table);
        EXPECT_TRUE(parallel.ok()) << label << ": " << parallel;
        testing::ProgramBuffers copies(step, rng);
        testing::ProgramBuffers by_units = copies;
        RunOnHost(program, copies.Pointers());
        RunTableOnHost(table, by_units.Pointers());
        EXPECT_TRUE(by_units == copies) << label;
        return !::testing::Test::HasFailure();
      });
  EXPECT_GE(visited, 10000);
  EXPECT_GT(units, visited);  // most programs have several units
}

// A run longer than a unit is split into whole chunks and a remainder;
// loops advance innermost first, by their own strides on each side.
TEST(DeviceCopyTableTest, LongRunsSplitIntoChunksAndLoopsUseTheirStrides) {
  CopyProgram program;
  StridedCopy copy;
  copy.from = CopyBuffer::kIn;
  copy.to = CopyBuffer::kWireIn;
  copy.from_offset = 8;
  copy.to_offset = 16;
  copy.run_bytes = 2 * kDeviceChunkBytes + 5;
  copy.counts = {2, 3};
  copy.from_strides = {100000, 10000};
  copy.to_strides = {3 * copy.run_bytes, copy.run_bytes};
  program.copies.push_back(copy);
  const DeviceCopyTable table = EncodeForDevice(program);
  ASSERT_EQ(table.ops.size(), 1u);
  EXPECT_EQ(table.units, 2 * 3 * 3);
  // Unit 5: run 1 (loop indices 0, 1), its third chunk (5 bytes).
  const UnitCopy u = LocateUnit(table.ops.data(), 1, table.dims.data(), 5);
  EXPECT_EQ(u.from_at, 8 + 10000 + 2 * kDeviceChunkBytes);
  EXPECT_EQ(u.to_at, 16 + copy.run_bytes + 2 * kDeviceChunkBytes);
  EXPECT_EQ(u.bytes, 5);
  // Unit 9: run 3 (loop indices 1, 0), its first chunk.
  const UnitCopy v = LocateUnit(table.ops.data(), 1, table.dims.data(), 9);
  EXPECT_EQ(v.from_at, 8 + 100000);
  EXPECT_EQ(v.to_at, 16 + 3 * copy.run_bytes);
  EXPECT_EQ(v.bytes, kDeviceChunkBytes);
}

// The kernel's threads per unit follow the table's longest unit: one per
// 16-byte word, a power of two up to a whole block for a 4 KiB chunk.
TEST(DeviceCopyTableTest, ThreadsPerUnitFollowTheLongestUnit) {
  CopyProgram program;
  StridedCopy rows;
  rows.from = CopyBuffer::kIn;
  rows.to = CopyBuffer::kOut;
  rows.run_bytes = 64;  // inner-dim rows of 16 floats
  rows.counts = {1000};
  rows.from_strides = {256};
  rows.to_strides = {64};
  program.copies.push_back(rows);
  EXPECT_EQ(EncodeForDevice(program).max_unit_bytes, 64);
  EXPECT_EQ(LanesPerUnit(64), 4);
  StridedCopy longer = rows;
  longer.to = CopyBuffer::kWireOut;
  longer.run_bytes = 3 * kDeviceChunkBytes;  // split into 4 KiB chunks
  program.copies.push_back(longer);
  EXPECT_EQ(EncodeForDevice(program).max_unit_bytes, kDeviceChunkBytes);
  EXPECT_EQ(LanesPerUnit(kDeviceChunkBytes), kDeviceCopyThreads);
  EXPECT_EQ(LanesPerUnit(0), 1);
  EXPECT_EQ(LanesPerUnit(16), 1);
  EXPECT_EQ(LanesPerUnit(17), 2);
  EXPECT_EQ(LanesPerUnit(1000), 64);
  EXPECT_EQ(kDeviceCopyThreads % LanesPerUnit(1000), 0);
}

// Empty copies take no unit; later ops are found past them.
TEST(DeviceCopyTableTest, EmptyCopiesAreDroppedAndOpsAreFoundByUnit) {
  CopyProgram program;
  program.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 0, 0, 0});
  program.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 0, 0, 10});
  program.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 0, 0, 3, {0}});
  program.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 20, 10, 7});
  const DeviceCopyTable table = EncodeForDevice(program);
  ASSERT_EQ(table.ops.size(), 2u);
  EXPECT_EQ(table.units, 2);
  const UnitCopy second = LocateUnit(table.ops.data(), 2, table.dims.data(), 1);
  EXPECT_EQ(second.from_at, 20);
  EXPECT_EQ(second.to_at, 10);
  EXPECT_EQ(second.bytes, 7);
}

TEST(DeviceCopyTableTest, CopiesThatClashAreNotParallel) {
  CopyProgram overlap;
  overlap.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 0, 0, 8});
  overlap.copies.push_back({CopyBuffer::kIn, CopyBuffer::kOut, 0, 4, 8});
  absl::Status s = CheckParallel(EncodeForDevice(overlap));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "bytes [4, 8) of out are written twice");
  CopyProgram chained;
  chained.copies.push_back({CopyBuffer::kIn, CopyBuffer::kWireIn, 0, 0, 8});
  chained.copies.push_back({CopyBuffer::kWireIn, CopyBuffer::kOut, 0, 0, 8});
  s = CheckParallel(EncodeForDevice(chained));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "a copy reads wire_in, which a copy of the same program writes");
}

}  // namespace
}  // namespace reshard::executor
