// What every unary call of the Planner and Coordinator services goes
// through, on either gRPC API: it counts as in flight (for a graceful
// drain), is refused UNAVAILABLE while the server drains (where its service
// says so) and INVALID_ARGUMENT when its request is past a field's bound
// (server/message_bounds.h), has its response refused over
// --max_message_bytes, its code and duration recorded in its method's
// series (server/rpc_metrics.h), and a failure logged in one line.
#ifndef RESHARD_SERVER_SERVICE_CALL_H_
#define RESHARD_SERVER_SERVICE_CALL_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "server/request_plan.h"
#include "server/rpc_metrics.h"

namespace reshard::server {

// A service's calls together: whether it drains, and how many run.
class CallGate {
 public:
  // Every call is refused from now on (clients move to another replica).
  void StartDraining() { draining_ = true; }
  bool draining() const { return draining_; }
  int in_flight() const { return in_flight_; }
  // Once no call is in flight and none began for a quiet moment: true;
  // false at `deadline`.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline) const;

 private:
  friend class ServiceCall;
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<int64_t> last_call_ns_{0};  // steady clock
};

// The one message of a refusal while draining.
absl::Status DrainingError();

class ServiceCall {
 public:
  // Whether a draining server refuses the call (agents' reports and the
  // calls of runs in flight are served until the runs end).
  enum class Drain { kRefuse, kServe };

  // Begins call `method` (which names it in logs; `metrics` may be null)
  // with `request`, under `options`' bounds.
  ServiceCall(CallGate& gate, const grpc::ServerContextBase& ctx,
              const char* method, RpcMethodMetrics* metrics,
              const google::protobuf::Message& request,
              const ServiceOptions& options, Drain drain = Drain::kRefuse);
  ~ServiceCall() {
    if (!ended_) --gate_.in_flight_;
  }
  ServiceCall(const ServiceCall&) = delete;
  ServiceCall& operator=(const ServiceCall&) = delete;

  // Why the call is refused before its work runs (OK: it runs).
  const absl::Status& refusal() const { return refusal_; }
  // Ends the call with `status`, or with the refusal of a `response` over
  // --max_message_bytes (the response cleared): no longer in flight, then
  // recorded (so a scrape that sees it counted sees it ended), logged when
  // not OK, and returned as what to send. `response` may be null for a
  // refusal (a stream refused before it starts).
  grpc::Status End(absl::Status status, google::protobuf::Message* response);

 private:
  CallGate& gate_;
  const grpc::ServerContextBase& ctx_;
  const char* const method_;
  RpcMethodMetrics* const metrics_;
  const ServiceOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  absl::Status refusal_;
  bool ended_ = false;  // End ran: no longer in flight
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_SERVICE_CALL_H_
