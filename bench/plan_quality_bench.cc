// plan_quality_bench: are the planner's predicted savings real? On a
// running job (bench/plan_quality.sh starts the emulated two-tier cluster,
// calibrates its links and runs this in its switch namespace), every
// request of the corpus (plan_quality_corpus.h) is planned three ways:
// `optimal` on the calibrated mesh, `torch_greedy`, and `optimal` on the
// mesh with default links. Each distinct plan runs --rounds times (and on,
// up to --max_rounds, until every one has run for --min_ms in all), alternated
// with the others in one process, and is validated every time.
// Prints one Markdown row per request (predicted and measured ms, predicted
// and measured saving of optimal over torch_greedy, their ratio) and the
// summaries docs/PERFORMANCE.md quotes.
// usage: plan_quality_bench --write_corpus FILE [--seed S] [--count N]
//        plan_quality_bench --server HOST:PORT --job NAME --corpus FILE
//          --links MESH=FILE... [--rounds R] [--min_ms MS] [--max_rounds M]
//          [--iters K] [--warmup W]
#include <stdio.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/plan_quality_corpus.h"
#include "client/cli_args.h"
#include "client/plan_flags.h"
#include "planner/cost/cost_model.h"
#include "planner/cost/link_fit.h"
#include "planner/cost/plan_costs.h"
#include "planner/search/planner.h"
#include "reshard/client.h"

namespace reshard::bench {
namespace {

struct Flags {
  std::string write_corpus;
  uint32_t seed = 7;
  int count = 64;
  std::string server;
  std::string job;
  std::string corpus;
  std::map<std::string, std::string> links;  // mesh name -> links file
  int rounds = 10;
  // Short plans run more rounds: their rounds vary more (scheduling on 2
  // cores) and cost little.
  int min_ms = 0;
  int max_rounds = 60;
  int iters = 3;
  int warmup = 1;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "plan_quality_bench: %s\n", why.c_str());
  std::exit(1);
}

int IntOf(const std::string& flag, const std::string& text) {
  int v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 0) Die(flag + ": not a count");
  return v;
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  const std::map<std::string, std::string*> strings = {
      {"--write_corpus", &f.write_corpus},
      {"--server", &f.server},
      {"--job", &f.job},
      {"--corpus", &f.corpus}};
  const std::map<std::string, int*> counts = {
      {"--count", &f.count},   {"--rounds", &f.rounds},
      {"--min_ms", &f.min_ms}, {"--max_rounds", &f.max_rounds},
      {"--iters", &f.iters},   {"--warmup", &f.warmup}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string v = argv[i + 1];
    if (const auto s = strings.find(flag); s != strings.end()) {
      *s->second = v;
    } else if (const auto c = counts.find(flag); c != counts.end()) {
      *c->second = IntOf(flag, v);
    } else if (flag == "--seed") {
      f.seed = static_cast<uint32_t>(IntOf(flag, v));
    } else if (flag == "--links") {
      std::vector<std::string> kv = absl::StrSplit(v, absl::MaxSplits('=', 1));
      if (kv.size() != 2) Die("--links: MESH=FILE");
      f.links[kv[0]] = kv[1];
    } else {
      Die("unknown flag " + flag);
    }
  }
  return f;
}

// A corpus mesh, with the --link flags of `links_file` when given.
Mesh MeshOf(const std::string& name, const std::string& links_file) {
  std::vector<std::string> args;
  for (const CorpusMesh& m : CorpusMeshes()) {
    if (m.name == name) args = m.flags;
  }
  if (args.empty()) Die("unknown corpus mesh " + name);
  if (!links_file.empty()) {
    std::ifstream in(links_file);
    std::string flag, value;
    while (in >> flag >> value) args.insert(args.end(), {flag, value});
    if (!in.eof()) Die("cannot read " + links_file);
  }
  absl::StatusOr<client::CliArgs> cli =
      client::CliArgs::Parse(args, client::PlanFlags(), {});
  if (!cli.ok()) Die(std::string(cli.status().message()));
  absl::StatusOr<Mesh> mesh = client::MeshFromFlags(*cli);
  if (!mesh.ok()) Die(std::string(mesh.status().message()));
  return *std::move(mesh);
}

