#include "server/message_bounds.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/schedule_bounds.h"
#include "common/tensor_name.h"
#include "coordinator/limits.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/format/cross_plan_format.h"

namespace reshard::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr coordinator::CoordinatorLimits kCore;
// What names the proto gives one thing: the proto's own words.
constexpr int64_t kNameBytes = 64;       // dim names, ops, planners, codes
constexpr int64_t kIdBytes = 128;        // mesh and run ids, sessions
constexpr int64_t kStateBytes = 1024;    // state texts, group names
constexpr int64_t kMessageBytes = 4096;  // warnings', errors' messages
constexpr int64_t kRanks = int64_t{1} << 20;
constexpr int64_t kSteps = int64_t{1} << 16;
constexpr int64_t kDims = kMaxMeshDims;
constexpr int64_t kTokenBytes = 256;  // page tokens

constexpr FieldBound kBounds[] = {
    // Meshes, tensors and states (planner.proto).
    {"Mesh.shape", kDims, 0},
    {"Mesh.dim_names", kDims, kNameBytes},
    {"Mesh.rank_map", kRanks, 0},
    {"Mesh.flattened", (1 << kDims) - 1, 0},
    {"Mesh.links", kDims, 0},
    {"FlattenedGroup.dims", kDims, kNameBytes},
    {"Tensor.shape", kMaxTensorRank, 0},
    {"DistState.placements", kDims, 0},
    {"DistState.shard_order", kDims, 0},
    {"DistState.text", 0, kStateBytes},
    {"ShardOrderEntry.mesh_dims", kDims, 0},
    // Planner requests.
    {"GetMeshRequest.mesh_id", 0, kIdBytes, true},
    {"DeleteMeshRequest.mesh_id", 0, kIdBytes, true},
    {"ListMeshesRequest.page_token", 0, kTokenBytes, true},
    {"PlanRequest.mesh_id", 0, kIdBytes, true},
    {"PlanBatchRequest.mesh_id", 0, kIdBytes, true},
    {"PlanBatchRequest.items", kBatchItems, 0},
    {"ResolveGroupsRequest.mesh_id", 0, kIdBytes, true},
    {"PlanCrossMeshRequest.src_mesh_id", 0, kIdBytes, true},
    {"PlanCrossMeshRequest.dst_mesh_id", 0, kIdBytes, true},
    {"PlanCrossMeshRequest.unavailable_ranks", kRanks, 0},
    {"PlanCrossMeshBatchRequest.tensors", kBatchItems, 0},
    {"PlanCrossMeshBatchRequest.names", kBatchItems, kStateBytes},
    // Plans and batches given to RunJob.
    {"Plan.mesh_id", 0, kIdBytes, true},
    {"Plan.src", 0, kStateBytes},
    {"Plan.dst", 0, kStateBytes},
    {"Plan.planner", 0, kNameBytes},
    {"Plan.cost_model", 0, kNameBytes},
    {"Plan.steps", kSteps, 0},
    {"Plan.trace", 0, int64_t{1} << 20},
    {"Plan.warnings", kSteps, 0},
    {"Step.op", 0, kNameBytes},
    {"Step.mesh_dims", kDims, 0},
    {"Step.group", 0, kStateBytes},
    {"Step.from", 0, kStateBytes},
    {"Step.to", 0, kStateBytes},
    {"Warning.code", 0, kNameBytes},
    {"Warning.dims", kDims, kNameBytes},
    {"Warning.message", 0, kMessageBytes},
    {"PlanBatchResponse.plans", kBatchItems, 0},
    {"PlanBatchResponse.errors", kBatchItems, 0},
    {"PlanBatchResponse.buckets", kSteps, 0},
    {"BatchItemError.message", 0, kMessageBytes},
    {"Bucket.op", 0, kNameBytes},
    {"Bucket.mesh_dims", kDims, 0},
    {"Bucket.group", 0, kStateBytes},
    {"Bucket.members", kRanks, 0},
    {"GivenBatch.names", kBatchItems, kStateBytes},
    {"GivenCrossBatch.plans", kBatchItems, 0},
    {"GivenCrossBatch.names", kBatchItems, kStateBytes},
    {"CrossBatchRequest.tensors", kBatchItems, 0},
    {"CrossBatchRequest.names", kBatchItems, kStateBytes},
    {"CrossMeshPlan.src", 0, kStateBytes},
    {"CrossMeshPlan.dst", 0, kStateBytes},
    {"CrossMeshPlan.src_mid", 0, kStateBytes},
    {"CrossMeshPlan.dst_mid", 0, kStateBytes},
    {"CrossMeshPlan.transfers", kMaxListedTransfers, 0},
    {"CrossMeshPlan.warnings", kSteps, 0},
    {"CrossMeshPlan.layout_digest", 0, kNameBytes},
    {"Transfer.offset", kMaxTensorRank, 0},
    {"Transfer.extent", kMaxTensorRank, 0},
    {"SenderRule.name", 0, kNameBytes},
    {"SenderRule.unavailable_ranks", kRanks, 0},
    // Agents (coordinator.proto).
    {"AgentId.job", 0, kCore.max_job_name_bytes, true},
    {"AgentId.session", 0, kIdBytes, true},
    {"JoinRequest.version", 0, kCore.max_version_bytes, true},
    {"JoinRequest.host", 0, kCore.max_host_bytes, true},
    {"JoinRequest.capabilities", 16, kNameBytes, true},
    {"ReportRequest.run_id", 0, kIdBytes, true},
    {"RankReport.error", 0, 4 * kMessageBytes},
    {"RankReport.error_kind", 0, kNameBytes},
    {"RankReport.steps", kSteps, 0},
    {"RankReport.tensors", kBatchItems, 0},
    {"StepTiming.seconds", 100, 0},
    {"TensorCheck.validation_error", 0, kMessageBytes},
    {"TensorCheck.conservation", 0, kNameBytes},
    {"ProgressRequest.run_id", 0, kIdBytes, true},
    {"CommittedRequest.run_id", 0, kIdBytes, true},
    {"CommittedRequest.error", 0, 4 * kMessageBytes},
    {"StoreSetRequest.run_id", 0, kIdBytes, true},
    {"StoreSetRequest.key", 0, kCore.max_key_bytes},
    {"StoreSetRequest.value", 0, kCore.max_store_bytes_per_job},
    {"StoreGetRequest.run_id", 0, kIdBytes, true},
    {"StoreGetRequest.keys", kCore.max_store_keys_per_job, kCore.max_key_bytes},
    {"StoreDeleteRequest.run_id", 0, kIdBytes, true},
    {"StoreDeleteRequest.prefix", 0, kCore.max_key_bytes},
    // Callers of jobs.
    {"RunJobRequest.job", 0, kCore.max_job_name_bytes, true},
    {"RunJobRequest.tensors", kBatchItems, 0},
    {"TensorBinding.source", 0, kMaxTensorNameLength, true},
    {"TensorBinding.into", 0, kMaxTensorNameLength, true},
    {"GetJobRequest.job", 0, kCore.max_job_name_bytes, true},
    {"GetJobRequest.page_token", 0, kTokenBytes, true},
    {"ListJobsRequest.page_token", 0, kTokenBytes, true},
    {"CancelJobRequest.job", 0, kCore.max_job_name_bytes, true},
    {"RunJobRequest.schedule_id", 0, kMaxScheduleIdBytes, true},
    {"PrepareCrossMeshRequest.job", 0, kCore.max_job_name_bytes, true},
    {"DeleteScheduleRequest.job", 0, kCore.max_job_name_bytes, true},
    {"DeleteScheduleRequest.schedule_id", 0, kMaxScheduleIdBytes, true},
};

