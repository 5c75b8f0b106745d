// `reshardctl job token NAME`: the job token the planner's admin issues for
// job NAME (common/issued_job_token.h), made here from the admin token
// alone; no call to the planner.
#ifndef RESHARD_CLIENT_JOB_TOKEN_COMMAND_H_
#define RESHARD_CLIENT_JOB_TOKEN_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "client/cli_args.h"

namespace reshard::client {

extern const char kJobTokenUsage[];

// Prints the token of `job` and a newline to `out`. INVALID_ARGUMENT
// naming the flag when `server` carries no admin token (--admin_token_file,
// $RESHARD_ADMIN_TOKEN), naming the name when it is not a job name, or for
// an unknown flag in `argv`.
absl::Status RunJobTokenCommand(const ServerFlags& server,
                                const std::string& job,
                                absl::Span<const std::string> argv,
                                std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_TOKEN_COMMAND_H_
