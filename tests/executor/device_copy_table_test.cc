// Device copy tables (executor/memory/device_copy_table.h) on host memory: the
// units the kernel runs, executed one by one, do exactly what the copy
// program does (byte for byte, on every buffer) on 10,000+ programs of
// random steps, and every program may run its copies at once.
#include "executor/memory/device_copy_table.h"

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/executor/device_copy_steps.h"

namespace reshard::executor {
namespace {

// What the tables of 10,000+ programs of random steps held.
struct Encoded {
  int programs = 0;
  int64_t units = 0;
  int64_t pitched = 0;  // pitched copies
  int64_t slices = 0;   // pitched copies of more than one slice
};

// Encodes each program under `policy` and runs its table on host memory:
// it must do exactly what the program does, and may run all at once.
Encoded ExpectTablesDoWhatTheirProgramsDo(uint64_t seed,
                                          const PitchedPolicy& policy) {
  std::mt19937_64 rng(seed);
  Encoded seen;
  seen.programs = testing::ForEachStepProgram(
      10000, rng,
      [&](const CompiledStep& step, const CopyProgram& program,
          const std::string& label) {
        const DeviceCopyTable table = EncodeForDevice(program, policy);
        seen.units += table.units;
        seen.pitched += static_cast<int64_t>(table.pitched.size());
        for (const PitchedCopy& p : table.pitched) seen.slices += p.depth > 1;
        const absl::Status parallel = CheckParallel(table);
        EXPECT_TRUE(parallel.ok()) << label << ": " << parallel;
        testing::ProgramBuffers copies(step, rng);
        testing::ProgramBuffers by_table = copies;
        RunOnHost(program, copies.Pointers());
        RunTableOnHost(table, by_table.Pointers());
        EXPECT_TRUE(by_table == copies) << label;
        return !::testing::Test::HasFailure();
      });
  EXPECT_GE(seen.programs, 10000);
  return seen;
}

TEST(DeviceCopyTableTest, TenThousandProgramsRunByUnitsMatchTheirCopies) {
  const Encoded seen =
      ExpectTablesDoWhatTheirProgramsDo(2027, PitchedPolicy::Never());
  EXPECT_GT(seen.units, seen.programs);  // most programs have several units
  EXPECT_EQ(seen.pitched, 0);
}

// The same with every copy that fits sent to CUDA's pitched copies: their
// host form (what cudaMemcpy2DAsync/3DAsync do) and the kernel's units
// for the rest still do exactly what the program does.
TEST(DeviceCopyTableTest, TenThousandProgramsWithPitchedCopiesMatch) {
  const Encoded seen =
      ExpectTablesDoWhatTheirProgramsDo(2029, PitchedPolicy::Always());
  EXPECT_GT(seen.pitched, seen.programs);  // most have pitched copies
  EXPECT_GT(seen.slices, 100);             // and many of them are 3-D
}

StridedCopy Strided(int64_t run_bytes, std::vector<int64_t> counts,
                    std::vector<int64_t> from_strides,
                    std::vector<int64_t> to_strides) {
  StridedCopy copy;
  copy.from = CopyBuffer::kIn;
  copy.to = CopyBuffer::kWireOut;
  copy.from_offset = 3;
  copy.to_offset = 5;
  copy.run_bytes = run_bytes;
  copy.counts = std::move(counts);
  copy.from_strides = std::move(from_strides);
  copy.to_strides = std::move(to_strides);
  return copy;
}

// Which loops fit a pitched copy, and how they map onto one.
TEST(PitchedCopyTest, LoopsMapOntoRowsAndSlicesOrDoNotFit) {
  const std::optional<PitchedCopy> flat = AsPitched(Strided(100, {}, {}, {}));
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->width, 100);
  EXPECT_EQ(flat->height * flat->depth, 1);
  EXPECT_EQ(flat->from_offset, 3);
  EXPECT_EQ(flat->to, CopyBuffer::kWireOut);

  // Slices of rows; a loop of one iteration is no loop.
  const std::optional<PitchedCopy> box =
      AsPitched(Strided(64, {3, 1, 5}, {4000, 7, 200}, {960, 9, 64}));
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->depth, 3);
  EXPECT_EQ(box->height, 5);
  EXPECT_EQ(box->from_pitch, 200);
  EXPECT_EQ(box->from_slice_rows, 20);
  EXPECT_EQ(box->to_pitch, 64);
  EXPECT_EQ(box->to_slice_rows, 15);
  // Its rows land where the strided copy puts them.
  CopyProgram program;
  program.copies = {Strided(64, {3, 1, 5}, {4000, 7, 200}, {960, 9, 64})};
  std::vector<char> in(3 * 4000), strided(3 * 960 + 64, 0), rows = strided;
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<char>(i * 7);
  RunOnHost(program, {in.data(), nullptr, nullptr, strided.data()});
  RunPitchedOnHost(*box, {in.data(), nullptr, nullptr, rows.data()});
  EXPECT_EQ(rows, strided);

  // Rows that overlap or repeat, slices that are not whole rows or cut
  // into the slice before, and three loops stay with the kernel.
  EXPECT_FALSE(AsPitched(Strided(64, {5}, {32}, {64})).has_value());
  EXPECT_FALSE(AsPitched(Strided(64, {5}, {0}, {64})).has_value());
  EXPECT_FALSE(AsPitched(Strided(64, {5}, {-64}, {64})).has_value());
  EXPECT_FALSE(
      AsPitched(Strided(64, {3, 5}, {1100, 200}, {320, 64})).has_value());
  EXPECT_FALSE(
      AsPitched(Strided(64, {3, 5}, {800, 200}, {320, 64})).has_value());
  EXPECT_FALSE(
      AsPitched(Strided(8, {2, 3, 4}, {96, 32, 8}, {96, 32, 8})).has_value());
  EXPECT_FALSE(AsPitched(Strided(64, {5}, {int64_t{1} << 31}, {64})));
}

// The default policy sends only long rows of large copies; the table
// keeps them out of its units and counts them in its parallel check.
TEST(PitchedCopyTest, TheDefaultPolicySendsLongRowsOfLargeCopies) {
  const int64_t rows = (int64_t{16} << 20) / kDeviceChunkBytes;
  CopyProgram program;
  program.copies = {Strided(kDeviceChunkBytes, {rows}, {2 * kDeviceChunkBytes},
                            {kDeviceChunkBytes}),
                    Strided(kDeviceChunkBytes, {rows / 2}, {kDeviceChunkBytes},
                            {kDeviceChunkBytes}),
                    Strided(64, {rows * 64}, {64}, {64})};
  program.copies[1].to = CopyBuffer::kOut;
  program.copies[2].to = CopyBuffer::kWireIn;
  const DeviceCopyTable table = EncodeForDevice(program);
  ASSERT_EQ(table.pitched.size(), 1u);
  EXPECT_EQ(table.pitched[0].height, rows);
  EXPECT_EQ(table.ops.size(), 2u);
  EXPECT_EQ(EncodeForDevice(program, PitchedPolicy::Never()).pitched.size(),
            0u);
  EXPECT_EQ(EncodeForDevice(program, PitchedPolicy::Always()).pitched.size(),
            3u);

  CopyProgram twice;
  twice.copies = {Strided(64, {4}, {64}, {64}), Strided(64, {2}, {64}, {64})};
  twice.copies[1].from_offset = 1000;
  const absl::Status s =
      CheckParallel(EncodeForDevice(twice, PitchedPolicy::Always()));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "bytes [5, 69) of wire_out are written twice");
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
