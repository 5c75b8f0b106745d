// Which job tokens a planner accepts and which share each one counts in
// (docs/DESIGN.md §5, Credentials and Quotas). A token is issued
// (common/issued_job_token.h): it is bound to one job name and is its own
// share. With --legacy_job_tokens a self-chosen token is accepted too, but
// every such token counts in one share, "legacy", so that minting tokens
// buys no quota; callers without a token are the anonymous share.
// Shared by the Coordinator (jobs, runs, store bytes) and the planner
// service (meshes). Thread-safe.
#ifndef RESHARD_COORDINATOR_TOKEN_RULES_H_
#define RESHARD_COORDINATOR_TOKEN_RULES_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/issued_job_token.h"

namespace reshard::coordinator {

// What a token presented with a call is.
struct TokenShare {
  // The quota key: "" for no token (anonymous), "legacy" for every
  // self-chosen token, "job:NAME" for a token issued for job NAME. Never
  // the token itself.
  std::string share;
  // The job an issued token is bound to; empty otherwise.
  std::string issued_for;
};

class TokenRules {
 public:
  // `key`: the planner's issuing key (none without an admin token: then no
  // token verifies). `legacy`: --legacy_job_tokens.
  TokenRules(std::optional<JobTokenKey> key, bool legacy)
      : key_(std::move(key)), legacy_(legacy) {}

  // The share of `token` ("" is the anonymous share). PERMISSION_DENIED
  // for a token that is neither issued by this planner nor accepted as
  // legacy, saying how to get one; `field` starts the message. Counts
  // every legacy token it accepts.
  absl::StatusOr<TokenShare> ShareOf(const std::string& token,
                                     const char* field) const;

  // The share of a token presented to join (and maybe create) job `job`:
  // ShareOf, and an issued token must be bound to `job` (PERMISSION_DENIED
  // naming both jobs otherwise), so no one takes a name whose token they
  // were not given.
  absl::StatusOr<TokenShare> ShareForJoin(const std::string& job,
                                          const std::string& token) const;

  bool legacy() const { return legacy_; }
  // Calls that presented a self-chosen token and were let in.
  int64_t legacy_tokens_accepted() const { return legacy_accepted_.load(); }

 private:
  const std::optional<JobTokenKey> key_;
  const bool legacy_;
  mutable std::atomic<int64_t> legacy_accepted_{0};
};

// `*rules`, or when null the strict rules (one instance for the process):
// no token verifies and none is accepted as legacy.
const TokenRules& RulesOrStrict(const TokenRules* rules);

// The share name of legacy tokens, and of issued ones for `job`.
inline constexpr char kLegacyShare[] = "legacy";
std::string IssuedShare(const std::string& job);
// `share` as refusals name it: "the share of this job token", "... of
// self-chosen job tokens (--legacy_job_tokens)", "... of callers without
// a job token".
std::string DescribeShare(const std::string& share);

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_TOKEN_RULES_H_
