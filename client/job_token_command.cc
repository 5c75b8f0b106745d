#include "client/job_token_command.h"

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/issued_job_token.h"
#include "common/job_name.h"

namespace reshard::client {

const char kJobTokenUsage[] =
    "usage: reshardctl --admin_token_file FILE job token NAME\n"
    "  Prints the job token of job NAME, issued under the planner's admin\n"
    "  token (--admin_token_file or $RESHARD_ADMIN_TOKEN): made here, no call\n"
    "  to the planner, which verifies it with the same admin token file.\n"
    "  Only that token creates or joins job NAME, so nobody else can take\n"
    "  the name. Give it to the job's agents and callers as a file\n"
    "  (--job_token_file) or $RESHARD_JOB_TOKEN; it never expires. Rotating\n"
    "  the admin token retires every token issued under it: issue new ones\n"
    "  and restart the job's agents with them.\n";

absl::Status RunJobTokenCommand(const ServerFlags& server,
                                const std::string& job,
                                absl::Span<const std::string> argv,
                                std::ostream& out) {
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, {}, {});
  if (!args.ok()) return args.status();
  if (server.admin_token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job token: needs the planner's admin token (--admin_token_file "
        "FILE or $",
        kAdminTokenEnv, ")"));
  }
  absl::Status name = CheckJobName(job, kMaxJobNameBytes, "job token: NAME");
  if (!name.ok()) return name;
  out << JobTokenKey::FromAdminToken(server.admin_token).Issue(job) << "\n";
  return absl::OkStatus();
}

}  // namespace reshard::client
