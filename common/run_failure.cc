#include "common/run_failure.h"

#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "common/json_value.h"

namespace reshard {
namespace {

// The payload is JSON: it stays inside a process (the wire carries the
// proto), and a reader of it needs nothing but common/json_value.h.
constexpr char kPayload[] = "type.reshard.dev/reshard.RankFailures";

// A member's string, or "".
std::string StringOf(const JsonValue& object, const char* key) {
  const JsonValue* value = object.Find(key);
  return value != nullptr && value->kind() == JsonValue::Kind::kString
             ? value->string()
             : "";
}

}  // namespace

std::string RankFailureJson(const RankFailure& f) {
  return absl::StrCat("{\"rank\": ", f.rank, ", \"host\": ", JsonString(f.host),
                      ", \"kind\": ", JsonString(f.kind),
                      ", \"message\": ", JsonString(f.message), "}");
}

absl::Status WithRankFailures(absl::Status status,
                              const std::vector<RankFailure>& ranks) {
  if (status.ok() || ranks.empty()) return status;
  std::vector<std::string> items;
  for (const RankFailure& f : ranks) items.push_back(RankFailureJson(f));
  status.SetPayload(
      kPayload, absl::Cord(absl::StrCat("[", absl::StrJoin(items, ", "), "]")));
  return status;
}

std::vector<RankFailure> RankFailuresOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayload);
  if (!payload.has_value()) return {};
  absl::StatusOr<JsonValue> parsed = JsonValue::Parse(std::string(*payload));
  if (!parsed.ok() || parsed->kind() != JsonValue::Kind::kArray) return {};
  std::vector<RankFailure> ranks;
  for (const JsonValue& item : parsed->array()) {
    RankFailure f;
    const JsonValue* rank = item.Find("rank");
    if (rank == nullptr || !rank->AsInt64(&f.rank)) continue;
    f.host = StringOf(item, "host");
    f.kind = StringOf(item, "kind");
    f.message = StringOf(item, "message");
    ranks.push_back(std::move(f));
  }
  return ranks;
}

}  // namespace reshard
