// Plans the docs/DESIGN.md §4 example offline through the installed headers
// and libraries, prints its steps' ops, and builds a Client (no server
// needed to construct one).
#include <iostream>

#include "reshard/client.h"

int main() {
  reshard::MeshSpec spec{{2, 2, 2}, {"A", "B", "C"}, {}, {{"A", "C"}}, {}};
  const reshard::Mesh mesh = *reshard::Mesh::Create(spec);
  const auto request = reshard::ParsePlanRequest(
      mesh, {16, 16}, "f32", "P(sum),R,P(sum)", "R,R,R", {});
  const auto plan = reshard::MakePlan(mesh, *request);
  if (!plan.ok()) return 1;
  for (const reshard::Step& step : plan->steps) {
    std::cout << reshard::StepOpName(step.op) << " ";
  }
  std::cout << plan->steps.size() << "\n";
  return reshard::Client::Create({}).ok() ? 0 : 1;
}
