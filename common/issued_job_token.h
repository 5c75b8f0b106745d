// Job tokens the planner issues (docs/DESIGN.md §5, Credentials): a token
// names one job and carries an HMAC-SHA256 over that name, under a key
// derived from the planner's admin token. Whoever holds the admin token
// issues them (reshardctl job token NAME); nobody else can make one, so a
// job's name belongs to whoever was given its token.
//
// The text, all printable ASCII (gRPC metadata):
//   rjt1.KEYID.MAC.NAME
// KEYID is 8 hex digits naming the issuing key (so a planner whose admin
// token changed says why a token no longer works), MAC 64 hex digits, and
// NAME the job name itself (which may hold dots; it comes last).
#ifndef RESHARD_COMMON_ISSUED_JOB_TOKEN_H_
#define RESHARD_COMMON_ISSUED_JOB_TOKEN_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The key job tokens are issued under, derived from the admin token alone:
// every planner replica with the same admin token file verifies the same
// tokens, and rotating the admin token retires every token issued before.
class JobTokenKey {
 public:
  // `admin_token` must not be empty.
  static JobTokenKey FromAdminToken(absl::string_view admin_token);

  // The token for job `name`. The name is not checked here: a job with an
  // invalid name is refused wherever it is named.
  std::string Issue(absl::string_view name) const;

  // OK with the job name when `token` is one this key issued.
  // INVALID_ARGUMENT when it is not a token of the issued form at all
  // (IsIssuedForm), PERMISSION_DENIED when it is of that form but was
  // issued under another key or does not verify. Messages never hold the
  // token. The MAC is compared in constant time.
  absl::StatusOr<std::string> Verify(absl::string_view token) const;

  // The key's id, as tokens carry it.
  const std::string& key_id() const { return key_id_; }

 private:
  JobTokenKey(std::string key, std::string key_id)
      : key_(std::move(key)), key_id_(std::move(key_id)) {}

  std::string key_;     // 32 raw bytes
  std::string key_id_;  // 8 hex digits
};

// Whether `token` has the issued form's prefix ("rjt1."), whoever made it.
bool IsIssuedForm(absl::string_view token);

}  // namespace reshard

#endif  // RESHARD_COMMON_ISSUED_JOB_TOKEN_H_
