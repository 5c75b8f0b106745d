#include "executor/run/rank_program_json.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"

namespace reshard::executor {
namespace {

std::string BufferName(CopyBuffer b) {
  switch (b) {
    case CopyBuffer::kIn:
      return "\"in\"";
    case CopyBuffer::kOut:
      return "\"out\"";
    case CopyBuffer::kWireIn:
      return "\"wire_in\"";
    default:
      return "\"wire_out\"";
  }
}

template <typename Ints>
std::string Array(const Ints& values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

// Fills as [buffer, offset, bytes]; copies as [from, to, from_offset,
// to_offset, run_bytes, counts, from_strides, to_strides].
std::string CopyProgramJson(const CopyProgram& p) {
  std::vector<std::string> fills, copies;
  for (const ZeroFill& f : p.fills) {
    fills.push_back(absl::StrCat("[", BufferName(f.buffer), ",", f.offset, ",",
                                 f.bytes, "]"));
  }
  for (const StridedCopy& c : p.copies) {
    copies.push_back(absl::StrCat(
        "[", BufferName(c.from), ",", BufferName(c.to), ",", c.from_offset, ",",
        c.to_offset, ",", c.run_bytes, ",", Array(c.counts), ",",
        Array(c.from_strides), ",", Array(c.to_strides), "]"));
  }
  return absl::StrCat("{\"fills\":[", absl::StrJoin(fills, ","),
                      "],\"copies\":[", absl::StrJoin(copies, ","), "]}");
}

std::string CollectiveJson(const StepCopies& s) {
  if (!s.collective) return "null";
  return absl::StrCat("{\"send\":", BufferName(s.io.send),
                      ",\"send_offset\":", s.io.send_offset,
                      ",\"recv\":", BufferName(s.io.recv), "}");
}

// null where the step's collective does not reduce.
std::string ReduceOpJson(const ProgramStep& s) {
  if (!IsCollective(s.op) || !UsesReduceOp(s.op)) return "null";
  return JsonString(ReduceOpName(s.reduce_op));
}

std::string StepJson(const ProgramStep& s) {
  return absl::StrCat(
      "{\"plan_step\":", s.plan_step, ",\"op\":", JsonString(StepOpName(s.op)),
      ",\"mesh_dims\":", Array(s.group), ",\"members\":", Array(s.members),
      ",\"index\":", s.index, ",\"in_shape\":", Array(s.in_shape),
      ",\"out_shape\":", Array(s.out_shape), ",\"block_numel\":", s.block_numel,
      ",\"wire_in_bytes\":", s.wire.in, ",\"wire_out_bytes\":", s.wire.out,
      ",\"reduce_op\":", ReduceOpJson(s), ",\"divisor\":", s.divisor,
      ",\"before\":", CopyProgramJson(s.copies.before),
      ",\"collective\":", CollectiveJson(s.copies),
      ",\"after\":", CopyProgramJson(s.copies.after), "}");
}

}  // namespace

std::string RankProgramJson(const RankProgram& program) {
  std::vector<std::string> steps;
  for (const ProgramStep& s : program.steps) steps.push_back(StepJson(s));
  return absl::StrCat("{\"position\":", program.position,
                      ",\"dtype\":", JsonString(DTypeName(program.dtype)),
                      ",\"in_shape\":", Array(program.in_shape),
                      ",\"out_shape\":", Array(program.out_shape),
                      ",\"steps\":[", absl::StrJoin(steps, ","), "]}");
}

absl::StatusOr<std::string> ProgramsJson(const Mesh& mesh, const Plan& plan,
                                         std::optional<int64_t> position) {
  if (!position.has_value() && mesh.world_size() > kMaxProgramsRanks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "programs: a mesh of ", mesh.world_size(), " ranks has more than ",
        kMaxProgramsRanks, " programs; ask for one rank's"));
  }
  const int64_t first = position.value_or(0);
  const int64_t end = position.has_value() ? first + 1 : mesh.world_size();
  std::vector<std::string> programs;
  for (int64_t p = first; p < end; ++p) {
    absl::StatusOr<RankProgram> program = CompileRankProgram(mesh, plan, p);
    if (!program.ok()) return program.status();
    programs.push_back(RankProgramJson(*program));
  }
  return absl::StrCat("[", absl::StrJoin(programs, ","), "]");
}

}  // namespace reshard::executor
