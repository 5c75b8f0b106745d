// /metrics of real reshard-planner processes (--metrics_listen on loopback):
// the page passes `promtool check metrics`, lists every Planner metric of
// docs/DESIGN.md §7 with its type, and each series moves when its event happens
// (a plan per planner, a cache hit and miss, warnings by code, requests
// refused by code, states expanded, calls in flight, draining), and SIGTERM
// lets the calls in flight finish. Also: the
// endpoint is off without the flag, and an address that cannot be bound
// stops start-up with a clear error. The Coordinator's series move with
// real agents: jobs, agents by state, runs by result, its RPCs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/planner/test_util.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

using testing::MakeMesh;
using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

// The body of `GET http://127.0.0.1:port/metrics`, or "" when the server
// does not answer 200 within 5 s.
std::string GetMetricsPage(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request =
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
        response.append(buffer, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
    return "";
  }
  return response.substr(body + 4);
}

// A series' text key as the exposition writes it: name{a="x",b="y"} with
// labels sorted by name (prometheus-cpp's label sets are sorted maps) and a
// histogram bucket's `le` last.
std::string Series(const std::string& name,
                   const std::map<std::string, std::string>& labels = {}) {
  if (labels.empty()) return name;
  std::string key = name + "{";
  auto add = [&key](const std::string& label, const std::string& value) {
    if (key.back() != '{') key += ",";
    key += label + "=\"" + value + "\"";
  };
  for (const auto& [label, value] : labels) {
    if (label != "le") add(label, value);
  }
  if (labels.count("le")) add("le", labels.at("le"));
  return key + "}";
}

// One scrape: every sample by series key, plus the page itself.
struct Scrape {
  std::string page;
  std::map<std::string, double> samples;

  // 0 for a series that is absent (counters by code appear on first use).
  double operator()(const std::string& name,
                    const std::map<std::string, std::string>& labels = {}) {
    auto it = samples.find(Series(name, labels));
    return it == samples.end() ? 0 : it->second;
  }
  bool Has(const std::string& name,
           const std::map<std::string, std::string>& labels = {}) const {
    return samples.count(Series(name, labels)) > 0;
  }
};

Scrape ScrapeMetrics(int port) {
  Scrape scrape;
  scrape.page = GetMetricsPage(port);
  std::istringstream lines(scrape.page);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    scrape.samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return scrape;
}

// `promtool check metrics` on `page`: "" when it passes, else its output.
std::string PromtoolProblems(const std::string& page) {
  char dir_template[] = "/tmp/reshard-promtool-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::ofstream(dir + "/page") << page;
  const int rc = std::system(("'" RESHARD_PROMTOOL "' check metrics < " + dir +
                              "/page > " + dir + "/out 2>&1")
                                 .c_str());
  std::ifstream in(dir + "/out");
  std::string out(std::istreambuf_iterator<char>(in), {});
  std::system(("rm -rf " + dir).c_str());
  return rc == 0 ? "" : "promtool exit " + std::to_string(rc) + ": " + out;
}

// A planner with metrics on; the metrics port read from its port file.
class MetricsServer {
 public:
  explicit MetricsServer(std::vector<std::string> flags = {})
      : dir_(MakeDir()), server_(WithMetrics(flags, dir_)) {
    std::ifstream(dir_ + "/metrics_port") >> metrics_port_;
  }
  ~MetricsServer() { std::system(("rm -rf " + dir_).c_str()); }

  ServerProcess& process() { return server_; }
  int metrics_port() const { return metrics_port_; }
  Scrape ScrapeNow() const { return ScrapeMetrics(metrics_port_); }

 private:
  static std::string MakeDir() {
    char dir_template[] = "/tmp/reshard-metrics-XXXXXX";
    return mkdtemp(dir_template);
  }
  static std::vector<std::string> WithMetrics(std::vector<std::string> flags,
                                              const std::string& dir) {
    flags.push_back("--metrics_listen=127.0.0.1:0");
    flags.push_back("--metrics_port_file=" + dir + "/metrics_port");
    return flags;
  }

  const std::string dir_;
  ServerProcess server_;
  int metrics_port_ = 0;
};

// Raw stub calls: the test sees exactly one server call per request (the
// client library would retry and re-register).
class Planner {
 public:
  explicit Planner(const std::string& address)
      : stub_(v1::Planner::NewStub(grpc::CreateChannel(
            address, grpc::InsecureChannelCredentials()))) {}

