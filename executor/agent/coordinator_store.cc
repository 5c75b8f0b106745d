#include "executor/agent/coordinator_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gloo/common/error.h"
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

// The exception Gloo's callers expect, naming what failed and why; a
// deadline says "timed out" so the Gloo backend maps it to
// DEADLINE_EXCEEDED.
[[noreturn]] void Throw(absl::string_view what, const grpc::Status& status) {
  const bool timeout = status.error_code() == grpc::DEADLINE_EXCEEDED;
  throw gloo::IoException(absl::StrCat(
      "coordinator store: ", what, timeout ? " timed out" : " failed",
      " (code ", static_cast<int>(status.error_code()),
      "): ", status.error_message()));
}

}  // namespace

CoordinatorStore::CoordinatorStore(
    std::shared_ptr<v1::Coordinator::StubInterface> stub, v1::AgentId agent,
    std::chrono::milliseconds rpc_timeout,
    std::chrono::milliseconds default_wait)
    : stub_(std::move(stub)),
      agent_(std::move(agent)),
      rpc_timeout_(rpc_timeout),
      default_wait_(default_wait) {}

void CoordinatorStore::SetRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  run_id_ = run_id;
  fetched_.clear();
}

std::string CoordinatorStore::Run() const {
  absl::MutexLock lock(&mu_);
  return run_id_;
}

void CoordinatorStore::set(const std::string& key,
                           const std::vector<char>& data) {
  v1::StoreSetRequest request;
  *request.mutable_agent() = agent_;
  request.set_run_id(Run());
  request.set_key(key);
  request.set_value(std::string(data.begin(), data.end()));
  v1::StoreSetResponse response;
  grpc::ClientContext context;
  SetDeadline(context, rpc_timeout_);
  const grpc::Status status = stub_->StoreSet(&context, request, &response);
  if (!status.ok()) {
    Throw(absl::StrCat("set \"", key, "\" (run ", request.run_id(), ")"),
          status);
  }
}

std::vector<std::string> CoordinatorStore::Fetch(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  v1::StoreGetRequest request;
  *request.mutable_agent() = agent_;
  request.set_run_id(Run());
  for (const std::string& key : keys) request.add_keys(key);
  request.set_wait_seconds(std::chrono::duration<double>(timeout).count());
  v1::StoreGetResponse response;
  grpc::ClientContext context;
  SetDeadline(context, timeout + kWaitMargin);
  const grpc::Status status = stub_->StoreGet(&context, request, &response);
  const std::string what =
      absl::StrCat("waiting ", timeout.count(), "ms for keys ", Keys(keys),
                   " (run ", request.run_id(), ")");
  if (!status.ok()) Throw(what, status);
  if (response.values_size() != static_cast<int>(keys.size())) {
    throw gloo::IoException(absl::StrCat("coordinator store: ", what,
                                         " returned ", response.values_size(),
                                         " values for ", keys.size(), " keys"));
  }
  return {response.values().begin(), response.values().end()};
}

std::vector<char> CoordinatorStore::get(const std::string& key) {
  {
    absl::MutexLock lock(&mu_);
    auto it = fetched_.find(key);
    if (it != fetched_.end()) {
      std::vector<char> value = std::move(it->second);
      fetched_.erase(it);
      return value;
    }
  }
  const std::string value = Fetch({key}, default_wait_).front();
  return {value.begin(), value.end()};
}

void CoordinatorStore::wait(const std::vector<std::string>& keys) {
  wait(keys, default_wait_);
}

void CoordinatorStore::wait(const std::vector<std::string>& keys,
                            const std::chrono::milliseconds& timeout) {
  if (keys.empty()) return;
  std::vector<std::string> values = Fetch(keys, timeout);
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < keys.size(); ++i) {
    fetched_[keys[i]].assign(values[i].begin(), values[i].end());
  }
}

}  // namespace reshard::agent
