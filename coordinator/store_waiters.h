// The StoreGet calls waiting on a job's rendezvous store, held as data
// instead of as blocked threads: each is a set of keys and the answer to
// give once they are all set. A waiter is filed under the first of its keys
// still missing, so a StoreSet looks only at the waiters of its own key and
// every key a waiter names is checked about once. Not synchronized: the
// Job's mutex guards it, and answers are delivered after that mutex is
// released (Job::DeliverDue).
#ifndef RESHARD_COORDINATOR_STORE_WAITERS_H_
#define RESHARD_COORDINATOR_STORE_WAITERS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "coordinator/rendezvous_store.h"

namespace reshard::coordinator {

// What a waiting StoreGet is told, exactly once: every key's value in
// order, or why not.
using StoreAnswer =
    absl::AnyInvocable<void(absl::StatusOr<std::vector<std::string>>) &&>;

// An answer and what it says, to be delivered outside the job's lock.
struct DueAnswer {
  StoreAnswer answer;
  absl::StatusOr<std::vector<std::string>> result;
};

class StoreWaiters {
 public:
  struct Waiter {
    std::string run_id;
    std::vector<std::string> keys;
    StoreAnswer answer;
    size_t next = 0;  // keys before it were set when last looked at
    // Its entry in by_missing_key_ (under keys[next]).
    std::multimap<std::string, int64_t>::iterator filed;
  };

  // Files a waiter on `keys`; its id. When `store` already has them all,
  // its answer goes to `due` at once.
  int64_t Add(std::string run_id, std::vector<std::string> keys,
              StoreAnswer answer, const RendezvousStore& store,
              std::vector<DueAnswer>& due);
  // `key` was set in `store`: the waiters now complete, with their values.
  void KeySet(const std::string& key, const RendezvousStore& store,
              std::vector<DueAnswer>& due);
  // Removes and returns waiter `id` (nullopt once answered).
  std::optional<Waiter> Take(int64_t id);
  // Removes and returns every waiter.
  std::vector<Waiter> TakeAll();

  int64_t size() const { return static_cast<int64_t>(waiters_.size()); }

 private:
  // Advances waiter `id` past the keys `store` has: files it under the
  // next missing one, or (all set) moves its answer to `due`.
  void Advance(int64_t id, const RendezvousStore& store,
               std::vector<DueAnswer>& due);

  int64_t next_id_ = 1;
  std::map<int64_t, Waiter> waiters_;
  std::multimap<std::string, int64_t> by_missing_key_;  // key -> waiter id
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_STORE_WAITERS_H_
