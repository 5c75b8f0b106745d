// Copy programs (executor/run/copy_program.h) against ExecuteStep's host
// path, byte for byte, on 10,000+ steps of random plans on every rank (every
// op, every planner, uneven shapes, every dtype size): what the collective is
// given and the step's output must be equal. The collective is a scripted
// stand-in for the peers (their blocks are patterns of their index, a
// reduction flips bits), applied the same way to both paths.
#include "executor/run/copy_program.h"

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/executor/executor_cases.h"

namespace reshard::executor {
namespace {

// Stands in for member `member`'s block.
void PeerBlock(char* at, int64_t bytes, int member) {
  for (int64_t k = 0; k < bytes; ++k) {
    at[k] = static_cast<char>(member * 31 + k * 7 + 1);
  }
}

// The peers, as both paths see them: `sent` records what each call was
// given and `where` which buffers (and offsets) it read and wrote, named
// by `locate`; results are deterministic functions of what was sent.
struct Peers {
  int index = 0;
  int size = 1;
  std::function<std::string(const char*)> locate;
  std::string sent, where;

  void Called(const char* send, const char* recv) {
    absl::StrAppend(&where, locate(send), "->", locate(recv), ";");
  }
  void Gather(const char* mine, char* out, int64_t bb) {
    Called(mine, out);
    sent.append(mine, bb);
    std::memmove(out + index * bb, mine, bb);
    for (int j = 0; j < size; ++j) {
      if (j != index) PeerBlock(out + j * bb, bb, j);
    }
  }
  void Reduce(char* data, int64_t bb) {
    Called(data, data);
    sent.append(data, bb);
    for (int64_t k = 0; k < bb; ++k) data[k] ^= 0x5A;
  }
  void ReduceScatter(const char* in, char* out, int64_t bb) {
    Called(in, out);
    sent.append(in, size * bb);
    for (int64_t k = 0; k < bb; ++k) out[k] = in[index * bb + k] ^ 0x5A;
  }
  void AllToAll(const char* in, char* out, int64_t bb) {
    Called(in, out);
    sent.append(in, size * bb);
    std::memcpy(out + index * bb, in + index * bb, bb);
    for (int i = 0; i < size; ++i) {
      if (i != index) PeerBlock(out + i * bb, bb, i);
    }
  }
};

class ScriptedCommunicator : public Communicator {
 public:
  explicit ScriptedCommunicator(Peers& peers) : peers_(peers) {}
  int index() const override { return peers_.index; }
  int size() const override { return peers_.size; }
  const std::string& name() const override { return name_; }
  absl::Status AllGather(const void* in, void* out, int64_t block,
                         DType dtype) override {
    peers_.Gather(static_cast<const char*>(in), static_cast<char*>(out),
                  block * ItemSize(dtype));
    return absl::OkStatus();
  }
  absl::Status AllReduce(void* data, int64_t block, DType dtype,
                         Reduction) override {
    peers_.Reduce(static_cast<char*>(data), block * ItemSize(dtype));
    return absl::OkStatus();
  }
  absl::Status ReduceScatter(const void* in, void* out, int64_t block,
                             DType dtype, Reduction) override {
    peers_.ReduceScatter(static_cast<const char*>(in), static_cast<char*>(out),
                         block * ItemSize(dtype));
    return absl::OkStatus();
  }
  absl::Status AllToAll(const void* in, void* out, int64_t block,
                        DType dtype) override {
    peers_.AllToAll(static_cast<const char*>(in), static_cast<char*>(out),
                    block * ItemSize(dtype));
    return absl::OkStatus();
  }

 private:
  Peers& peers_;
  std::string name_ = "scripted";
};

// One step's buffers, filled alike for both paths.
struct StepBuffers {
  std::vector<char> in, out, wire_in, wire_out;