  grpc::StatusCode Plan(const v1::PlanRequest& request) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::PlanResponse response;
    return stub_->Plan(&ctx, request, &response).error_code();
  }
  grpc::StatusCode PlanBatch(const v1::PlanBatchRequest& request) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::PlanBatchResponse response;
    return stub_->PlanBatch(&ctx, request, &response).error_code();
  }
  grpc::StatusCode RegisterMesh(const Mesh& mesh) {
    grpc::ClientContext ctx;
    v1::RegisterMeshRequest request;
    *request.mutable_mesh() = proto::MeshToProto(mesh);
    v1::RegisterMeshResponse response;
    return stub_->RegisterMesh(&ctx, request, &response).error_code();
  }
  grpc::StatusCode GetMesh(const std::string& id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::GetMeshRequest request;
    request.set_mesh_id(id);
    v1::GetMeshResponse response;
    return stub_->GetMesh(&ctx, request, &response).error_code();
  }
  v1::Planner::Stub& stub() { return *stub_; }

 private:
  std::unique_ptr<v1::Planner::Stub> stub_;
};

v1::PlanRequest Request(const Mesh& mesh, std::vector<int64_t> shape,
                        const std::string& src, const std::string& dst,
                        v1::PlannerKind planner = v1::PLANNER_KIND_OPTIMAL) {
  v1::PlanRequest r;
  *r.mutable_mesh() = proto::MeshToProto(mesh);
  for (int64_t s : shape) r.mutable_tensor()->add_shape(s);
  r.mutable_src()->set_text(src);
  r.mutable_dst()->set_text(dst);
  r.mutable_options()->set_planner(planner);
  return r;
}

// Every Planner metric of docs/DESIGN.md §7 and the operator's extras, with
// types.
const std::vector<std::pair<std::string, std::string>> kFamilies = {
    {"reshard_plan_requests_total", "counter"},
    {"reshard_plan_duration_seconds", "histogram"},
    {"reshard_plan_cache_hits_total", "counter"},
    {"reshard_plan_cache_misses_total", "counter"},
    {"reshard_plan_cache_entries", "gauge"},
    {"reshard_meshes", "gauge"},
    {"reshard_search_states_expanded", "histogram"},
    {"reshard_plan_warnings_total", "counter"},
    {"reshard_rpc_requests_total", "counter"},
    {"reshard_rpc_duration_seconds", "histogram"},
    {"reshard_build_info", "gauge"},
    {"reshard_plan_cache_capacity", "gauge"},
    {"reshard_meshes_capacity", "gauge"},
    {"reshard_rpc_requests_in_flight", "gauge"},
    {"reshard_draining", "gauge"},
};

TEST(PlannerMetricsTest, PagePassesPromtoolAndListsEveryMetric) {
  MetricsServer server({"--cache_entries=77", "--max_meshes=5"});
  ASSERT_NE(server.process().port(), 0) << server.process().log();
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  Scrape scrape = server.ScrapeNow();
  ASSERT_FALSE(scrape.page.empty());
  EXPECT_EQ(PromtoolProblems(scrape.page), "") << scrape.page;
  for (const auto& [name, type] : kFamilies) {
    EXPECT_NE(scrape.page.find("# TYPE " + name + " " + type + "\n"),
              std::string::npos)
        << name;
  }
  EXPECT_EQ(scrape("reshard_build_info", {{"version", kReshardVersion}}), 1);
  EXPECT_EQ(scrape("reshard_plan_cache_capacity"), 77);
  EXPECT_EQ(scrape("reshard_meshes_capacity"), 5);
  EXPECT_EQ(scrape("reshard_draining"), 0);
  EXPECT_EQ(scrape("reshard_rpc_requests_in_flight"), 0);
  // Closed sets have their series from the start, so rates exist at once.
  for (const char* planner : {"optimal", "torch_greedy", "torch_graph"}) {
    EXPECT_TRUE(scrape.Has("reshard_plan_requests_total",
                           {{"planner", planner}, {"code", "OK"}}));
  }
  for (const char* code :
       {"missing_flattened_group", "search_budget_exceeded",
        "non_ascending_merge_refused", "uneven_merge_refused"}) {
    EXPECT_TRUE(scrape.Has("reshard_plan_warnings_total", {{"code", code}}));
  }
  EXPECT_TRUE(scrape.Has("reshard_rpc_requests_total",
                         {{"method", "ResolveGroups"}, {"code", "OK"}}));
  EXPECT_EQ(server.process().Stop(), 0);
}

