#include "client/job_interrupt.h"

#include <iostream>

#include "absl/time/time.h"
#include "client/interrupt.h"

namespace reshard::client {

JobRunInterrupter::JobRunInterrupter(std::unique_ptr<Client> client,
                                     std::string job)
    : client_(std::move(client)), job_(std::move(job)) {
  InstallInterruptHandler();
  thread_ = std::thread([this] { Loop(); });
}

JobRunInterrupter::~JobRunInterrupter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void JobRunInterrupter::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(50));
    if (stop_ || !Interrupted()) continue;
    std::cerr << "job " << job_
              << ": interrupted; stopping the run (Ctrl-C again to quit "
                 "at once)\n";
    mu_.Unlock();
    const absl::StatusOr<std::string> run = client_->CancelJob(job_, true);
    mu_.Lock();
    if (!run.ok()) {
      std::cerr << "job " << job_
                << ": could not stop the run: " << run.status() << "\n";
    }
    return;
  }
}

}  // namespace reshard::client
