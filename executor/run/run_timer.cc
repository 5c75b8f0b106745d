#include "executor/run/run_timer.h"

namespace reshard::executor {

void RunTimer::Start() {
  spans_.clear();
  error_ = absl::OkStatus();
  space_->ClearMarks();
}

int64_t RunTimer::Now() {
  absl::StatusOr<int64_t> mark = space_->Mark();
  error_.Update(mark.status());
  return mark.ok() ? *mark : 0;
}

void RunTimer::Add(int64_t from, int64_t to, double* into) {
  spans_.push_back({from, to, into});
}

absl::Status RunTimer::Resolve() {
  if (!error_.ok()) return error_;
  for (const Span& span : spans_) {
    absl::StatusOr<double> seconds = space_->Between(span.from, span.to);
    if (!seconds.ok()) return seconds.status();
    *span.into += *seconds;
  }
  spans_.clear();
  return absl::OkStatus();
}

}  // namespace reshard::executor
