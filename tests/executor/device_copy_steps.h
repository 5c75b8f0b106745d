// What the device copy tests share: every copy program (before and after
// the collective) of random steps on every rank, with random buffers of
// the sizes the step uses.
#ifndef RESHARD_TESTS_EXECUTOR_DEVICE_COPY_STEPS_H_
#define RESHARD_TESTS_EXECUTOR_DEVICE_COPY_STEPS_H_

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/run/copy_program.h"
#include "executor/run/step_exec.h"
#include "tests/executor/executor_cases.h"

namespace reshard::executor::testing {

// A program's four buffers, filled at random.
struct ProgramBuffers {
  std::vector<char> in, out, wire_in, wire_out;

  ProgramBuffers(const CompiledStep& c, std::mt19937_64& rng) {
    const WireUse wire = WireOf(c);
    for (auto [buffer, bytes] :
         {std::pair{&in, c.Bytes(c.in_numel)},
          std::pair{&out, c.Bytes(c.out_numel)}, std::pair{&wire_in, wire.in},
          std::pair{&wire_out, wire.out}}) {
      buffer->resize(bytes);
      for (char& b : *buffer) b = static_cast<char>(rng());
    }
  }
  CopyBuffers Pointers() {
    return {in.data(), out.data(), wire_in.data(), wire_out.data()};
  }
  bool operator==(const ProgramBuffers&) const = default;
};

// Calls `visit(step, program, label)` for both programs of every step of
// random plans on every rank until `programs` non-empty programs were
// visited or `visit` returns false.
inline int ForEachStepProgram(
    int programs, std::mt19937_64& rng,
    const std::function<bool(const CompiledStep&, const CopyProgram&,
                             const std::string&)>& visit) {
  int visited = 0;
  while (visited < programs) {
    const reshard::testing::ExecCase c = reshard::testing::RandomExecCase(rng);
    for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
      for (size_t k = 0; k < c.plan.steps.size(); ++k) {
        const CompiledStep step =
            CompileStep(c.mesh, c.plan.tensor, c.plan.steps[k], p);
        const StepCopies copies = CopiesOf(step);
        for (const auto& [program, phase] :
             {std::pair{&copies.before, "before"},
              std::pair{&copies.after, "after"}}) {
          if (program->copies.empty() && program->fills.empty()) continue;
          ++visited;
          const std::string label =
              absl::StrCat("steps[", k, "] (", StepOpName(step.step.op),
                           ") at position ", p, ", ", phase);
          if (!visit(step, *program, label)) return visited;
        }
      }
    }
  }
  return visited;
}

}  // namespace reshard::executor::testing

#endif  // RESHARD_TESTS_EXECUTOR_DEVICE_COPY_STEPS_H_
