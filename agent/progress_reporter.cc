#include "agent/progress_reporter.h"

#include <chrono>

namespace reshard::agent {

ProgressReporter::ProgressReporter(
    std::shared_ptr<v1::Coordinator::StubInterface> stub, v1::AgentId agent,
    std::string run_id, absl::Duration period)
    : stub_(std::move(stub)),
      agent_(std::move(agent)),
      run_id_(std::move(run_id)),
      task_(period, false, [this] { return Tick(); }) {}

bool ProgressReporter::Tick() {
  const int done = done_.load();
  if (done == sent_) return true;
  v1::ProgressRequest request;
  *request.mutable_agent() = agent_;
  request.set_run_id(run_id_);
  request.set_executions_done(done);
  v1::ProgressResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  stub_->Progress(&context, request, &response);
  sent_ = done;
  return true;
}

}  // namespace reshard::agent