Plan PlanOf(const Mesh& mesh, const CorpusRequest& r, PlannerKind planner) {
  PlanOptions options;
  options.planner = planner;
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, r.shape, r.dtype, r.from, r.to, options);
  if (!request.ok()) Die(std::string(request.status().message()));
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  if (!plan.ok()) Die(std::string(plan.status().message()));
  return *std::move(plan);
}

bool SameSteps(const Plan& a, const Plan& b) {
  if (a.steps.size() != b.steps.size()) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    if (!a.steps[i].SameAction(b.steps[i])) return false;
  }
  return true;
}

std::string StepsText(const Mesh& mesh, const Plan& plan) {
  std::vector<std::string> steps;
  for (const Step& s : plan.steps) {
    if (!s.IsCommunicating(mesh)) continue;
    steps.push_back(
        absl::StrCat(StepOpName(s.op), "(", mesh.GroupName(s.group), ")"));
  }
  return absl::StrJoin(steps, " ");
}

// A request's three plans: optimal on the calibrated mesh, torch_greedy,
// and optimal on default links priced on the calibrated mesh; `run_as[k]`
// is the first plan with plan k's steps (measured once for both).
struct RequestPlans {
  CorpusRequest request;
  Mesh mesh;  // calibrated
  std::vector<Plan> plans;
  std::vector<int> run_as;
  std::vector<double> measured_ms;            // by plan
  std::vector<std::vector<double>> round_ms;  // by plan, every round's
};
constexpr int kOptimal = 0;
constexpr int kTorch = 1;
constexpr int kDefaultLinks = 2;

RequestPlans PlansOf(const CorpusRequest& r, const Flags& f) {
  const auto links = f.links.find(r.mesh);
  if (links == f.links.end()) Die("no --links for mesh " + r.mesh);
  RequestPlans p{r, MeshOf(r.mesh, links->second), {}, {}, {}};
  p.plans.push_back(PlanOf(p.mesh, r, PlannerKind::kOptimal));
  p.plans.push_back(PlanOf(p.mesh, r, PlannerKind::kTorchGreedy));
  Plan by_default = PlanOf(MeshOf(r.mesh, ""), r, PlannerKind::kOptimal);
  PricePlan(CostModel(p.mesh, by_default.tensor, CostOptions{}), by_default);
  p.plans.push_back(by_default);
  for (size_t k = 0; k < p.plans.size(); ++k) {
    size_t j = 0;
    while (!SameSteps(p.plans[j], p.plans[k])) ++j;
    p.run_as.push_back(static_cast<int>(j));
  }
  return p;
}

// One validated run's median seconds per execution of the whole plan.
double RunOnce(Client& client, const Flags& f, const RequestPlans& p, int k) {
  JobRunOptions options;
  options.iters = f.iters;
  options.warmup = f.warmup;
  options.deadline = absl::Seconds(300);
  absl::StatusOr<JobRun> run =
      client.RunJob(f.job, p.mesh, p.plans[k], options);
  if (!run.ok()) {
    Die(absl::StrCat("request ", p.request.id, " plan ", k, ": ",
                     run.status().message()));
  }
  if (!run->summary.validated) {
    Die(absl::StrCat("request ", p.request.id, " plan ", k,
                     " did not validate: ", run->summary.why_not));
  }
  return run->summary.seconds_median;
}

// Whether another round is due: fewer than --rounds so far, or (below
// --max_rounds) a plan whose rounds add up to less than --min_ms.
bool AnotherRound(const Flags& f, int round,
                  const std::vector<std::vector<double>>& seconds,
                  const std::vector<int>& distinct) {
  if (round < f.rounds) return true;
  if (round >= f.max_rounds) return false;
  for (int k : distinct) {
    double total = 0;
    for (double t : seconds[k]) total += t;
    if (total * 1e3 < f.min_ms) return true;
  }
  return false;
}

