#include "executor/memory/table_space.h"

#include <utility>

namespace reshard::executor {
namespace {

class TableCopies : public SpaceWork {
 public:
  TableCopies(TableSpace& space, const PreparedTable& table)
      : space_(&space), table_(&table) {}
  absl::Status Run(const CopyBuffers& buffers) const override {
    return space_->RunTable(*table_, buffers);
  }

 private:
  TableSpace* space_;
  const PreparedTable* table_;
};

// A collective step: its packing, its collective (when its block is not
// empty), its unpacking.
class TableStep : public SpaceWork {
 public:
  TableStep(TableSpace& space, const CompiledStep& step, const StepCopies& io,
            const PreparedTable& before, const PreparedTable& after)
      : space_(&space),
        comm_(step.comm),
        op_(step.step.op),
        block_(step.block),
        dtype_(step.dtype),
        reduction_{step.step.reduce_op, step.step.avg_divisor},
        collective_(io.collective),
        io_(io.io),
        before_(&before),
        after_(&after) {}

  absl::Status Run(const CopyBuffers& buffers) const override {
    absl::Status s = space_->RunTable(*before_, buffers);
    if (s.ok() && collective_) {
      s = CallCollective(
          *comm_, op_, ReadableBuffer(io_.send, buffers) + io_.send_offset,
          WritableBuffer(io_.recv, buffers), block_, dtype_, reduction_);
    }
    if (s.ok()) s = space_->RunTable(*after_, buffers);
    return s;
  }

 private:
  TableSpace* space_;
  Communicator* comm_;
  StepOp op_;
  int64_t block_;
  DType dtype_;
  Reduction reduction_;
  bool collective_;
  CollectiveIo io_;
  const PreparedTable* before_;
  const PreparedTable* after_;
};

}  // namespace

absl::StatusOr<const PreparedTable*> TableSpace::PrepareProgram(
    const CopyProgram& program) {
  return PrepareTable(EncodeForDevice(program));
}

absl::StatusOr<std::unique_ptr<SpaceWork>> TableSpace::PrepareStep(
    CompiledStep step) {
  const StepCopies copies = CopiesOf(step);
  absl::StatusOr<const PreparedTable*> before = PrepareProgram(copies.before);
  if (!before.ok()) return before.status();
  if (!IsCollective(step.step.op)) {
    return std::make_unique<TableCopies>(*this, **before);
  }
  absl::StatusOr<const PreparedTable*> after = PrepareProgram(copies.after);
  if (!after.ok()) return after.status();
  return std::make_unique<TableStep>(*this, step, copies, **before, **after);
}

absl::StatusOr<std::unique_ptr<SpaceWork>> TableSpace::PrepareCopies(
    const CopyProgram& program) {
  absl::StatusOr<const PreparedTable*> table = PrepareProgram(program);
  if (!table.ok()) return table.status();
  return std::make_unique<TableCopies>(*this, **table);
}

}  // namespace reshard::executor
