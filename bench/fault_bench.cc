// fault_bench: how fast a job gets a clear answer after a fault, and how
// fast it is whole again. Starts a real reshard-planner and 4 reshard-agent
// processes on loopback, a per-collective timeout of 2 s.
//  (a) --kills times: a long run (S(0)->R of 64 Ki floats, 100,000 iters) is
//      started, one agent (ranks in turn) is SIGKILLed once the run is in
//      flight; the time from the kill to RunJob's failure, p50 and max,
//      against the 2 s timeout.
//  (b) After each kill: the killed rank's agent is started again; the time
//      from its start to the end of the first validated run (join, new
//      generation, fresh communicators, the run).
//  (c) The planner's RSS after 100 warm-up runs and after --runs more.
//  (d) --kills times: an idle job's agent (ranks in turn) is SIGKILLed
//      between runs and a RunJob (agent_wait_seconds 2) is called at once:
//      the time from the kill to its UNAVAILABLE naming the rank, p50 and
//      max, against agent_wait_seconds + 2 s; then the agent is started again
//      and a validated run proves the job whole.
// Every process it starts is stopped by PID. Usage:
//   fault_bench [--kills N] [--runs N]
#include <signal.h>
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/coordinator_calls.h"
#include "tests/server/server_process.h"

namespace reshard {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::ResidentBytes;

constexpr int kAgents = 4;
constexpr char kJob[] = "faults";
constexpr double kCollectiveTimeout = 2;

v1::RunJobRequest Run(int iters, int64_t elements) {
  return testing::AllGatherRun(kJob, kAgents, elements, iters,
                               kCollectiveTimeout);
}

double Since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

class Bench {
 public:
  explicit Bench(const std::string& address)
      : stub_(v1::Coordinator::NewStub(grpc::CreateChannel(
            address, grpc::InsecureChannelCredentials()))) {}

  grpc::Status RunJob(const v1::RunJobRequest& request,
                      v1::RunJobResponse* response) {
    return testing::CallRunJob(*stub_, request, response, seconds(120));
  }

