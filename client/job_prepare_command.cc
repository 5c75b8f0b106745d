#include "client/job_prepare_command.h"

#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "client/cross_plan_command.h"
#include "common/json_text.h"
#include "common/schedule_bounds.h"
#include "planner/format/cross_plan_format.h"
#include "reshard/client.h"

namespace reshard::client {

const char kJobPrepareUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job prepare NAME\n"
    "         --src_mesh ... --dst_mesh ... [cross-mesh plan flags] [--json]\n"
    "       reshardctl [--server ...] job prepare NAME [--offline] --src_mesh\n"
    "         ... --dst_mesh ... --batch FILE [--bucket_bytes B] [--json]\n"
    "       reshardctl [--server ...] job prepare NAME --delete ID\n"
    "  Plans a cross-mesh move once (the flags of `plan --src_mesh ...`)\n"
    "  for job NAME and keeps it there as a schedule; prints its id, the\n"
    "  job's generation and the plan (--json: one object with schedule_id,\n"
    "  generation, schedules and plan). With --batch FILE (lines of `plan\n"
    "  --src_mesh --batch`) the job's replica plans a batch (--offline:\n"
    "  this client, printing the plans) and keeps it whole (--json adds\n"
    "  tensors). `job run NAME --schedule ID` runs it (a batch's with one\n"
    "  --tensor and --into name per line on registered tensors) without\n"
    "  planning, and once every agent keeps it without sending the\n"
    "  plan. A schedule holds until deleted (--delete ID) or until an agent\n"
    "  of the job joins or leaves: a run of it then fails\n"
    "  FAILED_PRECONDITION (\"prepare again\"). A job keeps at most 16.\n";

static_assert(kMaxSchedulesPerJob == 16, "kJobPrepareUsage says 16");

namespace {

// The schedule's id, generation and count (with `json` one object, its
// "plan" `plan_json` when given, and a batch's "tensors").
void PrintPrepared(const CrossSchedule& schedule, const std::string& job,
                   bool json, std::ostream& out,
                   const std::string& plan_json = "") {
  if (json) {
    out << "{\"schedule_id\":" << JsonString(schedule.id)
        << ",\"generation\":" << schedule.generation
        << ",\"schedules\":" << schedule.schedules;
    if (schedule.batch_tensors > 0) {
      out << ",\"tensors\":" << schedule.batch_tensors;
    }
    if (!plan_json.empty()) out << ",\"plan\":" << plan_json;
    out << "}\n";
    return;
  }
  out << "schedule " << schedule.id << " prepared for job " << job
      << " (generation " << schedule.generation << "; the job holds "
      << schedule.schedules << " of at most " << kMaxSchedulesPerJob << ")";
  if (schedule.batch_tensors > 0) {
    out << ": a batch of " << schedule.batch_tensors << " tensors";
  }
  out << "\n";
}

// `job prepare NAME --offline --src_mesh ... --batch FILE`: the batch
// planned here, kept by the job as one schedule.
absl::Status PrepareBatch(Client& client, const std::string& job,
                          const CliArgs& args, const CrossMeshes& meshes,
                          std::ostream& out) {
  if (!args.Has("offline")) {  // the job's replica plans it
    absl::StatusOr<CrossBatch> lines = CrossBatchLinesFromFlags(args, meshes);
    if (!lines.ok()) return lines.status();
    absl::StatusOr<std::vector<Client::CrossBatchRequestTensor>> requests =
        CrossBatchRequests(*lines);
    if (!requests.ok()) return requests.status();
    absl::StatusOr<CrossSchedule> schedule =
        client.PrepareCrossBatch(job, *requests, lines->bucket_bytes);
    if (!schedule.ok()) return schedule.status();
    PrintPrepared(*schedule, job, args.Has("json"), out);
    return absl::OkStatus();
  }
  absl::StatusOr<CrossBatch> batch = CrossBatchFromFlags(args, meshes);
  if (!batch.ok()) return batch.status();
  absl::StatusOr<std::vector<executor::CrossWork>> works =
      CrossBatchWorks(*batch);
  if (!works.ok()) return works.status();
  absl::StatusOr<CrossSchedule> schedule = client.PrepareCrossBatch(
      job, CrossBatchTensors(*batch, *works), batch->bucket_bytes);
  if (!schedule.ok()) return schedule.status();
  PrintPrepared(
      *schedule, job, args.Has("json"), out,
      CrossBatchJson(meshes.src, meshes.dst, batch->items, batch->plan));
  if (!args.Has("json")) out << CrossBatchTable(batch->items, batch->plan);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunJobPrepareCommand(const ServerFlags& server,
                                  const std::string& job,
                                  absl::Span<const std::string> argv,
                                  std::ostream& out) {
  std::set<std::string> values = CrossPlanFlags();
  values.insert("delete");
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, values, {"json", "offline"});
  if (!args.ok()) return args.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  if (args->Has("delete")) {
    const std::string id = *args->Get("delete");
    absl::Status s = (*client)->DeleteSchedule(job, id);
    if (s.ok()) out << "schedule " << id << " of job " << job << " deleted\n";
    return s;
  }
  absl::StatusOr<CrossMeshes> meshes = CrossMeshesFromFlags(*args);
  if (!meshes.ok()) return meshes.status();
  if (args->Has("batch")) {
    return PrepareBatch(**client, job, *args, *meshes, out);
  }
  absl::StatusOr<CrossMeshRequest> request =
      CrossRequestFromFlags(*args, *meshes);
  if (!request.ok()) return request.status();
  absl::StatusOr<CrossSchedule> schedule =
      (*client)->PrepareCrossMesh(job, meshes->src, meshes->dst, *request);
  if (!schedule.ok()) return schedule.status();
  PrintPrepared(
      *schedule, job, args->Has("json"), out,
      CrossPlanJson(schedule->src_mesh, schedule->dst_mesh, schedule->plan));
  if (!args->Has("json")) {
    out << CrossPlanTable(schedule->src_mesh, schedule->dst_mesh,
                          schedule->plan);
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
