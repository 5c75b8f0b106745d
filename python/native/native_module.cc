// reshard._native: the C++ planner in the Python process (python/reshard/
// _inprocess.py is its one caller). The one place Python values meet core
// types: meshes are built once per Python Mesh, plans stay C++ objects whose
// steps Python converts one at a time, and a failed status raises
// reshard.Error with its code and the core's message. The GIL is released
// while planning.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "executor/run/cross_program.h"
#include "executor/run/rank_program.h"
#include "executor/run/rank_program_json.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/cost/cost_model.h"
#include "planner/cross/cross_planner.h"
#include "planner/cross/cross_request.h"
#include "planner/format/cross_plan_format.h"
#include "planner/format/plan_format.h"
#include "planner/format/plan_json_reader.h"
#include "planner/search/flatten_policy.h"
#include "planner/search/plan_cache.h"
#include "planner/search/plan_request.h"
#include "planner/search/planner.h"

namespace nb = nanobind;

namespace reshard::python {
namespace {

// A failed status on its way to Python (translated to reshard.Error).
struct StatusError {
  absl::Status status;
};

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusError{value.status()};
  return *std::move(value);
}

// The process's plan cache, shared by every Mesh and call (thread-safe).
PlanCache& Cache() {
  static PlanCache* cache = new PlanCache(4096);
  return *cache;
}

using OptionalDouble = std::optional<double>;
using LinkTuple = std::tuple<OptionalDouble, OptionalDouble, OptionalDouble>;

LinkParams LinkFrom(const LinkTuple& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

struct MeshHandle {
  std::shared_ptr<const Mesh> mesh;
};

MeshHandle MakeMesh(std::vector<int64_t> shape,
                    std::vector<std::string> dim_names,
                    std::vector<int64_t> rank_map,
                    std::vector<std::vector<std::string>> flattened,
                    const std::vector<LinkTuple>& links,
                    const std::vector<LinkTuple>& flattened_links,
                    OptionalDouble copy_gbps, OptionalDouble base_us,
                    OptionalDouble reduce_gbps) {
  MeshSpec spec{.shape = std::move(shape),
                .dim_names = std::move(dim_names),
                .rank_map = std::move(rank_map),
                .flattened = std::move(flattened),
                .copy_gbps = copy_gbps,
                .reduce_gbps = reduce_gbps,
                .base_us = base_us};
  for (const LinkTuple& l : links) spec.links.push_back(LinkFrom(l));
  for (const LinkTuple& l : flattened_links) {
    spec.flattened_links.push_back(LinkFrom(l));
  }
  return {std::make_shared<const Mesh>(
      ValueOrThrow(Mesh::Create(std::move(spec))))};
}

struct Options {
  std::string planner, cost_model, flatten_policy;
  bool merge = false;
  int64_t devices_per_host = 8;
  int64_t search_budget = 0;  // 0: the planner's default
  std::optional<int64_t> max_peak_bytes;
};

absl::StatusOr<PlanOptions> ParseOptions(const Options& in) {
  PlanOptions out;
  std::optional<PlannerKind> planner = ParsePlanner(in.planner);
  std::optional<CostModelKind> model = ParseCostModel(in.cost_model);
  std::optional<FlattenPolicy> policy = ParseFlattenPolicy(in.flatten_policy);
  if (!planner || !model || !policy) {
    const char* field = !planner ? "planner"
                        : !model ? "cost_model"
                                 : "flatten_policy";
    return absl::InvalidArgumentError(
        absl::StrCat("options.", field, ": unknown value"));
  }
  out.planner = *planner;
  out.cost_model = *model;
  out.flatten_policy = *policy;
  out.merge = in.merge;
  out.devices_per_host = in.devices_per_host;
  if (in.search_budget != 0) out.search_budget = in.search_budget;
  out.max_peak_bytes = in.max_peak_bytes;
  return out;
}

struct PlanHandle {
  std::shared_ptr<const Mesh> mesh;
  Plan plan;
};

using StepTuple =
    std::tuple<std::string, std::vector<int>, std::string,
               std::optional<std::string>, int64_t, std::optional<int>,
               std::optional<int>, std::string, std::string, int64_t, double>;

StepTuple StepAt(const PlanHandle& h, int64_t i) {
  if (i < 0 || i >= static_cast<int64_t>(h.plan.steps.size())) {
    throw nb::index_error("step index out of range");
  }
  const Step& s = h.plan.steps[i];
  std::optional<std::string> reduce_op;
  if (UsesReduceOp(s.op)) reduce_op = std::string(ReduceOpName(s.reduce_op));
  return {std::string(StepOpName(s.op)),
          std::vector<int>(s.group.begin(), s.group.end()),
          h.mesh->GroupName(s.group),
          reduce_op,
          s.avg_divisor,
          s.src_tensor_dim,
          s.dst_tensor_dim,
          s.from.ToString(),
          s.to.ToString(),
          s.bytes,
          s.time_us};
}

using WarningTuple =
    std::tuple<std::string, std::vector<std::string>, std::string, double>;

std::vector<WarningTuple> WarningsOf(const PlanHandle& h) {
  std::vector<WarningTuple> out;
  for (const Warning& w : h.plan.warnings) {
    out.emplace_back(std::string(WarningCodeName(w.code)), w.dims, w.message,
                     w.saving_us);
  }
  return out;
}

struct Item {
  std::vector<int64_t> shape;
  std::string dtype, src, dst;
};

absl::StatusOr<PlanRequest> RequestOf(const Mesh& mesh, const Item& item,
                                      const absl::StatusOr<PlanOptions>& o) {
  if (!o.ok()) return o.status();
  return ParsePlanRequest(mesh, item.shape, item.dtype, item.src, item.dst, *o);
}

PlanHandle PlanOne(const MeshHandle& mesh, const Item& item,
                   const Options& options) {
  absl::StatusOr<Plan> plan;
  {
    nb::gil_scoped_release release;
    absl::StatusOr<PlanRequest> request =
        RequestOf(*mesh.mesh, item, ParseOptions(options));
    plan = request.ok() ? MakePlanCached(*mesh.mesh, *request, Cache())
                        : absl::StatusOr<Plan>(request.status());
  }
  return {mesh.mesh, ValueOrThrow(std::move(plan))};
}

// Plans `item` and compiles the plan for the rank at mesh `position`, in
// one call and without a plan object: the rank program JSON and the plan's
// dst (what reshard.torch runs on a request it has not seen; a repeat is
// its own cache's).
std::tuple<std::string, std::string> PlanProgram(const MeshHandle& mesh,
                                                 const Item& item,
                                                 const Options& options,
                                                 int64_t position) {
  absl::StatusOr<std::tuple<std::string, std::string>> out;
  {
    nb::gil_scoped_release release;
    absl::StatusOr<PlanRequest> request =
        RequestOf(*mesh.mesh, item, ParseOptions(options));
    absl::StatusOr<Plan> plan =
        request.ok() ? MakePlanCached(*mesh.mesh, *request, Cache())
                     : absl::StatusOr<Plan>(request.status());
    absl::StatusOr<executor::RankProgram> program =
        plan.ok() ? executor::CompileRankProgram(*mesh.mesh, *plan, position)
                  : absl::StatusOr<executor::RankProgram>(plan.status());
    if (program.ok()) {
      out = std::make_tuple(executor::RankProgramJson(*program),
                            plan->dst.ToString());
    } else {
      out = program.status();
    }
  }
  return ValueOrThrow(std::move(out));
}

// A cross-mesh plan (docs/DESIGN.md §9); the caller releases the GIL.
absl::StatusOr<CrossMeshPlan> MakeCross(
    const MeshHandle& src, const MeshHandle& dst, std::vector<int64_t> shape,
    const std::string& dtype, const std::string& from, const std::string& to,
    std::vector<int64_t> unavailable, const LinkTuple& cross_link,
    const Options& options) {
  absl::StatusOr<PlanOptions> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<CrossMeshRequest> request = ParseCrossMeshRequest(
      *src.mesh, *dst.mesh, std::move(shape), dtype, from, to,
      std::move(unavailable), LinkFrom(cross_link), *parsed);
  if (!request.ok()) return request.status();
  return MakeCrossMeshPlan(*src.mesh, *dst.mesh, *request, &Cache());
}

// A cross-mesh plan as its JSON, which Python reads
// (python/reshard/_cross_plan.py).
std::string PlanCrossMeshJson(const MeshHandle& src, const MeshHandle& dst,
                              std::vector<int64_t> shape,
                              const std::string& dtype, const std::string& from,
                              const std::string& to,
                              std::vector<int64_t> unavailable,
                              const LinkTuple& cross_link,
                              const Options& options) {
  absl::StatusOr<CrossMeshPlan> plan;
  {
    nb::gil_scoped_release release;
    plan = MakeCross(src, dst, std::move(shape), dtype, from, to,
                     std::move(unavailable), cross_link, options);
  }
  return CrossPlanJson(*src.mesh, *dst.mesh, ValueOrThrow(std::move(plan)));
}

// The plan's JSON and global `rank`'s compiled program's (what
// reshard.torch's cross-mesh moves run), in one call.
std::tuple<std::string, std::string> PlanCrossProgram(
    const MeshHandle& src, const MeshHandle& dst, std::vector<int64_t> shape,
    const std::string& dtype, const std::string& from, const std::string& to,
    std::vector<int64_t> unavailable, const LinkTuple& cross_link,
    const Options& options, int64_t rank) {
  absl::StatusOr<std::tuple<std::string, std::string>> out;
  {
    nb::gil_scoped_release release;
    absl::StatusOr<CrossMeshPlan> plan =
        MakeCross(src, dst, std::move(shape), dtype, from, to,
                  std::move(unavailable), cross_link, options);
    absl::StatusOr<executor::CrossProgram> program =
        plan.ok()
            ? executor::CompileCrossProgram(*src.mesh, *dst.mesh, *plan, rank)
            : absl::StatusOr<executor::CrossProgram>(plan.status());
    if (program.ok()) {
      out = std::make_tuple(CrossPlanJson(*src.mesh, *dst.mesh, *plan),
                            executor::CrossProgramJson(*program));
    } else {
      out = program.status();
    }
  }
  return ValueOrThrow(std::move(out));
}

// A bucket as (op, mesh_dims, group, reduce_op, avg_divisor, bytes,
// in_bytes, out_bytes, time_us, [(tensor, step)]).
using BucketTuple =
    std::tuple<std::string, std::vector<int>, std::string,
               std::optional<std::string>, int64_t, int64_t, int64_t, int64_t,
               double, std::vector<std::tuple<int, int>>>;

BucketTuple BucketOf(const Mesh& mesh, const Bucket& b) {
  std::vector<std::tuple<int, int>> members;
  for (const BucketMember& m : b.members)
    members.emplace_back(m.tensor, m.step);
  std::optional<std::string> reduce_op;
  if (b.Reduces()) reduce_op = std::string(ReduceOpName(b.reduce_op));
  return {std::string(StepOpName(b.op)),
          std::vector<int>(b.group.begin(), b.group.end()),
          mesh.GroupName(b.group),
          reduce_op,
          b.avg_divisor,
          b.bytes,
          b.in_bytes,
          b.out_bytes,
          b.time_us,
          std::move(members)};
}

// Each item's plan or its (code, message); the buckets; and
// (collectives_before, collectives_after, time_us_before, time_us_after,
// peak_bytes).
using BatchTuple =
    std::tuple<nb::list, std::vector<BucketTuple>,
               std::tuple<int64_t, int64_t, double, double, int64_t>>;

BatchTuple PlanMany(const MeshHandle& mesh, const std::vector<Item>& items,
                    const Options& options, int64_t bucket_bytes,
                    bool all_or_nothing) {
  absl::StatusOr<BatchPlan> batch;
  {
    nb::gil_scoped_release release;
    const absl::StatusOr<PlanOptions> parsed = ParseOptions(options);
    std::vector<absl::StatusOr<PlanRequest>> requests;
    for (const Item& item : items) {
      requests.push_back(RequestOf(*mesh.mesh, item, parsed));
    }
    batch = PlanBatch(
        *mesh.mesh, requests,
        {.bucket_bytes = bucket_bytes, .all_or_nothing = all_or_nothing},
        Cache());
  }
  BatchPlan done = ValueOrThrow(std::move(batch));
  nb::list plans;
  for (absl::StatusOr<Plan>& plan : done.plans) {
    if (plan.ok()) {
      plans.append(PlanHandle{mesh.mesh, *std::move(plan)});
    } else {
      plans.append(nb::make_tuple(static_cast<int>(plan.status().code()),
                                  std::string(plan.status().message())));
    }
  }
  std::vector<BucketTuple> buckets;
  for (const Bucket& b : done.schedule.buckets) {
    buckets.push_back(BucketOf(*mesh.mesh, b));
  }
  const BucketSchedule& s = done.schedule;
  return {plans,
          std::move(buckets),
          {s.collectives_before, s.collectives_after, s.time_us_before,
           s.time_us_after, s.peak_bytes}};
}

void RaiseReshardError(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const StatusError& e) {
    nb::object error = nb::module_::import_("reshard._errors")
                           .attr("Error")(static_cast<int>(e.status.code()),
                                          std::string(e.status.message()));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())),
                    error.ptr());
  }
}

