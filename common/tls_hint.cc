#include "common/tls_hint.h"

#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/reworded_status.h"

namespace reshard {
namespace {

bool MentionsAny(absl::string_view text,
                 std::initializer_list<absl::string_view> words) {
  for (absl::string_view word : words) {
    if (absl::StrContains(absl::AsciiStrToLower(text),
                          absl::AsciiStrToLower(word)))
      return true;
  }
  return false;
}

}  // namespace

std::string TlsHint(const absl::Status& status, const TlsConfig& tls) {
  if (status.code() != absl::StatusCode::kUnavailable) return "";
  const absl::string_view message = status.message();
  // The server closed the connection at once: during its handshake (one
  // side speaks TLS and the other not, or a client certificate is missing
  // or not of the server's CA), or past its connection caps.
  const bool closed =
      MentionsAny(message, {"Socket closed", "Connection reset", "Broken pipe",
                            "connection closed", "End of TCP stream"});
  const bool handshake =
      MentionsAny(message, {"handshake", "SSL", "certificate", "TLS"});
  constexpr absl::string_view kOrCapped =
      "; or it holds its most connections from this address "
      "(--max_connections_per_peer)";
  if (!tls.enabled) {
    if (!closed && !handshake) return "";
    return absl::StrCat(
        "the server may require TLS: pass --tls_ca (and --tls_cert/--tls_key "
        "if it asks for a client certificate)",
        closed ? kOrCapped : "");
  }
  if (tls.cert_pem.empty() && closed) {
    return absl::StrCat(
        "the server may require a client certificate: pass --tls_cert and "
        "--tls_key",
        kOrCapped);
  }
  if (closed) {
    return absl::StrCat(
        "the server may not accept this client certificate: it must be of "
        "the server's --tls_ca and unexpired",
        kOrCapped);
  }
  if (handshake) {
    return "the server may not serve TLS, or its certificate is not of "
           "--tls_ca";
  }
  return "";
}

absl::Status WithTlsHint(const absl::Status& status, const TlsConfig& tls) {
  const std::string hint = TlsHint(status, tls);
  if (hint.empty()) return status;
  return Reworded(status, absl::StrCat(status.message(), " (", hint, ")"));
}

}  // namespace reshard