// Requests of one planner or method with one code; plans computed.
double Plans(Scrape& s, const char* planner, const char* code = "OK") {
  return s("reshard_plan_requests_total",
           {{"planner", planner}, {"code", code}});
}
double Rpcs(Scrape& s, const char* method, const char* code = "OK") {
  return s("reshard_rpc_requests_total", {{"method", method}, {"code", code}});
}
double PlanningCount(Scrape& s, const char* planner) {
  return s("reshard_plan_duration_seconds_count", {{"planner", planner}});
}

// A plan per planner (each a cache miss), the first again (a hit),
// warnings of two codes, requests refused by the server and by a planner.
void CauseEveryEvent(Planner& planner) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  ASSERT_EQ(planner.RegisterMesh(mesh), grpc::OK);
  const v1::PlannerKind kinds[] = {v1::PLANNER_KIND_OPTIMAL,
                                   v1::PLANNER_KIND_TORCH_GREEDY,
                                   v1::PLANNER_KIND_TORCH_GRAPH};
  for (v1::PlannerKind kind : kinds) {
    ASSERT_EQ(
        planner.Plan(Request(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R", kind)),
        grpc::OK);
  }
  ASSERT_EQ(planner.Plan(Request(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R")),
            grpc::OK);
  // Warnings: a group the mesh lacks; a budget too small for the search.
  ASSERT_EQ(planner.Plan(Request(MakeMesh({2, 2, 2}), {16, 16},
                                 "P(sum),R,P(sum)", "R,R,R")),
            grpc::OK);
  v1::PlanRequest tight =
      Request(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R");
  tight.mutable_options()->set_search_budget(1);
  ASSERT_EQ(planner.Plan(tight), grpc::OK);
  // Refused by the server: a budget over its limit, an unknown mesh, a
  // batch over its limit; refused by a planner: what PyTorch cannot plan.
  v1::PlanRequest over_limit = tight;
  over_limit.mutable_options()->set_search_budget(300001);
  ASSERT_EQ(planner.Plan(over_limit), grpc::INVALID_ARGUMENT);
  ASSERT_EQ(planner.GetMesh("mesh-0"), grpc::NOT_FOUND);
  v1::PlanBatchRequest batch;
  *batch.mutable_mesh() = proto::MeshToProto(mesh);
  for (int i = 0; i < 3; ++i) batch.add_items();
  ASSERT_EQ(planner.PlanBatch(batch), grpc::INVALID_ARGUMENT);
  ASSERT_EQ(planner.Plan(Request(MakeMesh({2}), {8}, "P(sum)", "P(avg)",
                                 v1::PLANNER_KIND_TORCH_GREEDY)),
            grpc::FAILED_PRECONDITION);
}

// What CauseEveryEvent did, in the plan, cache, mesh, search and warning
// series.
void ExpectPlanSeriesMoved(Scrape& before, Scrape& after) {
  EXPECT_EQ(Plans(after, "optimal") - Plans(before, "optimal"), 4);
  EXPECT_EQ(Plans(after, "torch_greedy") - Plans(before, "torch_greedy"), 1);
  EXPECT_EQ(Plans(after, "torch_graph") - Plans(before, "torch_graph"), 1);
  EXPECT_EQ(Plans(after, "optimal", "INVALID_ARGUMENT"), 1);
  EXPECT_EQ(Plans(after, "torch_greedy", "FAILED_PRECONDITION"), 1);
  // Planning is timed on misses only (the hit and the refusal are not).
  EXPECT_EQ(PlanningCount(after, "optimal"), 3);
  EXPECT_EQ(PlanningCount(after, "torch_greedy"), 2);
  EXPECT_EQ(PlanningCount(after, "torch_graph"), 1);
  EXPECT_GT(
      after("reshard_plan_duration_seconds_sum", {{"planner", "optimal"}}), 0);
  EXPECT_EQ(after("reshard_plan_cache_hits_total"), 1);
  EXPECT_EQ(after("reshard_plan_cache_misses_total"), 6);
  EXPECT_EQ(after("reshard_plan_cache_entries"), 5);
  EXPECT_EQ(after("reshard_meshes"), 1);
  EXPECT_EQ(after("reshard_search_states_expanded_count"), 5);
  EXPECT_GT(after("reshard_search_states_expanded_sum"), 0);
  EXPECT_EQ(after("reshard_plan_warnings_total",
                  {{"code", "missing_flattened_group"}}),
            1);
  EXPECT_EQ(after("reshard_plan_warnings_total",
                  {{"code", "search_budget_exceeded"}}),
            1);
}

// What CauseEveryEvent did, in the RPC series.
void ExpectRpcSeriesMoved(Scrape& after) {
  EXPECT_EQ(Rpcs(after, "RegisterMesh"), 1);
  EXPECT_EQ(Rpcs(after, "Plan"), 6);
  EXPECT_EQ(Rpcs(after, "Plan", "INVALID_ARGUMENT"), 1);
  EXPECT_EQ(Rpcs(after, "Plan", "FAILED_PRECONDITION"), 1);
  EXPECT_EQ(Rpcs(after, "GetMesh", "NOT_FOUND"), 1);
  EXPECT_EQ(Rpcs(after, "PlanBatch", "INVALID_ARGUMENT"), 1);
  EXPECT_EQ(after("reshard_rpc_duration_seconds_count", {{"method", "Plan"}}),
            8);
  EXPECT_EQ(after("reshard_rpc_duration_seconds_bucket",
                  {{"method", "Plan"}, {"le", "+Inf"}}),
            8);
}

// The backticked names between docs/REFERENCE.md's `<!-- methods: KIND -->` and
// the next `<!-- end -->`.
std::set<std::string> ReferenceMethods(const std::string& kind) {
  std::ifstream in(std::string(RESHARD_SOURCE_DIR) + "/docs/REFERENCE.md");
  const std::string text(std::istreambuf_iterator<char>(in), {});
  const std::string open = "<!-- methods: " + kind + " -->";
  const size_t begin = text.find(open);
  const size_t end = text.find("<!-- end -->", begin);
  std::set<std::string> names;
  if (begin == std::string::npos || end == std::string::npos) return names;
  // Between backquotes: every other piece, from the second.
  const std::vector<std::string> pieces =
      absl::StrSplit(text.substr(begin, end - begin), '`');
  for (size_t i = 1; i < pieces.size(); i += 2) names.insert(pieces[i]);
  return names;
}

// The metrics reference names exactly the methods the binary counts: every
// RPC of both services has its series from the start.
TEST(PlannerMetricsTest, ReferenceListsEveryMethodTheBinaryCounts) {
  MetricsServer server;
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  const Scrape scrape = server.ScrapeNow();
  std::set<std::string> served;
  const std::string prefix = "reshard_rpc_requests_total{";
  for (const auto& [series, value] : scrape.samples) {
    if (series.rfind(prefix, 0) != 0) continue;
    const size_t at = series.find("method=\"");
    if (at == std::string::npos) continue;
    served.insert(series.substr(at + 8, series.find('"', at + 8) - at - 8));
  }
  std::set<std::string> documented = ReferenceMethods("planner");
  const std::set<std::string> coordinator = ReferenceMethods("coordinator");
  EXPECT_GE(documented.size(), 7u);
  EXPECT_GE(coordinator.size(), 12u);
  documented.insert(coordinator.begin(), coordinator.end());
  EXPECT_EQ(documented, served);
}

TEST(PlannerMetricsTest, EverySeriesMovesWithItsEvent) {
  MetricsServer server({"--max_search_budget=300000", "--max_batch_items=2"});
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  Planner planner(server.process().address());
  Scrape before = server.ScrapeNow();
  ASSERT_NO_FATAL_FAILURE(CauseEveryEvent(planner));
  Scrape after = server.ScrapeNow();
  EXPECT_EQ(PromtoolProblems(after.page), "") << after.page;
  ExpectPlanSeriesMoved(before, after);
  ExpectRpcSeriesMoved(after);
  EXPECT_EQ(server.process().Stop(), 0);
}

// Polls `done` on fresh scrapes every 20 ms for up to 5 s; the last scrape.
Scrape ScrapeUntil(
    const MetricsServer& server, const std::function<bool(Scrape&)>& done,
    const std::function<void()>& between = [] {}) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  Scrape scrape = server.ScrapeNow();
  while (!done(scrape) && Clock::now() < deadline) {
    between();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    scrape = server.ScrapeNow();
  }
  return scrape;
}

TEST(PlannerMetricsTest, DrainingIsVisibleAndRefusalsAreCounted) {
  MetricsServer server({"--drain_seconds=5"});
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  Planner planner(server.process().address());
  ASSERT_EQ(planner.GetMesh("mesh-0"), grpc::NOT_FOUND);
  server.process().Terminate();
  // Once the server says it drains (a call sent before it may still be
  // answered), calls keep arriving (so the drain waits): each is refused.
  ASSERT_EQ(
      ScrapeUntil(server, [](Scrape& s) { return s("reshard_draining") == 1; })(
          "reshard_draining"),
      1);
  Scrape draining = ScrapeUntil(
      server, [](Scrape& s) { return Rpcs(s, "GetMesh", "UNAVAILABLE") > 0; },
      [&] { planner.GetMesh("mesh-0"); });
  EXPECT_EQ(draining("reshard_draining"), 1);
  EXPECT_GT(Rpcs(draining, "GetMesh", "UNAVAILABLE"), 0);
  EXPECT_EQ(Rpcs(draining, "GetMesh", "NOT_FOUND"), 1);
  EXPECT_EQ(server.process().Stop(), 0);
}

TEST(PlannerMetricsTest, CallsInFlightAreCounted) {
  MetricsServer server;
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  Planner planner(server.process().address());
  // PyTorch's graph search on a 7-D mesh runs for seconds (4 s here): the
  // call is in flight until the test cancels it.
  const v1::PlanRequest slow = Request(
      MakeMesh({2, 2, 2, 2, 2, 2, 2}), {64, 64, 64},
      "S(0),S(1),P(sum),S(0),S(2),R,P(sum)",
      "R,S(2),S(1),P(sum),S(0),S(1),S(0)", v1::PLANNER_KIND_TORCH_GRAPH);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::PlanResponse response;
  std::promise<grpc::Status> finished;
  std::future<grpc::Status> status = finished.get_future();
  planner.stub().async()->Plan(
      &ctx, &slow, &response,
      [&finished](grpc::Status s) { finished.set_value(std::move(s)); });
  Scrape running = ScrapeUntil(server, [](Scrape& s) {
    return s("reshard_rpc_requests_in_flight") == 1;
  });
  EXPECT_EQ(running("reshard_rpc_requests_in_flight"), 1);
  ctx.TryCancel();
  ASSERT_EQ(status.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(status.get().error_code(), grpc::CANCELLED);
  // The server sees the cancellation at its search's next stop check.
  Scrape after = ScrapeUntil(
      server, [](Scrape& s) { return Rpcs(s, "Plan", "CANCELLED") == 1; });
  EXPECT_EQ(after("reshard_rpc_requests_in_flight"), 0);
  EXPECT_EQ(Rpcs(after, "Plan", "CANCELLED"), 1);
  EXPECT_EQ(Plans(after, "torch_graph", "CANCELLED"), 1);
  EXPECT_EQ(PlanningCount(after, "torch_graph"), 1);
  EXPECT_EQ(server.process().Stop(), 0);
}

// RunJob of S(0) -> R on a 1-D mesh of `world` ranks, through the stub.
grpc::Status RunTiny(v1::Coordinator::Stub& stub, const std::string& job,
                     int world) {
  v1::RunJobRequest request;
  request.set_job(job);
  v1::PlanRequest* plan = request.mutable_request();
  *plan->mutable_mesh() = proto::MeshToProto(MakeMesh({world}));
  plan->mutable_tensor()->add_shape(8);
  plan->mutable_tensor()->set_dtype(v1::DTYPE_FLOAT32);
  plan->mutable_src()->set_text("S(0)");
  plan->mutable_dst()->set_text("R");
  request.set_iters(1);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  v1::RunJobResponse response;
  return stub.RunJob(&context, request, &response);
}

// Callers keep planning; SIGTERM comes once the server counts two calls in
// its handlers (the callers alone cannot know that: their next calls may
// not have arrived). The calls in flight still complete, later ones are
// refused (UNAVAILABLE, or CANCELLED when gRPC's Shutdown catches one
// between the drain and its handler), and the server exits 0.
TEST(PlannerMetricsTest, SigtermDrainsInFlightCalls) {
  MetricsServer server({"--drain_seconds=20"});
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  Planner planner(server.process().address());
  // PyTorch's exhaustive Dijkstra on a 5-D mesh: ~150 ms per call.
  const v1::PlanRequest heavy =
      Request(MakeMesh({2, 2, 2, 2, 2}), {1024, 512, 256, 64},
              "S(0),P(sum),R,S(3),P(sum)", "S(1),R,S(2),R,S(0)",
              v1::PLANNER_KIND_TORCH_GRAPH);
  std::atomic<bool> signalled{false}, stop{false};
  std::atomic<int> ok_after_signal{0}, unexpected{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 200 && !stop; ++i) {
        v1::PlanRequest r = heavy;
        r.mutable_tensor()->set_shape(0, 1024 + 8 * (t * 200 + i));  // no hits
        const grpc::StatusCode code = planner.Plan(r);
        if (code == grpc::OK) {
          if (signalled) ++ok_after_signal;
        } else if ((code == grpc::UNAVAILABLE || code == grpc::CANCELLED) &&
                   signalled) {
          // The server has stopped accepting calls: refused (UNAVAILABLE),
          // or, for one that reached it after the drain but before its
          // handler ran, cut off by gRPC's Shutdown (CANCELLED).
          return;
        } else {
          ++unexpected;
          ADD_FAILURE() << "code " << code;
          return;
        }
      }
    });
  }
  // (No ASSERT while the callers run: leaving would destroy them joinable.)
  Scrape busy = ScrapeUntil(server, [](Scrape& s) {
    return s("reshard_rpc_requests_in_flight") >= 2;
  });
  const bool in_flight = busy("reshard_rpc_requests_in_flight") >= 2;
  EXPECT_TRUE(in_flight) << "the server never had two calls in its handlers";
  if (!in_flight) stop = true;
  signalled = true;
  const int status = server.process().Stop();
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(status, 0) << server.process().log();
  EXPECT_EQ(unexpected.load(), 0);
  // The calls in the handlers when SIGTERM arrived still completed.
  EXPECT_GT(ok_after_signal.load(), 0);
}

TEST(PlannerMetricsTest, CoordinatorSeriesMoveWithJobsAgentsAndRuns) {
  MetricsServer server;
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  testing::AgentProcesses agents(server.process().address(), "metrics", 2);
  agents.StartAll();
  Scrape joined = ScrapeUntil(server, [](Scrape& s) {
    return s("reshard_agents", {{"state", "connected"}}) == 2;
  });
  EXPECT_EQ(joined("reshard_jobs"), 1) << joined.page;
  EXPECT_EQ(joined("reshard_agents", {{"state", "connected"}}), 2);
  EXPECT_EQ(joined("reshard_job_runs_total", {{"result", "validated"}}), 0);
  auto stub = v1::Coordinator::NewStub(grpc::CreateChannel(
      server.process().address(), grpc::InsecureChannelCredentials()));
  ASSERT_TRUE(RunTiny(*stub, "metrics", 2).ok()) << agents.Logs();
  EXPECT_EQ(RunTiny(*stub, "nobody", 2).error_code(), grpc::NOT_FOUND);
  Scrape ran = server.ScrapeNow();
  EXPECT_EQ(ran("reshard_job_runs_total", {{"result", "validated"}}), 1);
  EXPECT_EQ(ran("reshard_job_runs_total", {{"result", "refused"}}), 1);
  EXPECT_EQ(ran("reshard_job_run_duration_seconds_count"), 1);
  EXPECT_EQ(
      ran("reshard_rpc_requests_total", {{"method", "Join"}, {"code", "OK"}}),
      2);
  EXPECT_EQ(
      ran("reshard_rpc_requests_total", {{"method", "Report"}, {"code", "OK"}}),
      2);
  EXPECT_EQ(ran("reshard_rpc_requests_total",
                {{"method", "RunJob"}, {"code", "NOT_FOUND"}}),
            1);
  EXPECT_EQ(PromtoolProblems(ran.page), "") << ran.page;
  agents.Wait(std::chrono::seconds(10), SIGTERM);  // they leave: job dropped
  Scrape left =
      ScrapeUntil(server, [](Scrape& s) { return s("reshard_jobs") == 0; });
  EXPECT_EQ(left("reshard_jobs"), 0) << left.page;
  EXPECT_EQ(left("reshard_agents", {{"state", "connected"}}), 0);
}

// A run refused for its credentials (here: no job token on a server that
// serves only jobs with one) is a refusal, not a failed run.
TEST(PlannerMetricsTest, RunsRefusedForTheirCredentialsCountAsRefused) {
  MetricsServer server({"--allow_open_jobs=false"});
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  auto stub = v1::Coordinator::NewStub(grpc::CreateChannel(
      server.process().address(), grpc::InsecureChannelCredentials()));
  const grpc::Status run = RunTiny(*stub, "anyone", 2);
  EXPECT_EQ(run.error_code(), grpc::UNAUTHENTICATED) << run.error_message();
  Scrape after = server.ScrapeNow();
  EXPECT_EQ(after("reshard_job_runs_total", {{"result", "refused"}}), 1);
  EXPECT_EQ(after("reshard_job_runs_total", {{"result", "failed"}}), 0);
  EXPECT_EQ(server.process().Stop(), 0);
}

// A connection past --max_connections_per_peer is closed at once (the
// caller's UNAVAILABLE) and counted by reason; the one open still serves.
TEST(PlannerMetricsTest, ConnectionsPastThePeerCapAreCountedAsRefused) {
  MetricsServer server({"--max_connections_per_peer=1"});
  ASSERT_NE(server.metrics_port(), 0) << server.process().log();
  // Each channel its own connection (gRPC shares them between channels).
  grpc::ChannelArguments own;
  own.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const auto list = [&](const std::shared_ptr<grpc::Channel>& channel) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    v1::ListMeshesResponse response;
    return v1::Planner::NewStub(channel)->ListMeshes(
        &context, v1::ListMeshesRequest(), &response);
  };
  auto first = grpc::CreateCustomChannel(
      server.process().address(), grpc::InsecureChannelCredentials(), own);
  ASSERT_TRUE(list(first).ok());
  auto second = grpc::CreateCustomChannel(
      server.process().address(), grpc::InsecureChannelCredentials(), own);
  const grpc::Status refused = list(second);
  EXPECT_EQ(refused.error_code(), grpc::UNAVAILABLE) << refused.error_message();
  EXPECT_TRUE(list(first).ok());
  Scrape after = server.ScrapeNow();
  EXPECT_GE(after("reshard_connections_refused_total", {{"reason", "peer"}}), 1)
      << after.page;
  EXPECT_EQ(after("reshard_connections_refused_total", {{"reason", "total"}}),
            0);
  EXPECT_EQ(after("reshard_connections_open"), 1);
  EXPECT_GE(after("reshard_connections_accepted_total"), 1);
  EXPECT_NE(server.process().log().find(
                "--max_connections_per_peer=1: a new one is closed"),
            std::string::npos)
      << server.process().log();
  EXPECT_EQ(server.process().Stop(), 0);
}

