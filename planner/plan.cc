#include "planner/plan.h"

#include <algorithm>

namespace reshard {

int Plan::CommunicatingSteps(const Mesh& mesh) const {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(),
                    [&](const Step& s) { return s.IsCommunicating(mesh); }));
}

int Plan::CountOp(StepOp op) const {
  return static_cast<int>(std::count_if(
      steps.begin(), steps.end(), [&](const Step& s) { return s.op == op; }));
}

}  // namespace reshard