// Every distinct plan in rounds (AnotherRound), alternated (the order
// reversed every other round); the median per plan.
void Measure(Client& client, const Flags& f, RequestPlans& p) {
  std::vector<int> distinct;
  for (size_t k = 0; k < p.plans.size(); ++k) {
    if (p.run_as[k] == static_cast<int>(k)) distinct.push_back(k);
  }
  std::vector<std::vector<double>> seconds(p.plans.size());
  for (int round = 0; AnotherRound(f, round, seconds, distinct); ++round) {
    std::vector<int> order = distinct;
    if (round % 2 == 1) std::reverse(order.begin(), order.end());
    for (int k : order) seconds[k].push_back(RunOnce(client, f, p, k));
  }
  for (size_t k = 0; k < p.plans.size(); ++k) {
    p.measured_ms.push_back(Median(seconds[p.run_as[k]]) * 1e3);
    std::vector<double> ms;
    for (double t : seconds[p.run_as[k]]) ms.push_back(t * 1e3);
    p.round_ms.push_back(std::move(ms));
  }
}

// A distribution-free interval for the median of `v` (>= 95% coverage
// from 6 values on): the k-th smallest and k-th largest, with k the
// largest count such that P(Binomial(n, 1/2) < k) <= 2.5%. The whole
// range below 6 values.
std::pair<double, double> MedianInterval(std::vector<double> v) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  double below = 0;  // P(X < k) for X ~ Binomial(n, 1/2), k = 1, 2, ...
  double term = std::pow(0.5, static_cast<double>(n));  // P(X = k - 1)
  size_t k = 0;
  while (k < n / 2 && below + term <= 0.025) {
    below += term;
    ++k;
    term *= static_cast<double>(n - k + 1) / static_cast<double>(k);
  }
  if (k == 0) return {v.front(), v.back()};
  return {v[k - 1], v[n - k]};
}

// Per round, plan a's time over plan b's (they ran in the same round).
std::vector<double> PairedRatios(const RequestPlans& p, int a, int b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < p.round_ms[a].size(); ++i) {
    ratios.push_back(p.round_ms[a][i] / p.round_ms[b][i]);
  }
  return ratios;
}

double PredictedMs(const RequestPlans& p, int k) {
  return p.plans[k].total_time_us / 1e3;
}
double Saving(double optimal, double torch) {
  return torch > 0 ? (torch - optimal) / torch : 0;
}

void PrintRow(const RequestPlans& p) {
  const CorpusRequest& r = p.request;
  const double predicted =
      Saving(PredictedMs(p, kOptimal), PredictedMs(p, kTorch));
  const double measured =
      Saving(p.measured_ms[kOptimal], p.measured_ms[kTorch]);
  printf(
      "| %d | %s | %s %s | %s → %s | %s | %s | %.2f | %.2f | %.2f | %.2f "
      "| %.0f%% | %.0f%% | %s |\n",
      r.id, r.mesh.c_str(), absl::StrJoin(r.shape, "x").c_str(),
      r.dtype.c_str(), r.from.c_str(), r.to.c_str(),
      StepsText(p.mesh, p.plans[kOptimal]).c_str(),
      StepsText(p.mesh, p.plans[kTorch]).c_str(), PredictedMs(p, kOptimal),
      PredictedMs(p, kTorch), p.measured_ms[kOptimal], p.measured_ms[kTorch],
      predicted * 100, measured * 100,
      predicted > 0 ? absl::StrFormat("%.2f", measured / predicted).c_str()
                    : "-");
  fflush(stdout);
}

constexpr double kSavingFloor = 0.20;  // the requests the summary judges
constexpr double kSlowerBy = 0.05;     // "measurably slower"

// Where optimal predicts a saving of >= 20%: the median of measured over
// predicted savings; slower than torch_greedy where optimal's median time
// is higher, measurably slower where the interval of the paired (same
// round) ratios lies above 1.
void PrintSavingSummary(const std::vector<RequestPlans>& all) {
  std::vector<double> ratios;
  int slower = 0;
  int measurably = 0;
  for (const RequestPlans& p : all) {
    const double predicted =
        Saving(PredictedMs(p, kOptimal), PredictedMs(p, kTorch));
    if (predicted < kSavingFloor) continue;
    ratios.push_back(Saving(p.measured_ms[kOptimal], p.measured_ms[kTorch]) /
                     predicted);
    if (p.measured_ms[kOptimal] > p.measured_ms[kTorch]) {
      const std::vector<double> paired = PairedRatios(p, kOptimal, kTorch);
      const auto [lo, hi] = MedianInterval(paired);
      printf(
          "optimal slower than torch_greedy, request %d: paired ratio "
          "%.2f [%.2f, %.2f]\n",
          p.request.id, Median(paired), lo, hi);
      ++slower;
      if (lo > 1) ++measurably;
    }
  }
  printf(
      "\nrequests: %zu; predicted saving >= 20%%: %zu; median measured / "
      "predicted saving there: %.2f; optimal measured slower than "
      "torch_greedy there: %d, measurably (the interval above 1): %d\n",
      all.size(), ratios.size(), Median(ratios), slower, measurably);
}

