// A real reshard-planner process on loopback for integration tests: started
// with --listen 127.0.0.1:0, its port read back from --port_file, stopped
// with SIGTERM (Stop) or SIGKILL (Kill, and on destruction).
#ifndef RESHARD_TESTS_SERVER_SERVER_PROCESS_H_
#define RESHARD_TESTS_SERVER_SERVER_PROCESS_H_

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace reshard::testing {

class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra_flags = {}) {
    char dir_template[] = "/tmp/reshard-test-XXXXXX";
    dir_ = mkdtemp(dir_template);
    const std::string port_file = dir_ + "/port";
    std::vector<std::string> args = {RESHARD_PLANNER_BIN,
                                     "--listen=127.0.0.1:0",
                                     "--port_file=" + port_file};
    args.insert(args.end(), extra_flags.begin(), extra_flags.end());
    const pid_t test = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      // Dies with the test process even when it ends without running its
      // destructors (an ASan abort, a crash, SIGKILL).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != test) _exit(127);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      const std::string log = dir_ + "/server.log";
      freopen(log.c_str(), "w", stderr);
      freopen(log.c_str(), "a", stdout);
      execv(argv[0], argv.data());
      _exit(127);
    }
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port_)) {
        port_ = 0;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {  // exited early
          pid_ = -1;
          exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    }
  }
  ~ServerProcess() {
    Kill();
    if (std::getenv("RESHARD_TEST_SERVER_LOG") != nullptr) {
      fprintf(stderr, "---- server log ----\n%s", log().c_str());
    }
    std::system(("rm -rf " + dir_).c_str());
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const {
    std::ifstream in(dir_ + "/server.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // SIGTERM; returns the exit status (-1 if it did not exit normally).
  int Stop() {
    if (pid_ <= 0) return exit_status_;
    kill(pid_, SIGTERM);
    return Reap();
  }
  // SIGTERM without waiting (the drain goes on; Stop reaps it).
  void Terminate() {
    if (pid_ > 0) kill(pid_, SIGTERM);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    Reap();
  }

 private:
  int Reap() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_status_;
  }

  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = -1;
};

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_SERVER_SERVER_PROCESS_H_
