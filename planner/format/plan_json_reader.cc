#include "planner/format/plan_json_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_fields.h"
#include "common/json_value.h"
#include "planner/core/state_text.h"
#include "planner/cost/cost_model.h"

namespace reshard {
namespace {

absl::StatusOr<Mesh> ReadMesh(const JsonValue& root) {
  absl::StatusOr<const JsonValue*> mesh = RequiredMember(root, "mesh", "plan");
  if (!mesh.ok()) return mesh.status();
  MeshSpec spec;
  absl::StatusOr<const JsonValue*> shape =
      RequiredMember(**mesh, "shape", "plan.mesh");
  if (!shape.ok()) return shape.status();
  absl::StatusOr<std::vector<int64_t>> sizes =
      JsonInts(**shape, "plan.mesh.shape");
  if (!sizes.ok()) return sizes.status();
  spec.shape = *sizes;
  if (const JsonValue* names = (*mesh)->Find("dim_names");
      names != nullptr && !names->is_null()) {
    absl::StatusOr<std::vector<std::string>> n =
        JsonStrings(*names, "plan.mesh.dim_names");
    if (!n.ok()) return n.status();
    spec.dim_names = *n;
  }
  if (const JsonValue* map = (*mesh)->Find("rank_map");
      map != nullptr && !map->is_null()) {
    absl::StatusOr<std::vector<int64_t>> m =
        JsonInts(*map, "plan.mesh.rank_map");
    if (!m.ok()) return m.status();
    spec.rank_map = *m;
  }
  if (const JsonValue* groups = (*mesh)->Find("flattened");
      groups != nullptr && !groups->is_null()) {
    if (groups->kind() != JsonValue::Kind::kArray) {
      return JsonFieldError("plan.mesh.flattened", "not an array");
    }
    for (size_t i = 0; i < groups->array().size(); ++i) {
      absl::StatusOr<std::vector<std::string>> g = JsonStrings(
          groups->array()[i], absl::StrCat("plan.mesh.flattened[", i, "]"));
      if (!g.ok()) return g.status();
      spec.flattened.push_back(*g);
    }
  }
  return Mesh::Create(spec);
}

absl::StatusOr<std::string> Text(const JsonValue& object, const char* key,
                                 const std::string& field) {
  absl::StatusOr<const JsonValue*> v =
      RequiredMemberOf(object, key, field, JsonValue::Kind::kString);
  if (!v.ok()) return v.status();
  return (*v)->string();
}

absl::StatusOr<TensorSpec> ReadTensor(const JsonValue& root) {
  absl::StatusOr<const JsonValue*> tensor =
      RequiredMember(root, "tensor", "plan");
  if (!tensor.ok()) return tensor.status();
  absl::StatusOr<const JsonValue*> shape =
      RequiredMember(**tensor, "shape", "plan.tensor");
  if (!shape.ok()) return shape.status();
  absl::StatusOr<std::vector<int64_t>> sizes =
      JsonInts(**shape, "plan.tensor.shape");
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::string> dtype = Text(**tensor, "dtype", "plan.tensor");
  if (!dtype.ok()) return dtype.status();
  std::optional<DType> parsed = ParseDType(*dtype);
  if (!parsed.has_value()) {
    return JsonFieldError("plan.tensor.dtype",
                          absl::StrCat("unknown dtype \"", *dtype, "\""));
  }
  return TensorSpec::Create(*sizes, *parsed);
}

// Checks an optional string field against the value the states imply.
absl::Status Agrees(const JsonValue& step, const char* key,
                    absl::string_view implied, const std::string& field) {
  const JsonValue* v = step.Find(key);
  if (v == nullptr || v->is_null()) return absl::OkStatus();
  if (v->kind() != JsonValue::Kind::kString || v->string() != implied) {
    return JsonFieldError(
        absl::StrCat(field, ".", key),
        absl::StrCat("\"",
                     v->kind() == JsonValue::Kind::kString ? v->string() : "?",
                     "\" but its states imply \"", implied, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<Step> ReadStep(const Mesh& mesh, const TensorSpec& tensor,
                              const JsonValue& v, const std::string& field) {
  absl::StatusOr<std::string> from = Text(v, "from", field);
  if (!from.ok()) return from.status();
  absl::StatusOr<std::string> to = Text(v, "to", field);
  if (!to.ok()) return to.status();
  absl::StatusOr<const JsonValue*> dims = RequiredMember(v, "mesh_dims", field);
  if (!dims.ok()) return dims.status();
  absl::StatusOr<std::vector<int64_t>> group =
      JsonInts(**dims, absl::StrCat(field, ".mesh_dims"));
  if (!group.ok()) return group.status();
  absl::StatusOr<DistState> a = ParseDistState(
      *from, mesh.ndim(), tensor.rank(), absl::StrCat(field, ".from"));
  if (!a.ok()) return a.status();
  absl::StatusOr<DistState> b = ParseDistState(*to, mesh.ndim(), tensor.rank(),
                                               absl::StrCat(field, ".to"));
  if (!b.ok()) return b.status();
  Group g(group->begin(), group->end());
  absl::Status s = mesh.ValidateGroup(g, absl::StrCat(field, ".mesh_dims"));
  if (!s.ok()) return s;
  absl::StatusOr<Step> step = MakeStep(mesh, *a, *b, g);
  if (!step.ok()) return JsonFieldError(field, step.status().message());
  s = Agrees(v, "op", StepOpName(step->op), field);
  const bool reduces =
      step->op == StepOp::kAllReduce || step->op == StepOp::kReduceScatter;
  if (s.ok() && reduces) {
    s = Agrees(v, "reduce_op", ReduceOpName(step->reduce_op), field);
  }
  if (!s.ok()) return s;
  const JsonValue* divisor = v.Find("avg_divisor");
  int64_t d = 0;
  if (reduces && divisor != nullptr && !divisor->is_null() &&
      (!divisor->AsInt64(&d) || d != step->avg_divisor)) {
    return JsonFieldError(absl::StrCat(field, ".avg_divisor"),
                          absl::StrCat("its states imply ", step->avg_divisor));
  }
  if (const JsonValue* bytes = v.Find("bytes"); bytes != nullptr) {
    bytes->AsInt64(&step->bytes);
  }
  if (const JsonValue* t = v.Find("time_us");
      t != nullptr && t->kind() == JsonValue::Kind::kNumber) {
    step->time_us = t->number();
  }
  return step;
}

absl::StatusOr<std::vector<Step>> ReadSteps(const Mesh& mesh,
                                            const TensorSpec& tensor,
                                            const JsonValue& root) {
  std::vector<Step> steps;
  const JsonValue* list = root.Find("steps");
  if (list == nullptr || list->is_null()) return steps;
  if (list->kind() != JsonValue::Kind::kArray) {
    return JsonFieldError("plan.steps", "not an array");
  }
  for (size_t i = 0; i < list->array().size(); ++i) {
    absl::StatusOr<Step> step = ReadStep(mesh, tensor, list->array()[i],
                                         absl::StrCat("plan.steps[", i, "]"));
    if (!step.ok()) return step.status();
    steps.push_back(*std::move(step));
  }
  return steps;
}

// A number member, when present as one.
const JsonValue* NumberAt(const JsonValue& root, const char* key) {
  const JsonValue* v = root.Find(key);
  return v != nullptr && v->kind() == JsonValue::Kind::kNumber ? v : nullptr;
}

// The plan's warnings, those of codes this build knows.
void ReadWarnings(const JsonValue& root, Plan& plan) {
  const JsonValue* warnings = root.Find("warnings");
  if (warnings == nullptr || warnings->kind() != JsonValue::Kind::kArray) {
    return;
  }
  for (const JsonValue& w : warnings->array()) {
    const JsonValue* code = w.Find("code");
    if (code == nullptr || code->kind() != JsonValue::Kind::kString) continue;
    const std::optional<WarningCode> parsed = ParseWarningCode(code->string());
    if (!parsed.has_value()) continue;
    Warning warning;
    warning.code = *parsed;
    if (const JsonValue* dims = w.Find("dims")) {
      absl::StatusOr<std::vector<std::string>> names =
          JsonStrings(*dims, "plan.warnings.dims");
      if (names.ok()) warning.dims = *std::move(names);
    }
    if (const JsonValue* m = w.Find("message");
        m != nullptr && m->kind() == JsonValue::Kind::kString) {
      warning.message = m->string();
    }
    if (const JsonValue* s = NumberAt(w, "saving_us")) {
      warning.saving_us = s->number();
    }
    plan.warnings.push_back(std::move(warning));
  }
}

// What the plan's maker recorded (docs/PLAN_JSON.md): totals, planning
// figures and warnings, kept as given so that a plan read and printed
// again says what the file said. Absent or ill-typed members keep the
// defaults.
void ReadRecorded(const JsonValue& root, Plan& plan) {
  if (const JsonValue* v = NumberAt(root, "total_time_us")) {
    plan.total_time_us = v->number();
  }
  if (const JsonValue* v = NumberAt(root, "planning_us")) {
    plan.planning_us = v->number();
  }
  for (auto [key, target] :
       {std::pair{"total_bytes", &plan.total_bytes},
        std::pair{"peak_bytes", &plan.peak_bytes},
        std::pair{"states_expanded", &plan.states_expanded}}) {
    if (const JsonValue* v = NumberAt(root, key)) v->AsInt64(target);
  }
  if (const JsonValue* v = root.Find("cache_hit");
      v != nullptr && v->kind() == JsonValue::Kind::kBool) {
    plan.cache_hit = v->boolean();
  }
  ReadWarnings(root, plan);
}

}  // namespace

absl::StatusOr<PlanFile> ReadPlanJson(absl::string_view text) {
  absl::StatusOr<JsonValue> root = JsonValue::Parse(text);
  if (!root.ok()) return root.status();
  if (root->kind() != JsonValue::Kind::kObject) {
    return JsonFieldError("plan", "not a JSON object");
  }
  absl::StatusOr<Mesh> mesh = ReadMesh(*root);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<TensorSpec> tensor = ReadTensor(*root);
  if (!tensor.ok()) return tensor.status();
  Plan plan;
  plan.tensor = *tensor;
  for (auto [key, target] :
       {std::pair{"src", &plan.src}, std::pair{"dst", &plan.dst}}) {
    absl::StatusOr<std::string> s = Text(*root, key, "plan");
    if (!s.ok()) return s.status();
    absl::StatusOr<DistState> state = ParseDistState(
        *s, mesh->ndim(), tensor->rank(), absl::StrCat("plan.", key));
    if (!state.ok()) return state.status();
    *target = *state;
  }
  absl::StatusOr<std::vector<Step>> steps = ReadSteps(*mesh, *tensor, *root);
  if (!steps.ok()) return steps.status();
  plan.steps = *std::move(steps);
  // Names this build does not know (another tool's planner) keep the
  // defaults: they do not change what the plan makes ranks do.
  if (const JsonValue* v = root->Find("planner");
      v != nullptr && v->kind() == JsonValue::Kind::kString) {
    plan.planner = ParsePlanner(v->string()).value_or(plan.planner);
  }
  if (const JsonValue* v = root->Find("cost_model");
      v != nullptr && v->kind() == JsonValue::Kind::kString) {
    plan.cost_model = ParseCostModel(v->string()).value_or(plan.cost_model);
  }
  ReadRecorded(*root, plan);
  return PlanFile{*std::move(mesh), std::move(plan)};
}

}  // namespace reshard
