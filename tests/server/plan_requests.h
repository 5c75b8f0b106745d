// Plan requests the service tests send: a small one (planned at once)
// and a heavy one (a search of ~10^8 placements).
#ifndef RESHARD_TESTS_SERVER_PLAN_REQUESTS_H_
#define RESHARD_TESTS_SERVER_PLAN_REQUESTS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "reshard/v1/planner.pb.h"

namespace reshard::testing {

// Mesh [4], tensor [8], S(0) -> R.
inline v1::PlanRequest SmallPlan() {
  v1::PlanRequest request;
  request.mutable_mesh()->add_shape(4);
  request.mutable_tensor()->add_shape(8);
  request.mutable_src()->set_text("S(0)");
  request.mutable_dst()->set_text("R");
  return request;
}

// Mesh [2]*8, tensor [16]*8, S(0),...,S(7) -> S(7),...,S(0) at `budget`
// (a 3.7 GB search at the largest budget).
inline v1::PlanRequest HeavyPlan(int64_t budget) {
  v1::PlanRequest request;
  std::string src, dst;
  for (int d = 0; d < 8; ++d) {
    request.mutable_mesh()->add_shape(2);
    request.mutable_tensor()->add_shape(16);
    absl::StrAppend(&src, d ? "," : "", "S(", d, ")");
    absl::StrAppend(&dst, d ? "," : "", "S(", 7 - d, ")");
  }
  request.mutable_src()->set_text(src);
  request.mutable_dst()->set_text(dst);
  request.mutable_options()->set_search_budget(budget);
  return request;
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_SERVER_PLAN_REQUESTS_H_
