#include "client/batch_command.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/batch_file.h"
#include "client/plan_flags.h"
#include "planner/format/batch_format.h"
#include "planner/search/plan_cache.h"
#include "reshard/client.h"

namespace reshard::client {
namespace {

absl::Status RefuseTensorFlags(const CliArgs& args) {
  for (const char* flag : {"shape", "dtype", "from", "to"}) {
    if (args.Has(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag,
                       ": not with --batch (each line of the batch file names "
                       "its tensor)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchOptions> BatchOptionsFromFlags(const CliArgs& args) {
  BatchOptions options;
  absl::Status s = ParseByteFlag(args, "bucket_bytes", 0, options.bucket_bytes);
  if (!s.ok()) return s;
  return options;
}

// `status` of the sent item `k` as item `index` of the whole batch: the
// service names items by their place in what it was sent.
absl::Status Renumbered(const absl::Status& status, size_t k, int index) {
  const std::string sent = absl::StrCat("items[", k, "].");
  absl::string_view message = status.message();
  if (!absl::ConsumePrefix(&message, sent)) return status;
  return absl::Status(status.code(),
                      absl::StrCat("items[", index, "].", message));
}

// The service's answer for the items that parsed, put back at their places
// among the items that did not (which keep their own errors).
BatchPlan Merge(const std::vector<absl::StatusOr<PlanRequest>>& requests,
                const std::vector<int>& sent, BatchPlan remote) {
  BatchPlan merged;
  merged.plans.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    merged.plans.push_back(
        requests[i].ok()
            ? absl::StatusOr<Plan>(Plan())
            : absl::StatusOr<Plan>(BatchItemError(i, requests[i].status())));
  }
  for (size_t k = 0; k < sent.size(); ++k) {
    absl::StatusOr<Plan>& plan = remote.plans[k];
    merged.plans[sent[k]] =
        plan.ok() ? std::move(plan)
                  : absl::StatusOr<Plan>(Renumbered(plan.status(), k, sent[k]));
  }
  merged.schedule = std::move(remote.schedule);
  for (Bucket& bucket : merged.schedule.buckets) {
    for (BucketMember& m : bucket.members) m.tensor = sent[m.tensor];
  }
  return merged;
}

absl::StatusOr<BatchPlan> PlanOnService(
    const ServerFlags& server, const Mesh& mesh,
    const std::vector<absl::StatusOr<PlanRequest>>& requests,
    const BatchOptions& options) {
  std::vector<PlanRequest> parsed;
  std::vector<int> sent;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].ok()) continue;
    parsed.push_back(*requests[i]);
    sent.push_back(static_cast<int>(i));
  }
  if (parsed.empty()) {  // nothing to send; the core answers the errors
    PlanCache unused(1);
    return PlanBatch(mesh, requests, options, unused);
  }
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<BatchPlan> remote =
      (*client)->PlanBatchBucketed(mesh, parsed, options);
  if (!remote.ok()) return remote.status();
  return Merge(requests, sent, *std::move(remote));
}

// Each item's error says which item of which file it is: its name and
// line after the field path, "items[1].src[0]: ... (item \"b\",
// FILE line 2)".
void Locate(BatchPlan& batch, const std::vector<BatchFileItem>& items,
            const std::string& path) {
  for (size_t i = 0; i < batch.plans.size() && i < items.size(); ++i) {
    const absl::Status& s = batch.plans[i].status();
    if (s.ok()) continue;
    batch.plans[i] = absl::Status(
        s.code(), absl::StrCat(s.message(), " (item \"", items[i].name, "\", ",
                               path, " line ", items[i].line, ")"));
  }
}

absl::Status FirstItemError(const BatchPlan& batch) {
  for (const absl::StatusOr<Plan>& plan : batch.plans) {
    if (!plan.ok()) return plan.status();
  }
  return absl::OkStatus();
}

}  // namespace

bool HasBatchFlag(const std::vector<std::string>& argv) {
  return std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
    return a == "--batch" || absl::StartsWith(a, "--batch=");
  });
}

std::vector<std::string> BatchFlags() { return {"batch", "bucket_bytes"}; }

absl::StatusOr<PlannedBatch> PlanBatchFromFlags(
    const CliArgs& args, const std::optional<ServerFlags>& server) {
  if (absl::Status s = RefuseTensorFlags(args); !s.ok()) return s;
  absl::StatusOr<Mesh> mesh = MeshFromFlags(args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<PlanOptions> options = OptionsFromFlags(args);
  if (!options.ok()) return options.status();
  absl::StatusOr<BatchOptions> batch_options = BatchOptionsFromFlags(args);
  if (!batch_options.ok()) return batch_options.status();
  absl::StatusOr<std::vector<BatchFileItem>> items =
      ReadBatchFile(*args.Get("batch"));
  if (!items.ok()) return items.status();
  std::vector<absl::StatusOr<PlanRequest>> requests =
      BatchRequests(*mesh, *items, *options);
  absl::StatusOr<BatchPlan> batch;
  if (server.has_value()) {
    batch = PlanOnService(*server, *mesh, requests, *batch_options);
  } else {
    PlanCache cache(std::max<size_t>(1, requests.size()));
    batch = PlanBatch(*mesh, requests, *batch_options, cache);
  }
  if (!batch.ok()) return batch.status();
  Locate(*batch, *items, *args.Get("batch"));
  if (args.Has("all_or_nothing")) {
    if (absl::Status s = FirstItemError(*batch); !s.ok()) return s;
  }
  return PlannedBatch{*std::move(mesh), BatchNames(*items), *std::move(batch),
                      *options};
}

absl::Status RunPlanBatch(const ServerFlags& server,
                          const std::vector<std::string>& argv,
                          std::ostream& out) {
  std::set<std::string> flags = PlanFlags();
  for (const std::string& f : BatchFlags()) flags.insert(f);
  absl::StatusOr<CliArgs> args = CliArgs::Parse(
      argv, flags, {"offline", "merge", "json", "all_or_nothing"});
  if (!args.ok()) return args.status();
  absl::StatusOr<PlannedBatch> planned = PlanBatchFromFlags(
      *args,
      args->Has("offline") ? std::nullopt : std::optional<ServerFlags>(server));
  if (!planned.ok()) return planned.status();
  if (args->Has("json")) {
    out << BatchJson(planned->mesh, planned->batch) << "\n";
  } else {
    out << BatchTable(planned->mesh, planned->batch, planned->names);
  }
  return FirstItemError(planned->batch);
}

absl::StatusOr<executor::BatchWork> RunnableBatch(const PlannedBatch& planned,
                                                  bool bucketed) {
  executor::BatchWork work;
  for (const absl::StatusOr<Plan>& plan : planned.batch.plans) {
    if (!plan.ok()) {  // a batch runs whole or not at all
      return absl::InvalidArgumentError(
          absl::StrCat("--batch: ", plan.status().message()));
    }
    work.plans.push_back(*plan);
  }
  const CostOptions cost{planned.options.cost_model,
                         planned.options.devices_per_host};
  work.schedule =
      bucketed ? planned.batch.schedule
               : UnbucketedSchedule(planned.mesh, work.PlanPointers(), cost);
  work.bucketed = bucketed;
  work.names = planned.names;
  return work;
}

}  // namespace reshard::client
