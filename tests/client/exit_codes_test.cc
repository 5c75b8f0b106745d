// reshardctl's exit statuses (client/exit_codes.h), which scripts rely on,
// and the JSON error object printed with --json.
#include "client/exit_codes.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tests/json_lite.h"

namespace reshard::client {
namespace {

using testing::Json;

TEST(ExitCodesTest, EachFailureKindHasItsStatus) {
  EXPECT_EQ(ExitCode(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCode(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCode(absl::OutOfRangeError("x")), 2);
  EXPECT_EQ(ExitCode(absl::NotFoundError("x")), 3);
  EXPECT_EQ(ExitCode(absl::UnavailableError("x")), 4);
  EXPECT_EQ(ExitCode(absl::DeadlineExceededError("x")), 4);
  EXPECT_EQ(ExitCode(absl::FailedPreconditionError("x")), 5);
  EXPECT_EQ(ExitCode(absl::UnauthenticatedError("x")), 6);
  EXPECT_EQ(ExitCode(absl::PermissionDeniedError("x")), 6);
  for (const absl::Status& other :
       {absl::InternalError("x"), absl::DataLossError("x"),
        absl::CancelledError("x"), absl::ResourceExhaustedError("x"),
        absl::AlreadyExistsError("x"), absl::UnknownError("x")}) {
    EXPECT_EQ(ExitCode(other), 1) << other;
  }
}

// Whether gRPC's timer or the server's stop check answers first, a call
// cut short by --deadline_seconds names that flag; a collective's timeout
// inside the deadline keeps its own message.
TEST(ExitCodesTest, TheCallsDeadlineIsNamedWhoeverAnsweredFirst) {
  const absl::Duration d = absl::Milliseconds(200);
  const absl::Status by_grpc = absl::DeadlineExceededError("Deadline Exceeded");
  EXPECT_EQ(ExplainDeadline(by_grpc, d, absl::Milliseconds(201)),
            absl::DeadlineExceededError(
                "the call did not finish within --deadline_seconds 0.2"));
  const absl::Status by_server =
      absl::DeadlineExceededError("planning stopped at the call's deadline");
  EXPECT_EQ(ExplainDeadline(by_server, d, absl::Milliseconds(200)),
            absl::DeadlineExceededError(
                "the call did not finish within --deadline_seconds 0.2 "
                "(planning stopped at the call's deadline)"));
  const absl::Status collective = absl::DeadlineExceededError(
      "steps[0] (all_gather on A): Timed out waiting for peer");
  EXPECT_EQ(ExplainDeadline(collective, d, absl::Milliseconds(150)),
            collective);
  EXPECT_EQ(ExplainDeadline(collective, std::nullopt, absl::Seconds(30)),
            collective);
  EXPECT_EQ(ExplainDeadline(by_grpc, std::nullopt, absl::Seconds(10)).message(),
            "the call did not finish within the default deadline (10 s per "
            "attempt); --deadline_seconds D allows more");
  const absl::Status not_found = absl::NotFoundError("Deadline Exceeded");
  EXPECT_EQ(ExplainDeadline(not_found, d, absl::Seconds(1)), not_found);
}

TEST(ExitCodesTest, ErrorJsonCarriesCodeAndMessage) {
  const absl::Status status =
      absl::NotFoundError("mesh_id: unknown mesh \"m-1\"");
  const Json j = Json::Parse(ErrorJson(status));
  ASSERT_EQ(j.object.size(), 1u);
  EXPECT_EQ(j["error"]["code"].string, "NOT_FOUND");
  EXPECT_EQ(j["error"]["message"].string, "mesh_id: unknown mesh \"m-1\"");
}

TEST(ExitCodesTest, ReportFailurePrintsJsonOnlyWhenAsked) {
  const absl::Status status = absl::FailedPreconditionError("too big");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(ReportFailure(status, false, out, err), 5);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "reshardctl: FAILED_PRECONDITION: too big\n");
  err.str("");
  EXPECT_EQ(ReportFailure(status, true, out, err), 5);
  EXPECT_EQ(out.str(),
            "{\"error\": {\"code\":\"FAILED_PRECONDITION\","
            "\"message\":\"too big\"}}\n");
  EXPECT_EQ(err.str(), "reshardctl: FAILED_PRECONDITION: too big\n");
}

}  // namespace
}  // namespace reshard::client
