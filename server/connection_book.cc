#include "server/connection_book.h"

namespace reshard::server {

ConnectionBook::Verdict ConnectionBook::Check(const std::string& peer) const {
  if (limits_.max_total > 0 && open() >= limits_.max_total) {
    return Verdict::kTotal;
  }
  if (limits_.max_per_peer > 0 && OpenFrom(peer) >= limits_.max_per_peer) {
    return Verdict::kPeer;
  }
  return Verdict::kAdmit;
}

void ConnectionBook::Add(int fd, uint64_t inode, const std::string& peer) {
  // A descriptor reused before a sweep: its old connection is gone.
  auto old = open_.find(fd);
  if (old != open_.end()) {
    if (--per_peer_[old->second.peer] == 0) per_peer_.erase(old->second.peer);
    open_.erase(old);
  }
  open_.emplace(fd, Open{inode, peer});
  ++per_peer_[peer];
}

void ConnectionBook::Sweep(
    const std::function<bool(int fd, uint64_t inode)>& alive) {
  for (auto it = open_.begin(); it != open_.end();) {
    if (alive(it->first, it->second.inode)) {
      ++it;
      continue;
    }
    if (--per_peer_[it->second.peer] == 0) per_peer_.erase(it->second.peer);
    it = open_.erase(it);
  }
}

int64_t ConnectionBook::OpenFrom(const std::string& peer) const {
  auto it = per_peer_.find(peer);
  return it == per_peer_.end() ? 0 : it->second;
}

}  // namespace reshard::server
