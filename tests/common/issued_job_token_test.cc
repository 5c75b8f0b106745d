// Issued job tokens (common/issued_job_token.h): the documented form, a
// known answer computed apart from this code (Python's hmac module over the
// derivation docs/DESIGN.md §5 states), and every way a token fails to
// verify, each refused with a message that never holds the token.
#include "common/issued_job_token.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// key = HMAC-SHA256(admin, "reshard job token key v1"); key id = the first
// 4 bytes of SHA-256(key); MAC = HMAC-SHA256(key, "reshard job:" + name).
constexpr char kKnownToken[] =
    "rjt1.2e2b6bca."
    "7dd257f1b4b6413ee6bb2edbea458bcd486e5fe8465a7e7773323326f286c837."
    "train-1.v2";

TEST(IssuedJobTokenTest, MatchesTheDocumentedDerivation) {
  const JobTokenKey key = JobTokenKey::FromAdminToken("admin-secret");
  EXPECT_EQ(key.key_id(), "2e2b6bca");
  EXPECT_EQ(key.Issue("train-1.v2"), kKnownToken);
  EXPECT_THAT(key.Issue("j"),
              MatchesRegex("rjt1\\.[0-9a-f]{8}\\.[0-9a-f]{64}\\.j"));
}

TEST(IssuedJobTokenTest, VerifiesToItsJobNameDotsIncluded) {
  const JobTokenKey key = JobTokenKey::FromAdminToken("admin-secret");
  absl::StatusOr<std::string> job = key.Verify(kKnownToken);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(*job, "train-1.v2");
  EXPECT_TRUE(IsIssuedForm(kKnownToken));
  EXPECT_FALSE(IsIssuedForm("my-own-token"));
}

void ExpectRefused(const absl::StatusOr<std::string>& job,
                   absl::StatusCode code, const std::string& says,
                   const std::string& token) {
  EXPECT_EQ(job.status().code(), code) << job.status();
  EXPECT_THAT(job.status().message(), HasSubstr(says));
  EXPECT_THAT(job.status().message(), Not(HasSubstr(token)));
}

TEST(IssuedJobTokenTest, RefusesWhatItDidNotIssue) {
  const JobTokenKey key = JobTokenKey::FromAdminToken("admin-secret");
  const std::string good = kKnownToken;
  ExpectRefused(key.Verify("my-own-token"), absl::StatusCode::kInvalidArgument,
                "the job token was not issued by a planner", "my-own-token");
  // Another job's name under the same MAC: the MAC covers the name.
  std::string renamed = good.substr(0, good.size() - 2) + "v3";
  ExpectRefused(key.Verify(renamed), absl::StatusCode::kPermissionDenied,
                "the job token does not verify", renamed);
  std::string flipped = good;
  flipped[20] = flipped[20] == '0' ? '1' : '0';
  ExpectRefused(key.Verify(flipped), absl::StatusCode::kPermissionDenied,
                "the job token does not verify", flipped);
  for (const std::string& bad :
       {good.substr(0, 30), std::string("rjt1.2e2b6bca.zz.x"),
        good.substr(0, 79)}) {
    ExpectRefused(key.Verify(bad), absl::StatusCode::kPermissionDenied,
                  "not of the issued form rjt1.KEYID.MAC.NAME", bad);
  }
}

// Rotating the admin token retires the tokens issued before, and says so.
TEST(IssuedJobTokenTest, ARotatedAdminTokenNamesBothKeys) {
  const JobTokenKey rotated = JobTokenKey::FromAdminToken("admin-secret-2");
  EXPECT_NE(rotated.key_id(), "2e2b6bca");
  ExpectRefused(rotated.Verify(kKnownToken),
                absl::StatusCode::kPermissionDenied,
                "the job token was issued under key 2e2b6bca and this "
                "planner issues under key " +
                    rotated.key_id(),
                kKnownToken);
}

}  // namespace
}  // namespace reshard
