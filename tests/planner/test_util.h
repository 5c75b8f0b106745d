// Small helpers shared by the planner and service tests.
#ifndef RESHARD_TESTS_PLANNER_TEST_UTIL_H_
#define RESHARD_TESTS_PLANNER_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"

namespace reshard::testing {

// A mesh with dims named A, B, C, ... and the given flattened groups.
inline Mesh MakeMesh(std::vector<int64_t> shape,
                     std::vector<std::vector<std::string>> flattened = {}) {
  MeshSpec spec;
  spec.shape = std::move(shape);
  const char* names[] = {"A", "B", "C", "D", "E", "F", "G", "H"};
  for (size_t d = 0; d < spec.shape.size(); ++d)
    spec.dim_names.push_back(names[d]);
  spec.flattened = std::move(flattened);
  return *Mesh::Create(spec);
}

// "all_reduce(C) all_gather(B) ..." for compact expectations.
inline std::string Ops(const Mesh& mesh, const Plan& plan) {
  std::string out;
  for (const Step& s : plan.steps) {
    if (!out.empty()) out += " ";
    out += absl::StrCat(StepOpName(s.op), "(", mesh.GroupName(s.group), ")");
  }
  return out;
}

// Plans an f32 tensor from text placements; every plan produced is checked
// by the reference simulator (a failed check fails the calling test).
inline absl::StatusOr<Plan> PlanChecked(const Mesh& mesh,
                                        std::vector<int64_t> shape,
                                        const std::string& src,
                                        const std::string& dst,
                                        const PlanOptions& options) {
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, std::move(shape), "f32", src, dst, options);
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  if (plan.ok()) {
    const absl::Status check = CheckPlan(mesh, *plan);
    EXPECT_TRUE(check.ok()) << check;
  }
  return plan;
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_PLANNER_TEST_UTIL_H_
