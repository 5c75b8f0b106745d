#include "coordinator/session_secret.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <random>

#include "absl/strings/escaping.h"

namespace reshard::coordinator {
namespace {

constexpr size_t kSessionBytes = 16;

// Fills `bytes` from getrandom(2), retrying interrupted and short reads;
// false when the kernel offers none.
bool OsRandom(unsigned char* bytes, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = getrandom(bytes + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::string RandomSession() {
  unsigned char bytes[kSessionBytes];
  if (!OsRandom(bytes, kSessionBytes)) {
    // Kernels without getrandom: the library's device (/dev/urandom).
    std::random_device device("/dev/urandom");
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(device());
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), kSessionBytes));
}

SessionSource RandomSessions() {
  return [](const AgentId&) { return RandomSession(); };
}

}  // namespace reshard::coordinator
