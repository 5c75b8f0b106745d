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
    "       reshardctl [--server ...] job prepare NAME --delete ID\n"
    "  Plans a cross-mesh move once (the flags of `plan --src_mesh ...`)\n"
    "  for job NAME and keeps it there as a schedule; prints its id, the\n"
    "  job's generation and the plan (--json: one object with schedule_id,\n"
    "  generation, schedules and plan). `job run NAME --schedule ID` runs it\n"
    "  without planning, and once every agent keeps it without sending the\n"
    "  plan. A schedule holds until deleted (--delete ID) or until an agent\n"
    "  of the job joins or leaves: a run of it then fails\n"
    "  FAILED_PRECONDITION (\"prepare again\"). A job keeps at most 16.\n";

static_assert(kMaxSchedulesPerJob == 16, "kJobPrepareUsage says 16");

absl::Status RunJobPrepareCommand(const ServerFlags& server,
                                  const std::string& job,
                                  absl::Span<const std::string> argv,
                                  std::ostream& out) {
  std::set<std::string> values = CrossPlanFlags();
  values.insert("delete");
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, values, {"json"});
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
  absl::StatusOr<CrossMeshRequest> request =
      CrossRequestFromFlags(*args, *meshes);
  if (!request.ok()) return request.status();
  absl::StatusOr<CrossSchedule> schedule =
      (*client)->PrepareCrossMesh(job, meshes->src, meshes->dst, *request);
  if (!schedule.ok()) return schedule.status();
  if (args->Has("json")) {
    out << "{\"schedule_id\":" << JsonString(schedule->id)
        << ",\"generation\":" << schedule->generation
        << ",\"schedules\":" << schedule->schedules << ",\"plan\":"
        << CrossPlanJson(schedule->src_mesh, schedule->dst_mesh, schedule->plan)
        << "}\n";
    return absl::OkStatus();
  }
  out << "schedule " << schedule->id << " prepared for job " << job
      << " (generation " << schedule->generation << "; the job holds "
      << schedule->schedules << " of at most " << kMaxSchedulesPerJob << ")\n"
      << CrossPlanTable(schedule->src_mesh, schedule->dst_mesh, schedule->plan);
  return absl::OkStatus();
}

}  // namespace reshard::client
