// Real reshard-agent processes of one job on loopback, for the
// Coordinator's integration tests and job_bench (RESHARD_AGENT_BIN names
// the binary). Only the PIDs started here are ever signalled; the
// destructor kills and reaps any that still run.
#ifndef RESHARD_TESTS_COORDINATOR_AGENT_PROCESSES_H_
#define RESHARD_TESTS_COORDINATOR_AGENT_PROCESSES_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace reshard::testing {

class AgentProcesses {
 public:
  AgentProcesses(std::string server, std::string job, int world_size)
      : server_(std::move(server)), job_(std::move(job)), world_(world_size) {
    char dir_template[] = "/tmp/reshard-agents-XXXXXX";
    dir_ = mkdtemp(dir_template);
  }
  ~AgentProcesses() {
    for (pid_t& pid : pids_) {
      if (pid <= 0) continue;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
    if (std::getenv("RESHARD_TEST_AGENT_LOGS") != nullptr) {
      fprintf(stderr, "%s", Logs().c_str());
    }
    std::system(("rm -rf " + dir_).c_str());
  }

  // Flags every later Start() adds (e.g. "--reconnect_seconds=1").
  void set_extra_flags(std::vector<std::string> flags) {
    extra_flags_ = std::move(flags);
  }

  // Starts rank `rank` (with the job's world size unless `world_size`).
  void Start(int rank, int world_size = 0) {
    std::vector<std::string> args = {
        RESHARD_AGENT_BIN,
        "--server=" + server_,
        "--job=" + job_,
        absl::StrCat("--rank=", rank),
        absl::StrCat("--world_size=", world_size > 0 ? world_size : world_),
        "--timeout_seconds=10"};
    args.insert(args.end(), extra_flags_.begin(), extra_flags_.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = absl::StrCat(dir_, "/agent-", rank, ".log");
    const pid_t test = getpid();
    const pid_t pid = fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      // Dies with the test process even when it ends without running its
      // destructors (an ASan abort, a crash, SIGKILL).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != test) _exit(127);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (pid <= 0) return;  // no process: the job never becomes ready
    pids_.push_back(pid);
    ranks_.push_back(rank);
  }
  // SIGKILL to the process of `rank` (as a crash would end it), reaped.
  void Kill(int rank) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (ranks_[i] != rank || pids_[i] <= 0) continue;
      kill(pids_[i], SIGKILL);
      waitpid(pids_[i], nullptr, 0);
      pids_.erase(pids_.begin() + i);
      ranks_.erase(ranks_.begin() + i);
      return;
    }
  }
  void StartAll() {
    for (int r = 0; r < world_; ++r) Start(r);
  }
  // How many of the processes started here are still running (those that
  // exited are reaped and never signalled again).
  int Running() {
    int running = 0;
    for (pid_t& pid : pids_) {
      if (pid <= 0) continue;
      if (waitpid(pid, nullptr, WNOHANG) == 0) {
        ++running;
      } else {
        pid = -1;
      }
    }
    return running;
  }

  // Waits up to `within` for every process to exit (after sending `signal`
  // unless 0); the exit statuses in start order, -1 for one killed at the
  // deadline or ended by a signal.
  std::vector<int> Wait(std::chrono::milliseconds within, int signal = 0) {
    if (signal != 0) {
      for (pid_t pid : pids_) {
        if (pid > 0) kill(pid, signal);
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + within;
    std::vector<int> codes(pids_.size(), -1);
    for (size_t i = 0; i < pids_.size(); ++i) {
      codes[i] = Reap(i, deadline);
    }
    return codes;
  }

  // The log of rank `rank` (every process it had, in start order).
  std::string Log(int rank) const {
    std::ifstream in(absl::StrCat(dir_, "/agent-", rank, ".log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Whether every rank moves run `run_id`'s data: each agent logs "run ID:
  // executing" once its communicators are connected and the ranks' plan
  // digests agree (agent/agent.cc, Agent::Execute).
  bool ExecutingOnEveryRank(const std::string& run_id) const {
    const std::string line = absl::StrCat("run ", run_id, ": executing");
    for (int r = 0; r < world_; ++r) {
      if (Log(r).find(line) == std::string::npos) return false;
    }
    return true;
  }

  // Every rank's log; first, how each process that Wait() saw end badly
  // ended, and those ranks' logs (output that gets cut keeps its start).
  std::string Logs() const {
    std::string out;
    std::vector<int> order;
    for (const auto& [rank, how] : bad_endings_) {
      absl::StrAppend(&out, "agent ", rank, " ", how, "\n");
      order.push_back(rank);
    }
    for (int r = 0; r < world_; ++r) {
      if (std::find(order.begin(), order.end(), r) == order.end()) {
        order.push_back(r);
      }
    }
    for (int r : order) {
      absl::StrAppend(&out, "---- agent ", r, " ----\n", Log(r));
    }
    return out;
  }

 private:
  // The exit status of process `i`, or -1 (and why, in bad_endings_).
  int Reap(size_t i, std::chrono::steady_clock::time_point deadline) {
    pid_t& pid = pids_[i];
    if (pid <= 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        pid = -1;
        bad_endings_.emplace_back(ranks_[i], "still ran at the deadline");
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid = -1;
    if (WIFEXITED(status)) {
      if (WEXITSTATUS(status) != 0) {
        bad_endings_.emplace_back(ranks_[i],
                                  absl::StrCat("exited ", WEXITSTATUS(status)));
      }
      return WEXITSTATUS(status);
    }
    bad_endings_.emplace_back(
        ranks_[i], absl::StrCat("was ended by signal ", WTERMSIG(status), " (",
                                strsignal(WTERMSIG(status)), ")"));
    return -1;
  }

  std::string server_;
  std::string job_;
  int world_;
  std::string dir_;
  std::vector<std::string> extra_flags_;
  std::vector<pid_t> pids_;
  std::vector<int> ranks_;  // of each process, in start order
  std::vector<std::pair<int, std::string>> bad_endings_;  // rank, how
};

// The number after `field` ("VmRSS:", "Threads:") in a process's
// /proc/PID/status; 0 when unreadable.
inline int64_t ProcStatusNumber(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      return std::atoll(line.c_str() + field.size());
    }
  }
  return 0;
}

// The resident set of a process, in bytes (0 when unreadable): how the
// fault test and fault_bench watch the planner's memory over many runs.
inline int64_t ResidentBytes(pid_t pid) {
  return ProcStatusNumber(pid, "VmRSS:") * 1024;
}

// How many threads a process has (0 when unreadable).
inline int64_t ThreadCount(pid_t pid) {
  return ProcStatusNumber(pid, "Threads:");
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_COORDINATOR_AGENT_PROCESSES_H_