// The plan JSON `text` compiled for the rank at mesh `position`, as the
// rank program JSON (executor/run/rank_program_json.h).
std::string RankProgramOf(const std::string& text, int64_t position) {
  absl::StatusOr<std::string> json;
  {
    nb::gil_scoped_release release;
    absl::StatusOr<PlanFile> file = ReadPlanJson(text);
    if (!file.ok()) {
      json = file.status();
    } else {
      absl::StatusOr<executor::RankProgram> program =
          executor::CompileRankProgram(file->mesh, file->plan, position);
      if (program.ok()) {
        json = executor::RankProgramJson(*program);
      } else {
        json = program.status();
      }
    }
  }
  return ValueOrThrow(std::move(json));
}

// (size, capacity, hits, misses) of the process's plan cache.
std::tuple<size_t, size_t, int64_t, int64_t> CacheInfo() {
  PlanCache& c = Cache();
  return {c.size(), c.capacity(), c.hits(), c.misses()};
}

// A plan's scalars in one tuple, so that reading them costs one call from
// Python (python/reshard/_inprocess.py, plan_of, names the positions):
// shape, dtype, src, dst, planner, cost_model, trace, total_time_us,
// total_bytes, peak_bytes, planning_us, states_expanded, cache_hit, and the
// number of steps.
using PlanFields =
    std::tuple<std::vector<int64_t>, std::string, std::string, std::string,
               std::string, std::string, std::string, double, int64_t, int64_t,
               double, int64_t, bool, size_t>;

