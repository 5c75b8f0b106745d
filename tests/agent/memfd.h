// A memfd of a given size for the local-endpoint tests: sealed against
// shrinking as clients must seal it, or not (to be refused). Closed when
// the test is done with it.
#ifndef RESHARD_TESTS_AGENT_MEMFD_H_
#define RESHARD_TESTS_AGENT_MEMFD_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "gtest/gtest.h"

namespace reshard::agent::testing {

class Memfd {
 public:
  explicit Memfd(int64_t size, bool seal = true)
      : fd_(memfd_create("reshard-test", MFD_CLOEXEC | MFD_ALLOW_SEALING)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(ftruncate(fd_, size), 0);
    if (seal) {
      EXPECT_EQ(fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    }
  }
  ~Memfd() { close(fd_); }
  Memfd(const Memfd&) = delete;
  Memfd& operator=(const Memfd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace reshard::agent::testing

#endif  // RESHARD_TESTS_AGENT_MEMFD_H_
