#include "common/issued_job_token.h"

#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/same_secret.h"

namespace reshard {
namespace {

constexpr absl::string_view kPrefix = "rjt1.";
// What the key is derived for, so that the admin token's HMAC of anything
// else never equals a job token key.
constexpr absl::string_view kKeyPurpose = "reshard job token key v1";
constexpr absl::string_view kMacPurpose = "reshard job:";
constexpr size_t kKeyIdHexDigits = 8;
constexpr size_t kMacHexDigits = 2 * SHA256_DIGEST_LENGTH;

std::string HmacSha256(absl::string_view key, absl::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_bytes = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       out, &out_bytes);
  return std::string(reinterpret_cast<const char*>(out), out_bytes);
}

bool IsLowerHex(absl::string_view text, size_t digits) {
  if (text.size() != digits) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

bool IsIssuedForm(absl::string_view token) {
  return absl::StartsWith(token, kPrefix);
}

JobTokenKey JobTokenKey::FromAdminToken(absl::string_view admin_token) {
  std::string key = HmacSha256(admin_token, kKeyPurpose);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
         digest);
  std::string id = absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(digest), kKeyIdHexDigits / 2));
  return JobTokenKey(std::move(key), std::move(id));
}

std::string JobTokenKey::Issue(absl::string_view name) const {
  const std::string mac = HmacSha256(key_, absl::StrCat(kMacPurpose, name));
  return absl::StrCat(kPrefix, key_id_, ".", absl::BytesToHexString(mac), ".",
                      name);
}

absl::StatusOr<std::string> JobTokenKey::Verify(absl::string_view token) const {
  if (!IsIssuedForm(token)) {
    return absl::InvalidArgumentError(
        "the job token was not issued by a planner (issued tokens start "
        "with \"rjt1.\": reshardctl job token NAME)");
  }
  std::vector<absl::string_view> parts =
      absl::StrSplit(token.substr(kPrefix.size()), absl::MaxSplits('.', 2));
  if (parts.size() != 3 || !IsLowerHex(parts[0], kKeyIdHexDigits) ||
      !IsLowerHex(parts[1], kMacHexDigits) || parts[2].empty()) {
    return absl::PermissionDeniedError(
        "the job token is not of the issued form rjt1.KEYID.MAC.NAME");
  }
  if (parts[0] != key_id_) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the job token was issued under key ", parts[0],
        " and this planner issues under key ", key_id_,
        " (was the admin token rotated? issue a new one: reshardctl job "
        "token NAME)"));
  }
  const std::string expected = absl::BytesToHexString(
      HmacSha256(key_, absl::StrCat(kMacPurpose, parts[2])));
  if (!SameSecret(parts[1], expected)) {
    return absl::PermissionDeniedError(
        "the job token does not verify: it was not issued by this planner");
  }
  return std::string(parts[2]);
}

}  // namespace reshard