PlanFields FieldsOf(const PlanHandle& h) {
  const Plan& p = h.plan;
  return {p.tensor.shape(),
          std::string(DTypeName(p.tensor.dtype())),
          p.src.ToString(),
          p.dst.ToString(),
          std::string(PlannerName(p.planner)),
          std::string(CostModelName(p.cost_model)),
          PlanTrace(p),
          p.total_time_us,
          p.total_bytes,
          p.peak_bytes,
          p.planning_us,
          p.states_expanded,
          p.cache_hit,
          p.steps.size()};
}

// A plan JSON written again by the C++ writers, so that Python prints what
// reshardctl prints: the JSON line (`table` false) or the table.
std::string FormatPlanJson(const std::string& text, bool table) {
  PlanFile file = ValueOrThrow(ReadPlanJson(text));
  return table ? PlanTable(file.mesh, file.plan)
               : PlanJson(file.mesh, file.plan);
}

void DefinePlan(nb::module_& m) {
  nb::class_<PlanHandle>(m, "Plan")
      .def("fields", &FieldsOf)
      .def("step", &StepAt)
      .def("warnings", &WarningsOf);
}

}  // namespace
}  // namespace reshard::python

NB_MODULE(_native, m) {
  using namespace reshard::python;
  m.doc() = "The Reshard planner in-process (use reshard.plan, not this).";
  nb::register_exception_translator(&RaiseReshardError);
  nb::class_<MeshHandle>(m, "Mesh");
  m.def("make_mesh", &MakeMesh);
  nb::class_<Options>(m, "Options")
      .def(nb::init<>())
      .def_rw("planner", &Options::planner)
      .def_rw("cost_model", &Options::cost_model)
      .def_rw("flatten_policy", &Options::flatten_policy)
      .def_rw("merge", &Options::merge)
      .def_rw("devices_per_host", &Options::devices_per_host)
      .def_rw("search_budget", &Options::search_budget)
      .def_rw("max_peak_bytes", &Options::max_peak_bytes);
  nb::class_<Item>(m, "Item").def(
      "__init__", [](Item* self, std::vector<int64_t> shape, std::string dtype,
                     std::string src, std::string dst) {
        new (self) Item{std::move(shape), std::move(dtype), std::move(src),
                        std::move(dst)};
      });
  DefinePlan(m);
  m.def("plan", &PlanOne);
  m.def("plan_batch", &PlanMany);
  m.def("cache_info", &CacheInfo);
  m.def("format_plan_json", &FormatPlanJson);
  m.def("rank_program", &RankProgramOf);
  m.def("plan_program", &PlanProgram);
  m.def("plan_cross_mesh", &PlanCrossMeshJson);
  m.def("plan_cross_program", &PlanCrossProgram);
  m.def("torch_version", [] { return std::string(reshard::kTorchVersion); });
}