  StepBuffers(const CompiledStep& c, std::mt19937_64& rng) {
    const WireUse wire = WireOf(c);
    in.resize(c.Bytes(c.in_numel));
    for (char& b : in) b = static_cast<char>(rng());
    out.assign(c.Bytes(c.out_numel), '\xCD');
    wire_in.assign(wire.in, '\xAB');
    wire_out.assign(wire.out, '\xEF');
  }
  CopyBuffers Pointers() {
    return {in.data(), out.data(), wire_in.data(), wire_out.data()};
  }
  // "wire_in+64": the buffer `at` points into, and where.
  std::string Locate(const char* at) const {
    for (const auto& [name, buffer] :
         {std::pair{"in", &in}, std::pair{"out", &out},
          std::pair{"wire_in", &wire_in}, std::pair{"wire_out", &wire_out}}) {
      const char* base = buffer->data();
      if (at >= base && at <= base + buffer->size() && !buffer->empty()) {
        return absl::StrCat(name, "+", at - base);
      }
    }
    return "elsewhere";
  }
};

char* At(CopyBuffer b, StepBuffers& buffers) {
  switch (b) {
    case CopyBuffer::kIn:
      return buffers.in.data();
    case CopyBuffer::kOut:
      return buffers.out.data();
    case CopyBuffer::kWireIn:
      return buffers.wire_in.data();
    default:
      return buffers.wire_out.data();
  }
}

// The step run by its copy program around the scripted collective.
void RunProgram(const CompiledStep& c, StepBuffers& buffers, Peers& peers) {
  const StepCopies copies = CopiesOf(c);
  RunOnHost(copies.before, buffers.Pointers());
  if (!copies.collective) return;
  const int64_t bb = c.Bytes(c.block);
  char* send = At(copies.io.send, buffers) + copies.io.send_offset;
  char* recv = At(copies.io.recv, buffers);
  switch (c.step.op) {
    case StepOp::kAllGather:
      peers.Gather(send, recv, bb);
      break;
    case StepOp::kAllReduce:
      peers.Reduce(recv, bb);
      break;
    case StepOp::kReduceScatter:
      peers.ReduceScatter(send, recv, bb);
      break;
    case StepOp::kAllToAll:
      peers.AllToAll(send, recv, bb);
      break;
    default:
      ADD_FAILURE() << "a collective step of op " << StepOpName(c.step.op);
      break;
  }
  RunOnHost(copies.after, buffers.Pointers());
}

// Steps of one case on every rank; returns how many were compared.
int CompareCase(const testing::ExecCase& c, std::mt19937_64& rng) {
  int compared = 0;
  for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
    for (size_t k = 0; k < c.plan.steps.size(); ++k) {
      CompiledStep step =
          CompileStep(c.mesh, c.plan.tensor, c.plan.steps[k], p);
      if (step.skip) continue;
      StepBuffers host(step, rng);
      StepBuffers program = host;
      Peers host_peers{static_cast<int>(step.layout.index),
                       static_cast<int>(step.layout.group_size),
                       [&host](const char* at) { return host.Locate(at); }};
      Peers program_peers = host_peers;
      program_peers.locate = [&program](const char* at) {
        return program.Locate(at);
      };
      ScriptedCommunicator comm(host_peers);
      step.comm = &comm;
      EXPECT_TRUE(ExecuteStep(step, host.in.data(), host.out.data(),
                              {host.wire_in.data(), host.wire_out.data()})
                      .ok());
      RunProgram(step, program, program_peers);
      EXPECT_EQ(program_peers.where, host_peers.where)
          << "steps[" << k << "] (" << StepOpName(step.step.op)
          << ") at position " << p << ": the collective's buffers";
      EXPECT_EQ(program_peers.sent, host_peers.sent)
          << "steps[" << k << "] (" << StepOpName(step.step.op)
          << ") at position " << p << ": what the collective was given";
      EXPECT_EQ(program.out, host.out)
          << "steps[" << k << "] (" << StepOpName(step.step.op)
          << ") at position " << p << ": the output";
      ++compared;
      if (::testing::Test::HasFailure()) return compared;
    }
  }
  return compared;
}

TEST(CopyProgramTest, TenThousandStepsMatchTheHostPathByteForByte) {
  std::mt19937_64 rng(2026);
  std::map<StepOp, int> ops;
  int compared = 0;
  while (compared < 10000 && !HasFailure()) {
    const testing::ExecCase c = testing::RandomExecCase(rng);
    for (const Step& s : c.plan.steps) ++ops[s.op];
    compared += CompareCase(c, rng);
  }
  EXPECT_GE(compared, 10000);
  for (StepOp op : {StepOp::kAllGather, StepOp::kAllReduce,
                    StepOp::kReduceScatter, StepOp::kAllToAll, StepOp::kChunk,
                    StepOp::kPartition, StepOp::kShardToPartial}) {
    EXPECT_GT(ops[op], 0) << StepOpName(op) << " never drawn";
  }
}

// A box becomes one strided copy: full trailing dims merge into the run,
// one-iteration loops are dropped.
TEST(CopyProgramTest, ABoxIsOneStridedCopy) {
  Box box;
  box.offset = {1, 0, 2};
  box.extent = {2, 3, 4};
  const StridedCopy copy =
      PackCopy({4, 3, 8}, box, 2, CopyBuffer::kIn, CopyBuffer::kWireIn, 16);
  EXPECT_EQ(copy.from_offset, (1 * 24 + 2) * 2);
  EXPECT_EQ(copy.to_offset, 16);
  EXPECT_EQ(copy.run_bytes, 4 * 2);
  EXPECT_EQ(copy.counts, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(copy.from_strides, (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(copy.to_strides, (std::vector<int64_t>{24, 8}));
  box.offset = {1, 0, 0};
  box.extent = {2, 3, 8};  // rows of whole trailing dims: one run
  const StridedCopy run =
      UnpackCopy({4, 3, 8}, box, 4, CopyBuffer::kWireOut, 0, CopyBuffer::kOut);
  EXPECT_EQ(run.run_bytes, 2 * 3 * 8 * 4);
  EXPECT_TRUE(run.counts.empty());
  EXPECT_EQ(run.to_offset, 24 * 4);
}

}  // namespace
}  // namespace reshard::executor
