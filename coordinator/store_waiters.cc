#include "coordinator/store_waiters.h"

namespace reshard::coordinator {

int64_t StoreWaiters::Add(std::string run_id, std::vector<std::string> keys,
                          StoreAnswer answer, const RendezvousStore& store,
                          std::vector<DueAnswer>& due) {
  const int64_t id = next_id_++;
  Waiter& waiter = waiters_[id];
  waiter.run_id = std::move(run_id);
  waiter.keys = std::move(keys);
  waiter.answer = std::move(answer);
  waiter.filed = by_missing_key_.end();
  Advance(id, store, due);
  return id;
}

void StoreWaiters::KeySet(const std::string& key, const RendezvousStore& store,
                          std::vector<DueAnswer>& due) {
  std::vector<int64_t> ids;
  auto [first, last] = by_missing_key_.equal_range(key);
  for (auto it = first; it != last; ++it) ids.push_back(it->second);
  by_missing_key_.erase(first, last);
  for (int64_t id : ids) {
    waiters_.at(id).filed = by_missing_key_.end();
    Advance(id, store, due);
  }
}

void StoreWaiters::Advance(int64_t id, const RendezvousStore& store,
                           std::vector<DueAnswer>& due) {
  Waiter& waiter = waiters_.at(id);
  while (waiter.next < waiter.keys.size() &&
         store.Has(waiter.keys[waiter.next])) {
    ++waiter.next;
  }
  // A key seen earlier may have been deleted since: look at all of them.
  std::optional<std::vector<std::string>> values;
  if (waiter.next == waiter.keys.size()) values = store.Lookup(waiter.keys);
  if (!values.has_value()) {
    if (waiter.next == waiter.keys.size()) waiter.next = 0;
    while (store.Has(waiter.keys[waiter.next])) ++waiter.next;
    waiter.filed = by_missing_key_.emplace(waiter.keys[waiter.next], id);
    return;
  }
  due.push_back(DueAnswer{std::move(waiter.answer), *std::move(values)});
  waiters_.erase(id);
}

std::optional<StoreWaiters::Waiter> StoreWaiters::Take(int64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return std::nullopt;
  Waiter waiter = std::move(it->second);
  waiters_.erase(it);
  if (waiter.filed != by_missing_key_.end())
    by_missing_key_.erase(waiter.filed);
  waiter.filed = by_missing_key_.end();
  return waiter;
}

std::vector<StoreWaiters::Waiter> StoreWaiters::TakeAll() {
  std::vector<Waiter> all;
  for (auto& [id, waiter] : waiters_) all.push_back(std::move(waiter));
  waiters_.clear();
  by_missing_key_.clear();
  for (Waiter& waiter : all) waiter.filed = by_missing_key_.end();
  return all;
}

}  // namespace reshard::coordinator
