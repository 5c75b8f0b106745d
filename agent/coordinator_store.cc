#include "agent/coordinator_store.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/backoff.h"
#include "grpcpp/client_context.h"

namespace reshard::agent {
namespace {

std::string Keys(const std::vector<std::string>& keys) {
  return absl::StrCat("[", absl::StrJoin(keys, ", "), "]");
}

void SetDeadline(grpc::ClientContext& context,
                 std::chrono::milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

// The RPC's failure as a status of the same code, naming what failed; a
// deadline says "timed out".
absl::Status Failed(absl::string_view what, const grpc::Status& status) {
  const bool timeout = status.error_code() == grpc::DEADLINE_EXCEEDED;
  return absl::Status(
      static_cast<absl::StatusCode>(status.error_code()),
      absl::StrCat("coordinator store: ", what,
                   timeout ? " timed out" : " failed", " (code ",
                   static_cast<int>(status.error_code()),
                   "): ", status.error_message()));
}

}  // namespace

CoordinatorStore::CoordinatorStore(
    std::shared_ptr<v1::Coordinator::StubInterface> stub, v1::AgentId agent,
    std::chrono::milliseconds rpc_timeout)
    : stub_(std::move(stub)),
      agent_(std::move(agent)),
      rpc_timeout_(rpc_timeout) {}

void CoordinatorStore::SetRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  run_id_ = run_id;
}

std::string CoordinatorStore::Run() const {
  absl::MutexLock lock(&mu_);
  return run_id_;
}

template <typename Request>
Request CoordinatorStore::Stamped() const {
  Request request;
  *request.mutable_agent() = agent_;
  request.set_run_id(Run());
  return request;
}

absl::Status CoordinatorStore::Set(const std::string& key,
                                   const std::string& value) {
  auto request = Stamped<v1::StoreSetRequest>();
  request.set_key(key);
  request.set_value(value);
  v1::StoreSetResponse response;
  grpc::ClientContext context;
  SetDeadline(context, rpc_timeout_);
  const grpc::Status status = stub_->StoreSet(&context, request, &response);
  if (status.ok()) return absl::OkStatus();
  return Failed(absl::StrCat("set \"", key, "\" (run ", request.run_id(), ")"),
                status);
}

absl::StatusOr<std::vector<std::string>> CoordinatorStore::Get(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  if (keys.empty()) return std::vector<std::string>();
  auto request = Stamped<v1::StoreGetRequest>();
  for (const std::string& key : keys) request.add_keys(key);
  v1::StoreGetResponse response;
  // A server holding its most waiting calls refuses at once: try again
  // until the wait's own deadline, as the rendezvous would have waited.
  const absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  Backoff backoff(reinterpret_cast<uintptr_t>(&response));
  grpc::Status status;
  while (true) {
    grpc::ClientContext context;
    const absl::Duration left =
        std::max(deadline - absl::Now(), absl::ZeroDuration());
    request.set_wait_seconds(absl::ToDoubleSeconds(left));
    SetDeadline(context, absl::ToChronoMilliseconds(left) + kWaitMargin);
    status = stub_->StoreGet(&context, request, &response);
    const absl::Duration pause = backoff.Next();
    if (status.error_code() != grpc::RESOURCE_EXHAUSTED ||
        absl::Now() + pause >= deadline) {
      break;
    }
    absl::SleepFor(pause);
  }
  const std::string what =
      absl::StrCat("waiting ", timeout.count(), "ms for keys ", Keys(keys),
                   " (run ", request.run_id(), ")");
  if (!status.ok()) return Failed(what, status);
  if (response.values_size() != static_cast<int>(keys.size())) {
    return absl::DataLossError(absl::StrCat(
        "coordinator store: ", what, " returned ", response.values_size(),
        " values for ", keys.size(), " keys"));
  }
  return std::vector<std::string>(response.values().begin(),
                                  response.values().end());
}

absl::Status CoordinatorStore::DeleteByPrefix(const std::string& prefix) {
  auto request = Stamped<v1::StoreDeleteRequest>();
  request.set_prefix(prefix);
  v1::StoreDeleteResponse response;
  grpc::ClientContext context;
  SetDeadline(context, rpc_timeout_);
  const grpc::Status status = stub_->StoreDelete(&context, request, &response);
  if (status.ok()) return absl::OkStatus();
  return Failed(
      absl::StrCat("delete \"", prefix, "*\" (run ", request.run_id(), ")"),
      status);
}

}  // namespace reshard::agent
