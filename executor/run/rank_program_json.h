// A RankProgram as JSON (docs/PLAN_JSON.md, "Rank programs"): what the
// Python package reads to run a plan with torch ops, from the native module
// or from a plan JSON's `programs` field.
#ifndef RESHARD_EXECUTOR_RUN_RANK_PROGRAM_JSON_H_
#define RESHARD_EXECUTOR_RUN_RANK_PROGRAM_JSON_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "executor/run/rank_program.h"

namespace reshard::executor {

// One object, on one line.
std::string RankProgramJson(const RankProgram& program);

// The most ranks whose programs one plan JSON carries (a program's size
// grows with its rank's steps, not the mesh, so this bounds the field).
inline constexpr int64_t kMaxProgramsRanks = 1024;

// The plan JSON's `programs` field, a JSON array: every rank's program, or
// the one at `position`. INVALID_ARGUMENT when the plan is malformed, the
// position is not in the mesh, or every rank's is asked of a mesh of more
// than kMaxProgramsRanks ranks.
absl::StatusOr<std::string> ProgramsJson(const Mesh& mesh, const Plan& plan,
                                         std::optional<int64_t> position);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_RANK_PROGRAM_JSON_H_
