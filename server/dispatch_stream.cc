#include "server/dispatch_stream.h"

#include <optional>
#include <utility>

#include "proto/convert.h"
#include "proto/job_convert.h"

namespace reshard::server {
namespace {

grpc::Status Cancelled() {
  return grpc::Status(grpc::StatusCode::CANCELLED,
                      "the agent's dispatch stream went away");
}

}  // namespace

DispatchStream::DispatchStream(std::shared_ptr<coordinator::Mailbox> mailbox,
                               OnEnd on_end)
    : mailbox_(std::move(mailbox)), on_end_(std::move(on_end)) {
  StartSendInitialMetadata();
  mailbox_->SetListener([this] { Pump(); });
  Pump();
}

void DispatchStream::Pump() {
  std::optional<coordinator::WorkItem> item;
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_ || cancelled_) return;
    item = mailbox_->TryPop();
    if (!item.has_value() && !mailbox_->closed()) return;
    if (item.has_value()) {
      writing_ = true;
      work_.Clear();
      proto::WorkToProto(*item, &work_);
    }
  }
  if (item.has_value()) {
    StartWrite(&work_);
    return;
  }
  FinishOnce(
      proto::StatusToGrpc(absl::UnavailableError(mailbox_->close_reason())));
}

void DispatchStream::OnWriteDone(bool ok) {
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    cancelled = cancelled_;
  }
  if (!ok || cancelled) {  // the agent went away
    FinishOnce(Cancelled());
    return;
  }
  Pump();
}

void DispatchStream::OnCancel() {
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (writing_) return;  // OnWriteDone finishes
  }
  FinishOnce(Cancelled());
}

void DispatchStream::FinishOnce(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
    status_ = status;
  }
  Finish(status);
}

void DispatchStream::OnDone() {
  mailbox_->SetListener(nullptr);  // no Pump runs after this
  grpc::Status status;
  {
    absl::MutexLock lock(&mu_);
    status = status_;
  }
  on_end_(status);
  delete this;
}

}  // namespace reshard::server
