// StateTable: an open-addressing hash table from DistState codes to
// per-state search records that clears in O(1) (every slot carries the
// generation it was written in). A thread's searches reuse one allocation:
// on virtual machines the page faults of a fresh multi-megabyte table can
// cost more than the search that fills it.
#ifndef RESHARD_PLANNER_STATE_TABLE_H_
#define RESHARD_PLANNER_STATE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "planner/dist_state.h"

namespace reshard {

template <typename Value>
class StateTable {
 public:
  // Forgets every entry, keeping the allocation.
  void Clear() {
    size_ = 0;
    if (++epoch_ == 0) {  // wrapped: stamps of 0 must mean "empty" again
      for (Slot& s : slots_) s.epoch = 0;
      epoch_ = 1;
    }
  }

  // Frees the allocation (after an unusually large search).
  void Release() {
    slots_ = {};
    size_ = 0;
  }

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  // The record of `code`, or nullptr. Valid until the next insertion.
  Value* Find(const DistState::Code& code) {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(code);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.epoch != epoch_) return nullptr;
      if (s.key == code) return &s.value;
    }
  }

  // The record of `code`, inserted as `init` when absent; true when
  // inserted. Valid until the next insertion.
  std::pair<Value*, bool> FindOrInsert(const DistState::Code& code,
                                       const Value& init) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    for (size_t i = Home(code);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.epoch != epoch_) {
        s = {code, epoch_, init};
        ++size_;
        return {&s.value, true};
      }
      if (s.key == code) return {&s.value, false};
    }
  }

 private:
  struct Slot {
    DistState::Code key;
    uint32_t epoch = 0;
    Value value{};
  };

  size_t Home(const DistState::Code& code) const {
    return absl::Hash<DistState::Code>()(code) & (slots_.size() - 1);
  }

  // Doubles the table (load factor <= 1/2), keeping this generation.
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    const uint32_t epoch = epoch_;
    epoch_ = 1;
    size_ = 0;
    for (Slot& s : old) {
      if (s.epoch == epoch) FindOrInsert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;  // size: 0 or a power of two
  uint32_t epoch_ = 1;
  size_t size_ = 0;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_STATE_TABLE_H_
