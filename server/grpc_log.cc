#include "server/grpc_log.h"

#include <grpc/support/log.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "spdlog/spdlog.h"

namespace reshard::server {
namespace {

HandshakeFailureCounts& Counts() {
  static HandshakeFailureCounts counts{};
  return counts;
}

// OpenSSL's words for each failure, as the server sees it.
constexpr std::pair<absl::string_view, HandshakeFailure> kReasons[] = {
    {"wrong version number", HandshakeFailure::kNotTls},
    {"http request", HandshakeFailure::kNotTls},
    {"peer did not return a certificate",
     HandshakeFailure::kNoClientCertificate},
    {"certificate verify failed", HandshakeFailure::kClientCertificateRejected},
    {"certificate has expired", HandshakeFailure::kClientCertificateRejected},
    {"alert unknown ca", HandshakeFailure::kServerCertificateRejected},
    {"alert bad certificate", HandshakeFailure::kServerCertificateRejected},
};

void Log(gpr_log_func_args* args) {
  if (std::optional<HandshakeFailure> failure =
          HandshakeFailureOf(args->message)) {
    Counts()[static_cast<int>(*failure)].fetch_add(1);
  }
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::err
      : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::info
                                                : spdlog::level::debug;
  spdlog::log(level, "grpc {}:{}: {}", args->file, args->line, args->message);
}

}  // namespace

absl::string_view HandshakeFailureName(HandshakeFailure failure) {
  constexpr absl::string_view kNames[kHandshakeFailureCount] = {
      "not_tls", "no_client_certificate", "client_certificate_rejected",
      "server_certificate_rejected", "other"};
  return kNames[static_cast<int>(failure)];
}

std::optional<HandshakeFailure> HandshakeFailureOf(absl::string_view message) {
  if (!absl::StrContains(message, "Handshake failed")) return std::nullopt;
  const std::string lower = absl::AsciiStrToLower(message);
  for (const auto& [words, reason] : kReasons) {
    if (absl::StrContains(lower, words)) return reason;
  }
  return HandshakeFailure::kOther;
}

const HandshakeFailureCounts& HandshakeFailures() { return Counts(); }

void RouteGrpcLog() { gpr_set_log_function(Log); }

}  // namespace reshard::server
