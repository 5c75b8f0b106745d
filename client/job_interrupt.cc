#include "client/job_interrupt.h"

#include <iostream>

#include "absl/time/time.h"
#include "client/interrupt.h"

namespace reshard::client {

JobRunInterrupter::JobRunInterrupter(std::unique_ptr<Client> client,
                                     std::string job)
    : client_(std::move(client)),
      job_(std::move(job)),
      task_(absl::Milliseconds(50), false, [this] { return Tick(); }) {
  InstallInterruptHandler();
}

bool JobRunInterrupter::Tick() {
  if (!Interrupted()) return true;
  std::cerr << "job " << job_
            << ": interrupted; stopping the run (Ctrl-C again to quit at "
               "once)\n";
  const absl::StatusOr<std::string> run = client_->CancelJob(job_, true);
  if (!run.ok()) {
    std::cerr << "job " << job_ << ": could not stop the run: " << run.status()
              << "\n";
  }
  return false;
}

}  // namespace reshard::client
