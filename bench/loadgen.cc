// reshard-loadgen: a closed-loop load generator for the planner service on
// gRPC's callback API. `--concurrency` calls are always outstanding; each
// completion starts the next until `--seconds` have passed. Prints one JSON
// line: {"rpc":…,"qps":…,"p50_us":…,"p99_us":…,"errors":…}.
//
// The default Plan request is the docs/DESIGN.md §4 example with an inline mesh
// (cached after the first call); `--request FILE` sends a
// reshard.v1.PlanRequest in protobuf text format instead.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "common/flags_usage.h"
#include "common/tls_files.h"
#include "common/tls_flags.h"
#include "google/protobuf/text_format.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "transport/tls_credentials.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "planner address");
ABSL_FLAG(std::string, rpc, "plan", "plan or health");
ABSL_FLAG(int, concurrency, 8, "outstanding calls");
ABSL_FLAG(double, seconds, 5, "duration of the run");
ABSL_FLAG(std::string, request, "", "PlanRequest in text format (plan only)");

namespace reshard {
namespace {

using Clock = std::chrono::steady_clock;

v1::PlanRequest DefaultRequest() {
  v1::PlanRequest r;
  v1::Mesh* mesh = r.mutable_mesh();
  for (const char* name : {"A", "B", "C"}) {
    mesh->add_shape(2);
    mesh->add_dim_names(name);
  }
  v1::FlattenedGroup* group = mesh->add_flattened();
  group->add_dims("A");
  group->add_dims("C");
  r.mutable_tensor()->add_shape(16);
  r.mutable_tensor()->add_shape(16);
  r.mutable_src()->set_text("P(sum),R,P(sum)");
  r.mutable_dst()->set_text("R,R,R");
  return r;
}

class LoadGen {
 public:
  LoadGen(std::shared_ptr<grpc::Channel> channel, bool plan,
          v1::PlanRequest request, Clock::time_point end)
      : planner_(v1::Planner::NewStub(channel)),
        health_(grpc::health::v1::Health::NewStub(channel)),
        plan_(plan),
        request_(std::move(request)),
        end_(end) {}

  void Run(int concurrency) {
    slots_.resize(concurrency);
    outstanding_ = concurrency;
    for (Slot& slot : slots_) Start(slot);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return outstanding_ == 0; });
  }

  void Report(double seconds) {
    std::sort(latencies_us_.begin(), latencies_us_.end());
    auto pct = [&](double q) {
      return latencies_us_.empty() ? 0.0
                                   : latencies_us_[static_cast<size_t>(
                                         q * (latencies_us_.size() - 1))];
    };
    std::cout
        << absl::StrFormat(
               "{\"rpc\":\"%s\",\"qps\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
               "\"errors\":%d,\"calls\":%d,\"concurrency\":%d}",
               plan_ ? "plan" : "health", latencies_us_.size() / seconds,
               pct(0.5), pct(0.99), errors_.load(),
               static_cast<int>(latencies_us_.size()),
               static_cast<int>(slots_.size()))
        << std::endl;
  }

 private:
  struct Slot {
    std::unique_ptr<grpc::ClientContext> ctx;
    v1::PlanResponse plan_response;
    grpc::health::v1::HealthCheckResponse health_response;
    Clock::time_point start;
  };

  void Start(Slot& slot) {
    slot.ctx = std::make_unique<grpc::ClientContext>();
    slot.start = Clock::now();
    auto done = [this, &slot](grpc::Status status) { Finish(slot, status); };
    if (plan_) {
      planner_->async()->Plan(slot.ctx.get(), &request_, &slot.plan_response,
                              done);
    } else {
      health_->async()->Check(slot.ctx.get(), &health_request_,
                              &slot.health_response, done);
    }
  }

  void Finish(Slot& slot, const grpc::Status& status) {
    const auto now = Clock::now();
    if (!status.ok()) ++errors_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      latencies_us_.push_back(
          std::chrono::duration<double, std::micro>(now - slot.start).count());
    }
    if (now < end_) {
      Start(slot);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (--outstanding_ == 0) done_.notify_all();
  }

  std::unique_ptr<v1::Planner::Stub> planner_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  const bool plan_;
  const v1::PlanRequest request_;
  const grpc::health::v1::HealthCheckRequest health_request_;
  const Clock::time_point end_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable done_;
  int outstanding_ = 0;
  std::vector<double> latencies_us_;
  std::atomic<int> errors_{0};
};

int Main() {
  const std::string rpc = absl::GetFlag(FLAGS_rpc);
  if (rpc != "plan" && rpc != "health") {
    std::cerr << "reshard-loadgen: --rpc must be plan or health\n";
    return 2;
  }
  v1::PlanRequest request = DefaultRequest();
  if (!absl::GetFlag(FLAGS_request).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_request));
    std::stringstream text;
    text << in.rdbuf();
    if (!in ||
        !google::protobuf::TextFormat::ParseFromString(text.str(), &request)) {
      std::cerr << "reshard-loadgen: --request: cannot read a PlanRequest from "
                << absl::GetFlag(FLAGS_request) << "\n";
      return 2;
    }
  }
  const int concurrency = std::max(1, absl::GetFlag(FLAGS_concurrency));
  const double seconds = absl::GetFlag(FLAGS_seconds);
  absl::StatusOr<TlsConfig> tls = ClientTlsFromFiles(TlsFilesFromFlags());
  if (!tls.ok()) {
    std::cerr << "reshard-loadgen: " << tls.status().message() << "\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     ChannelCredentialsFor(*tls));
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 std::chrono::seconds(5))) {
    std::cerr << "reshard-loadgen: cannot connect to "
              << absl::GetFlag(FLAGS_server) << "\n";
    return 2;
  }
  const auto start = Clock::now();
  LoadGen gen(channel, rpc == "plan", request,
              start + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(seconds)));
  gen.Run(concurrency);
  gen.Report(std::chrono::duration<double>(Clock::now() - start).count());
  return 0;
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "reshard-loadgen --server HOST:PORT --rpc plan|health --concurrency N "
      "--seconds S [--request FILE]");
  reshard::SetFlagsUsage("reshard-loadgen", "bench/loadgen.cc");
  absl::ParseCommandLine(argc, argv);
  return reshard::Main();
}