// Where calibrated links change the plan: per request the median of the
// paired (same round) ratios calibrated / default and its interval, and
// both plans' times predicted on the calibrated mesh; slower by > 5% where
// that median is, measurably slower where the whole interval is.
void PrintLinksSummary(const std::vector<RequestPlans>& all) {
  int differ = 0;
  int slower = 0;
  int measurably = 0;
  std::vector<double> medians;
  for (const RequestPlans& p : all) {
    if (p.run_as[kDefaultLinks] == p.run_as[kOptimal]) continue;
    ++differ;
    const std::vector<double> ratios = PairedRatios(p, kOptimal, kDefaultLinks);
    const double median = Median(ratios);
    const auto [lo, hi] = MedianInterval(ratios);
    medians.push_back(median);
    printf(
        "calibrated vs default links, request %d: %.2f ms vs %.2f ms, "
        "paired ratio %.2f [%.2f, %.2f], predicted %.2f vs %.2f ms (%s vs "
        "%s)\n",
        p.request.id, p.measured_ms[kOptimal], p.measured_ms[kDefaultLinks],
        median, lo, hi, PredictedMs(p, kOptimal), PredictedMs(p, kDefaultLinks),
        StepsText(p.mesh, p.plans[kOptimal]).c_str(),
        StepsText(p.mesh, p.plans[kDefaultLinks]).c_str());
    if (median > 1 + kSlowerBy) ++slower;
    if (lo > 1 + kSlowerBy) ++measurably;
  }
  printf(
      "plans that calibrated links change: %d; median paired calibrated / "
      "default ratio there: %.2f; calibrated slower by > 5%% (median): %d; "
      "measurably (the interval above 1.05): %d\n",
      differ, Median(medians), slower, measurably);
}

int WriteCorpus(const Flags& f) {
  std::ofstream out(f.write_corpus);
  out << "# plan_quality_bench corpus, seed " << f.seed << ", " << f.count
      << " requests: id, mesh, shape, dtype, from, to\n";
  for (const CorpusRequest& r : MakeCorpus(f.seed, f.count)) {
    out << CorpusLine(r) << "\n";
  }
  out.close();
  return out ? 0 : 1;
}

int RunCorpus(const Flags& f) {
  absl::StatusOr<std::vector<CorpusRequest>> corpus = ReadCorpus(f.corpus);
  if (!corpus.ok()) Die(std::string(corpus.status().message()));
  ClientOptions options;
  options.target = f.server;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  if (!client.ok()) Die(std::string(client.status().message()));
  printf(
      "| id | mesh | tensor | from → to | optimal | torch_greedy | "
      "predicted ms opt | predicted ms torch | measured ms opt | measured "
      "ms torch | predicted saving | measured saving | ratio |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<RequestPlans> all;
  for (const CorpusRequest& r : *corpus) {
    RequestPlans p = PlansOf(r, f);
    Measure(**client, f, p);
    PrintRow(p);
    all.push_back(std::move(p));
  }
  PrintSavingSummary(all);
  PrintLinksSummary(all);
  return 0;
}

}  // namespace
}  // namespace reshard::bench

int main(int argc, char** argv) {
  const reshard::bench::Flags flags = reshard::bench::ParseFlags(argc, argv);
  if (!flags.write_corpus.empty()) return reshard::bench::WriteCorpus(flags);
  if (flags.server.empty() || flags.job.empty() || flags.corpus.empty()) {
    reshard::bench::Die("--server, --job and --corpus are required");
  }
  return reshard::bench::RunCorpus(flags);
}
