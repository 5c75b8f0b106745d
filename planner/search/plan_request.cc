#include "planner/search/plan_request.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/core/state_text.h"

namespace reshard {

absl::StatusOr<PlanRequest> ParsePlanRequest(
    const Mesh& mesh, std::vector<int64_t> shape, absl::string_view dtype,
    absl::string_view src, absl::string_view dst, PlanOptions options) {
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor.dtype: unknown dtype \"", dtype,
        "\"; expected float32, float64, bfloat16, float16, int32 or int64"));
  }
  absl::StatusOr<TensorSpec> tensor =
      TensorSpec::Create(std::move(shape), *parsed_dtype);
  if (!tensor.ok()) return tensor.status();
  absl::StatusOr<DistState> src_state =
      ParseDistState(src, mesh.ndim(), tensor->rank(), "src");
  if (!src_state.ok()) return src_state.status();
  absl::StatusOr<DistState> dst_state =
      ParseDistState(dst, mesh.ndim(), tensor->rank(), "dst");
  if (!dst_state.ok()) return dst_state.status();
  return PlanRequest{*std::move(tensor), *src_state, *dst_state, options};
}

}  // namespace reshard