  // Waits (up to 30 s) until `done` holds for the job.
  bool Await(const std::function<bool(const v1::JobInfo&)>& done) {
    const auto deadline = steady_clock::now() + seconds(30);
    while (steady_clock::now() < deadline) {
      const absl::StatusOr<v1::JobInfo> info =
          testing::CallGetJob(*stub_, kJob);
      if (info.ok() && done(*info)) return true;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return false;
  }
  bool AwaitConnected(int agents) {
    return Await([agents](const v1::JobInfo& info) {
      int connected = 0;
      for (const auto& a : info.agents()) connected += a.connected();
      return connected == agents;
    });
  }

 private:
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// One kill: the seconds from SIGKILL to RunJob's failure, and from the
// agent's restart to a validated run; negative when a step went wrong.
std::pair<double, double> KillOnce(Bench& bench,
                                   testing::AgentProcesses& agents, int rank) {
  grpc::Status status;
  steady_clock::time_point failed;
  std::thread caller([&] {
    v1::RunJobResponse response;
    status = bench.RunJob(Run(100000, 1 << 16), &response);
    failed = steady_clock::now();
  });
  const bool running = bench.Await(
      [](const v1::JobInfo& info) { return info.state() == "running"; });
  std::this_thread::sleep_for(milliseconds(200));
  const steady_clock::time_point killed = steady_clock::now();
  agents.Kill(rank);
  caller.join();
  if (!running || status.ok()) return {-1, -1};
  const double to_fail = std::chrono::duration<double>(failed - killed).count();
  if (to_fail > kCollectiveTimeout / 2) {  // say why it took long
    fprintf(stderr, "kill of rank %d: %.3f s: %s\n", rank, to_fail,
            status.error_message().c_str());
  }
  if (!bench.AwaitConnected(kAgents - 1)) return {to_fail, -1};
  const steady_clock::time_point restarted = steady_clock::now();
  agents.Start(rank);
  if (!bench.AwaitConnected(kAgents)) return {to_fail, -1};
  v1::RunJobResponse response;
  if (!bench.RunJob(Run(1, 1 << 16), &response).ok() || !response.validated()) {
    return {to_fail, -1};
  }
  return {to_fail, Since(restarted)};
}

constexpr double kAgentWait = 2;

// One kill between runs: the seconds from SIGKILL to the failed RunJob,
// negative when a step went wrong (a run that did not fail, a message that
// does not name the rank, no validated run after the restart).
// With `await_loss` the call waits until the job shows the rank
// disconnected (the Coordinator has seen its stream close), so the run
// waits out agent_wait_seconds for it; without, the run is dispatched
// before that and fails on the peers' closed connections.
double KillBetweenRuns(Bench& bench, testing::AgentProcesses& agents, int rank,
                       bool await_loss) {
  const steady_clock::time_point killed = steady_clock::now();
  agents.Kill(rank);
  if (await_loss && !bench.AwaitConnected(kAgents - 1)) return -1;
  v1::RunJobRequest request = Run(1, 1 << 10);
  request.set_agent_wait_seconds(kAgentWait);
  v1::RunJobResponse response;
  const grpc::Status status = bench.RunJob(request, &response);
  const double to_fail = Since(killed);
  const std::string names = absl::StrCat("rank ", rank);
  if (status.ok() || status.error_message().find(names) == std::string::npos) {
    fprintf(stderr, "kill of rank %d between runs: %s\n", rank,
            status.error_message().c_str());
    return -1;
  }
  if (!bench.AwaitConnected(kAgents - 1)) return -1;
  agents.Start(rank);
  if (!bench.AwaitConnected(kAgents)) return -1;
  if (!bench.RunJob(Run(1, 1 << 10), &response).ok() || !response.validated()) {
    return -1;
  }
  return to_fail;
}

void PrintSeries(const char* what, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  printf("%-44s n=%zu p50 %.3f s  max %.3f s\n", what, values.size(),
         values[values.size() / 2], values.back());
}

int Main(int kills, int runs) {
  testing::ServerProcess server;
  if (server.port() == 0) return 1;
  testing::AgentProcesses agents(server.address(), kJob, kAgents);
  agents.StartAll();
  Bench bench(server.address());
  if (!bench.AwaitConnected(kAgents)) return 1;
  std::vector<double> to_fail, to_validated;
  for (int k = 0; k < kills; ++k) {
    const auto [fail, back] = KillOnce(bench, agents, k % kAgents);
    if (fail < 0 || back < 0) {
      fprintf(stderr, "kill %d went wrong\n%s", k, agents.Logs().c_str());
      return 1;
    }
    to_fail.push_back(fail);
    to_validated.push_back(back);
  }
  printf("per-collective timeout %.0f s, %d agents, %d kills\n",
         kCollectiveTimeout, kAgents, kills);
  PrintSeries("SIGKILL -> failed RunJob", to_fail);
  PrintSeries("restart -> validated run", to_validated);
  printf("agent_wait_seconds %.0f s\n", kAgentWait);
  for (bool await_loss : {false, true}) {
    std::vector<double> idle_to_fail;
    for (int k = 0; k < kills; ++k) {
      const double fail =
          KillBetweenRuns(bench, agents, k % kAgents, await_loss);
      if (fail < 0) {
        fprintf(stderr, "idle kill %d went wrong\n%s", k,
                agents.Logs().c_str());
        return 1;
      }
      idle_to_fail.push_back(fail);
    }
    PrintSeries(await_loss ? "SIGKILL between runs, loss seen -> failed"
                           : "SIGKILL between runs, call at once -> failed",
                idle_to_fail);
  }
  int64_t start_rss = 0;
  for (int i = 0; i < runs + 100; ++i) {
    if (i == 100) start_rss = ResidentBytes(server.pid());
    v1::RunJobResponse response;
    if (!bench.RunJob(Run(1, 64), &response).ok()) return 1;
  }
  printf("planner RSS over %d runs: %.1f MiB -> %.1f MiB\n", runs,
         start_rss / 1048576.0, ResidentBytes(server.pid()) / 1048576.0);
  return 0;
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  int kills = 20, runs = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    int* target = flag == "--kills"  ? &kills
                  : flag == "--runs" ? &runs
                                     : nullptr;
    if (target == nullptr || !absl::SimpleAtoi(argv[i + 1], target) ||
        *target < 1) {
      fprintf(stderr, "usage: fault_bench [--kills N] [--runs N]\n");
      return 2;
    }
  }
  return reshard::Main(kills, runs);
}
