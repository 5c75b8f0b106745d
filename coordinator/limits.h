// Every bound the Coordinator enforces, in one place: jobs, agents per job,
// rendezvous keys and bytes, concurrent runs and waits. Past a bound
// a request is refused with RESOURCE_EXHAUSTED naming it; nothing already
// stored is dropped to make room.
#ifndef RESHARD_COORDINATOR_LIMITS_H_
#define RESHARD_COORDINATOR_LIMITS_H_

#include <cstdint>

#include "common/job_name.h"
#include "coordinator/token_rules.h"

namespace reshard::coordinator {

struct CoordinatorLimits {
  int64_t max_jobs = 1024;
  int64_t max_world_size = 4096;  // agents per job
  int64_t max_store_keys_per_job = 1 << 16;
  int64_t max_store_bytes_per_job = int64_t{64} << 20;
  // Every job's store together (coordinator/store_budget.h).
  int64_t max_store_bytes_total = int64_t{1} << 30;
  int64_t max_key_bytes = 1024;
  int64_t max_concurrent_runs = 64;  // RunJob calls waiting or running
  // StoreGet calls waiting for keys. A wait holds no thread, only its
  // call's memory; a job's ranks may all wait at once.
  int64_t max_store_waiters = 16384;
  // The same bounds per credential (the share of the job token a caller
  // presents, coordinator/token_rules.h), so that one client cannot take
  // every job, RunJob slot or store byte from the rest.
  int64_t max_jobs_per_credential = 256;
  int64_t max_runs_per_credential = 16;
  int64_t max_store_bytes_per_credential = int64_t{256} << 20;
  int64_t max_store_waiters_per_credential = 4096;
  int64_t max_job_name_bytes = kMaxJobNameBytes;
  // What a Join says about its agent, kept per rank and shown by GetJob:
  // printable ASCII of at most these many bytes.
  int64_t max_host_bytes = 255;
  int64_t max_version_bytes = 64;
  // A job with no connected agent, no run and no RunJob waiting for this
  // long is dropped (its killed agents never said goodbye).
  int64_t job_idle_seconds = 300;
  // A RunJob waiting for a rank that was connected and is gone (killed,
  // stopped, its node down) fails after this long (UNAVAILABLE naming the
  // rank) instead of at its deadline; ranks that never joined are waited
  // for until the deadline. RunSpec::agent_wait_seconds overrides it.
  double agent_wait_seconds = 10;
  // Whether a caller without a job token is served: jobs created without
  // one, and calls on them (coordinator/job_token.h). reshard-planner
  // turns it off by default when it listens beyond loopback.
  bool allow_open_jobs = true;
  // Which job tokens are accepted and the share each counts in; not
  // owned, it outlives the Coordinator (null: no issuing key and no legacy
  // tokens, so every token is refused).
  const TokenRules* token_rules = nullptr;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_LIMITS_H_
