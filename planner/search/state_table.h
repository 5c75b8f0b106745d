// StateTable: an open-addressing hash table from DistState codes to
// per-state search records that clears in O(1) (every slot carries the
// generation it was written in). A thread's searches reuse one allocation:
// on virtual machines the page faults of a fresh multi-megabyte table can
// cost more than the search that fills it.
#ifndef RESHARD_PLANNER_SEARCH_STATE_TABLE_H_
#define RESHARD_PLANNER_SEARCH_STATE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "planner/core/dist_state.h"

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
    // Swapped out, not assigned `{}`: that keeps the capacity.
    std::vector<Slot>().swap(slots_);
    std::vector<std::unique_ptr<Value[]>>().swap(chunks_);
    size_ = 0;
    bits_ = 0;
  }

  size_t size() const { return size_; }
  // What the table holds now, and what it has allocated.
  size_t UsedBytes() const {
    return size_ * sizeof(Value) + 2 * size_ * sizeof(Slot);
  }
  size_t AllocatedBytes() const {
    return (chunks_.size() << kChunkBits) * sizeof(Value) +
           slots_.capacity() * sizeof(Slot);
  }

  // Records are numbered in insertion order from 0; `at` reads one back.
  // References stay valid until Clear or Release.
  Value& at(uint32_t index) {
    return chunks_[index >> kChunkBits][index & (kChunk - 1)];
  }

  struct Found {
    Value* value;
    uint32_t index;
  };
  // The record of `code`, inserted as `init` when absent.
  Found FindOrInsert(const DistState::Code& code, const Value& init) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    for (size_t i = Home(code);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.epoch != epoch_) {
        const auto index = static_cast<uint32_t>(size_++);
        if (index >> kChunkBits == chunks_.size()) {
          chunks_.push_back(std::make_unique<Value[]>(kChunk));
        }
        s = {code, epoch_, index};
        Value& value = at(index);
        value = init;
        return {&value, index};
      }
      if (s.key == code) return {&at(s.index), s.index};
    }
  }

 private:
  // Slots stay small (24 bytes) so that probes touch little memory; the
  // records live densely in insertion order, in chunks that never move: a
  // doubling array would briefly hold three times its records while it
  // grows, and records are most of a large search's memory.
  static constexpr int kChunkBits = 12;
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  struct Slot {
    DistState::Code key;
    uint32_t epoch = 0;
    uint32_t index = 0;
  };

  // Multiplicative hashing on the top bits.
  size_t Home(const DistState::Code& code) const {
    uint64_t h = code.lo * 0x9e3779b97f4a7c15ull + code.hi;
    h ^= h >> 31;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return static_cast<size_t>(h & ((uint64_t{1} << bits_) - 1));
  }

  // Doubles the table (load factor <= 1/2), keeping this generation.
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    bits_ = old.empty() ? 10 : bits_ + 1;
    slots_.assign(size_t{1} << bits_, Slot{});
    const uint32_t epoch = epoch_;
    epoch_ = 1;
    for (const Slot& s : old) {
      if (s.epoch != epoch) continue;
      size_t i = Home(s.key);
      while (slots_[i].epoch == epoch_) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = {s.key, epoch_, s.index};
    }
  }

  std::vector<Slot> slots_;                       // 2^bits_ of them, or none
  std::vector<std::unique_ptr<Value[]>> chunks_;  // kChunk records each
  size_t size_ = 0;
  int bits_ = 0;
  uint32_t epoch_ = 1;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STATE_TABLE_H_
