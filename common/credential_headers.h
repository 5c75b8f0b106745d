// The gRPC metadata keys credentials travel in, shared by the servers that
// check them and the clients that send them. Metadata, not message fields:
// no request type changes, and the service adapter checks them in one
// place.
#ifndef RESHARD_COMMON_CREDENTIAL_HEADERS_H_
#define RESHARD_COMMON_CREDENTIAL_HEADERS_H_

namespace reshard {

// The planner's admin token (reshard-planner --admin_token_file).
inline constexpr char kAdminTokenHeader[] = "x-reshard-admin-token";
// A job's token: set by the agents that create the job, presented on every
// call that names the job (agents and reshardctl: --job_token_file or
// $RESHARD_JOB_TOKEN).
inline constexpr char kJobTokenHeader[] = "x-reshard-job-token";
// Where agents and reshardctl find a token when no file is given.
inline constexpr char kJobTokenEnv[] = "RESHARD_JOB_TOKEN";
inline constexpr char kAdminTokenEnv[] = "RESHARD_ADMIN_TOKEN";

}  // namespace reshard

#endif  // RESHARD_COMMON_CREDENTIAL_HEADERS_H_