TEST(PlannerMetricsTest, OffWithoutTheFlag) {
  char dir_template[] = "/tmp/reshard-metrics-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  ServerProcess server({"--metrics_port_file=" + dir + "/metrics_port"});
  ASSERT_NE(server.port(), 0) << server.log();
  EXPECT_FALSE(std::ifstream(dir + "/metrics_port").good());
  EXPECT_EQ(server.log().find("metrics"), std::string::npos) << server.log();
  EXPECT_EQ(server.Stop(), 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST(PlannerMetricsTest, AnAddressThatCannotBeBoundStopsStartUp) {
  MetricsServer first;
  ASSERT_NE(first.metrics_port(), 0) << first.process().log();
  const std::string taken = "127.0.0.1:" + std::to_string(first.metrics_port());
  for (const std::string& address : {taken, std::string("not-an-address")}) {
    ServerProcess second({"--metrics_listen=" + address});
    EXPECT_EQ(second.port(), 0) << "served gRPC anyway: " << address;
    EXPECT_NE(second.Stop(), 0) << address;
    EXPECT_NE(second.log().find("--metrics_listen: cannot serve metrics on \"" +
                                address + "\""),
              std::string::npos)
        << second.log();
  }
  EXPECT_EQ(first.process().Stop(), 0);
}

}  // namespace
}  // namespace reshard::server