// A field the table misses (a new one, until the table and its test catch
// up) is still bounded.
constexpr FieldBound kUnlisted = {"", 1024, 1024};

const FieldBound& BoundOf(const FieldDescriptor* field) {
  static const auto* const by_name = [] {
    auto* map = new absl::flat_hash_map<std::string, const FieldBound*>();
    for (const FieldBound& bound : kBounds) {
      (*map)[absl::StrCat("reshard.v1.", bound.field)] = &bound;
    }
    return map;
  }();
  auto it = by_name->find(field->full_name());
  return it == by_name->end() ? kUnlisted : *it->second;
}

bool Printable(const std::string& text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

absl::Status CheckText(const std::string& text, const FieldBound& bound,
                       const std::string& path) {
  if (static_cast<int64_t>(text.size()) > bound.max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", text.size(), " bytes, at most ", bound.max_bytes));
  }
  if (bound.printable && !Printable(text)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": holds a byte outside printable ASCII"));
  }
  return absl::OkStatus();
}

bool IsText(const FieldDescriptor* field) {
  return field->type() == FieldDescriptor::TYPE_STRING ||
         field->type() == FieldDescriptor::TYPE_BYTES;
}

absl::Status CheckMessage(const Message& message, const std::string& path,
                          int64_t batch_items);

absl::Status CheckRepeated(const Message& message, const FieldDescriptor* field,
                           const std::string& path, int64_t batch_items) {
  const Reflection& reflection = *message.GetReflection();
  const FieldBound& bound = BoundOf(field);
  const int64_t max =
      bound.max_entries == kBatchItems ? batch_items : bound.max_entries;
  const int size = reflection.FieldSize(message, field);
  if (size > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", size, " entries, at most ", max,
        bound.max_entries == kBatchItems ? " (--max_batch_items)" : ""));
  }
  const bool nested = field->type() == FieldDescriptor::TYPE_MESSAGE;
  if (!nested && !IsText(field)) return absl::OkStatus();
  std::string scratch;
  for (int i = 0; i < size; ++i) {
    const std::string entry = absl::StrCat(path, "[", i, "]");
    absl::Status s =
        nested ? CheckMessage(reflection.GetRepeatedMessage(message, field, i),
                              entry, batch_items)
               : CheckText(reflection.GetRepeatedStringReference(message, field,
                                                                 i, &scratch),
                           bound, entry);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckMessage(const Message& message, const std::string& path,
                          int64_t batch_items) {
  const Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  std::string scratch;
  for (const FieldDescriptor* field : fields) {
    const std::string here =
        path.empty() ? field->name() : absl::StrCat(path, ".", field->name());
    absl::Status s;
    if (field->is_repeated()) {
      s = CheckRepeated(message, field, here, batch_items);
    } else if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      s = CheckMessage(reflection.GetMessage(message, field), here,
                       batch_items);
    } else if (IsText(field)) {
      s = CheckText(reflection.GetStringReference(message, field, &scratch),
                    BoundOf(field), here);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Span<const FieldBound> RequestFieldBounds() { return kBounds; }

absl::Status CheckRequestBounds(const Message& request, int64_t batch_items) {
  return CheckMessage(request, "", batch_items);
}

absl::Status CheckResponseSize(const Message& response, int64_t max_bytes) {
  const size_t bytes = response.ByteSizeLong();
  if (static_cast<int64_t>(bytes) <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("the reply would be ", bytes, " bytes, over this server's ",
                   "--max_message_bytes ", max_bytes,
                   ": ask for less (a page_size, fewer items or ranks)"));
}

}  // namespace reshard::server
