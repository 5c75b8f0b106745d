// One agent's dispatch stream on gRPC's callback API (docs/DESIGN.md §5,
// Dispatch): it holds no thread while the agent waits for work, so
// thousands of connected ranks cost memory, not threads. The agent's mailbox
// wakes it on every Push and on Close; it writes one item at a time and
// finishes UNAVAILABLE with the mailbox's reason once the mailbox is closed and
// empty, or when the agent goes away.
#ifndef RESHARD_SERVER_DISPATCH_STREAM_H_
#define RESHARD_SERVER_DISPATCH_STREAM_H_

#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/mailbox.h"
#include "grpcpp/support/server_callback.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard::server {

class DispatchStream final : public grpc::ServerWriteReactor<v1::Work> {
 public:
  // Runs when the stream is over, with the status it finished with.
  using OnEnd = std::function<void(const grpc::Status&)>;

  // Starts streaming the agent's `mailbox` (just connected): sends the
  // initial metadata (the agent then knows it is connected) and any work
  // already queued. Deletes itself when gRPC is done with it, after
  // `on_end`.
  DispatchStream(std::shared_ptr<coordinator::Mailbox> mailbox, OnEnd on_end);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Writes the next item unless a write is in flight, or finishes once the
  // mailbox is closed and empty.
  void Pump();
  // Finishes with `status` unless already finished (never while a write
  // is in flight).
  void FinishOnce(const grpc::Status& status);

  const std::shared_ptr<coordinator::Mailbox> mailbox_;
  const OnEnd on_end_;
  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // the agent went away
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  v1::Work work_;  // the write in flight (only one at a time)
};

// A dispatch stream refused before it started (draining, bad credentials,
// a rank not joined): finishes at once with `status`.
class RefusedStream final : public grpc::ServerWriteReactor<v1::Work> {
 public:
  explicit RefusedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_DISPATCH_STREAM_H_
