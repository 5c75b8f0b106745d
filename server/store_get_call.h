// A StoreGet on gRPC's callback API: while it waits for its keys it is a
// reactor, an alarm and the core's StoreWait, never a thread. It ends when
// the core answers (Coordinator::AwaitStore), its alarm fires at the wait's
// deadline (Expire), or its caller goes away (Drop); the core answers only
// once, so whichever comes first finishes the call.
#ifndef RESHARD_SERVER_STORE_GET_CALL_H_
#define RESHARD_SERVER_STORE_GET_CALL_H_

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "grpcpp/alarm.h"
#include "grpcpp/grpcpp.h"

namespace reshard::server {

class StoreGetCall final : public grpc::ServerUnaryReactor {
 public:
  // The call now waits on `wait` until `deadline`.
  void Watch(const coordinator::Coordinator::StoreWait& wait,
             absl::Time deadline);

  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  ~StoreGetCall() override = default;

  absl::Mutex mu_;
  std::optional<coordinator::Coordinator::StoreWait> wait_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // Its callback holds a copy of the wait, not the call: it may run after
  // the call is gone, and then finds nothing to expire.
  grpc::Alarm alarm_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_STORE_GET_CALL_H_
