// Text renderings of a planned batch (docs/DESIGN.md §8): the one JSON object
// of `reshardctl plan --batch --json` and its human-readable table. Kept apart
// from plan_format.h because a batch adds its own concepts (items that
// failed, buckets, totals before and after bucketing) around plan JSON.
#ifndef RESHARD_PLANNER_FORMAT_BATCH_FORMAT_H_
#define RESHARD_PLANNER_FORMAT_BATCH_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/batch/batch_plan.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"

namespace reshard {

// {"plans": [plan JSON (docs/DESIGN.md §4) or {"error": {"code", "message"}}],
//  "buckets": [{"op", "group", "reduce_op", "avg_divisor", "bytes",
//  "members": [{"tensor", "step"}]}], "collectives_before",
//  "collectives_after", "time_us_before", "time_us_after", "peak_bytes"} on
// one line.
// `reduce_op` is null for data movement; codes are gRPC code names.
std::string BatchJson(const Mesh& mesh, const BatchPlan& batch);

// {"op", "group", "reduce_op", "avg_divisor", "bytes", "members"} of one
// bucket (also the executor's per-bucket reports start from it).
std::string BucketJson(const Mesh& mesh, const Bucket& bucket);

// {"code": "INVALID_ARGUMENT", "message": "..."}.
std::string StatusJson(const absl::Status& status);

// One line per item (name, shape, dtype, src -> dst, communicating steps,
// modelled µs, or its error), one per bucket (op, group, reduce op,
// members, bytes, µs), then collectives and modelled time before and after
// bucketing. `names` label the items (`items[i]` where empty or short).
std::string BatchTable(const Mesh& mesh, const BatchPlan& batch,
                       const std::vector<std::string>& names);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_BATCH_FORMAT_H_
