#include "executor/launch/local_launch.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"

namespace reshard::executor {
namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;  // read end of the child's pipe; -1 once at EOF
};

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void RunChild(int rank, int fd,
                           const std::function<std::string(int)>& body) {
  const std::string out = body(rank);
  WriteAll(fd, out);
  close(fd);
  _exit(0);  // no atexit handlers or static destructors of the parent
}

using Clock = std::chrono::steady_clock;

// When the children still running are killed: the deadline, or
// `after_loss` after the first child that ended without output.
struct Stop {
  Clock::time_point deadline;
  std::optional<std::chrono::milliseconds> after_loss;
  int lost = -1;  // the first such child
  Clock::time_point At() const { return deadline; }
  void Lost(int child) {
    if (lost >= 0 || !after_loss.has_value()) return;
    lost = child;
    deadline = std::min(deadline, Clock::now() + *after_loss);
  }
};

// Reads every pipe until EOF or the stop.
void Drain(std::vector<Child>& children, std::vector<ChildResult>& results,
           Stop& stop) {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<size_t> owner;
    for (size_t i = 0; i < children.size(); ++i) {
      if (children[i].fd < 0) continue;
      fds.push_back({children[i].fd, POLLIN, 0});
      owner.push_back(i);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        stop.At() - Clock::now());
    if (fds.empty() || left.count() <= 0) return;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 &&
        errno != EINTR) {
      return;
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(fds[k].fd, buffer, sizeof(buffer));
      if (n > 0) {
        results[owner[k]].output.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[k].fd);
        children[owner[k]].fd = -1;
        if (results[owner[k]].output.empty()) {
          stop.Lost(static_cast<int>(owner[k]));
        }
      }
    }
  }
}

// Kills what still runs at the stop and reaps everyone.
void Reap(std::vector<Child>& children, std::vector<ChildResult>& results,
          const Stop& stop) {
  const Clock::time_point deadline = stop.At();
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].fd >= 0) close(children[i].fd);
    if (children[i].pid <= 0) continue;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(children[i].pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      usleep(2000);
    }
    if (done == 0) {
      kill(children[i].pid, SIGKILL);
      waitpid(children[i].pid, &status, 0);
      results[i].killed = true;
      results[i].signal = SIGKILL;
      results[i].timed_out = stop.lost < 0;
      results[i].stopped_after = stop.lost;
      continue;
    }
    if (WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
      results[i].killed = true;
      results[i].signal = WTERMSIG(status);
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<ChildResult>> RunLocalRanks(
    int ranks, const std::function<std::string(int)>& body,
    std::chrono::milliseconds timeout,
    std::optional<std::chrono::milliseconds> after_loss) {
  Stop stop{Clock::now() + timeout, after_loss};
  std::vector<Child> children(ranks);
  std::vector<ChildResult> results(ranks);
  for (int r = 0; r < ranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) {
      Reap(children, results, Stop{Clock::now(), std::nullopt});
      return absl::InternalError(
          absl::StrCat("pipe for rank ", r, ": ", std::strerror(errno)));
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      for (int k = 0; k < r; ++k) close(children[k].fd);
      RunChild(r, fds[1], body);
    }
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      Reap(children, results, Stop{Clock::now(), std::nullopt});
      return absl::InternalError(
          absl::StrCat("fork for rank ", r, ": ", std::strerror(errno)));
    }
    children[r] = {pid, fds[0]};
  }
  Drain(children, results, stop);
  Reap(children, results, stop);
  return results;
}

}  // namespace reshard::executor
