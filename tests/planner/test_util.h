// Small helpers shared by the planner and service tests.
#ifndef RESHARD_TESTS_PLANNER_TEST_UTIL_H_
#define RESHARD_TESTS_PLANNER_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/mesh.h"
#include "planner/plan.h"

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

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_PLANNER_TEST_UTIL_H_
