#!/usr/bin/env bash
# Transport security end to end, with certificates made here by openssl: a
# reshard-planner serving mutual TLS (--tls_cert, --tls_key, --tls_ca) answers a
# client with a certificate of its CA and refuses one in plaintext, one without
# a certificate, one of another CA, one whose certificate expired, and one that
# does not trust the server's CA. Two reshard-agent processes join over TLS
# (with a job token) and `reshardctl job run` over TLS validates. Half-given TLS
# flags, a key of another certificate, a CA file without certificates and an
# expired server certificate exit 2 naming the flag, before "serving TLS"; a
# certificate that expires within 14 days starts with a warning and its expiry
# in reshard_tls_certificate_expiry_seconds.
# usage: tls_test.sh BUILD_DIR
set -u
BUILD="$1"
. "$(dirname "$0")/../cli/lib.sh"
PLANNER="$BUILD/server/reshard-planner"
AGENT="$BUILD/agent/reshard-agent"
CTL="$BUILD/client/reshardctl"
dir=$(mktemp -d /tmp/reshard-tls-XXXXXX)
pids=()
trap stop_started EXIT

make_ca "$dir" ca && make_ca "$dir" other-ca && make_cert "$dir" server ca &&
  make_cert "$dir" client ca && make_cert "$dir" stranger other-ca &&
  make_cert "$dir" expired ca -1
check "openssl made the CAs and certificates" $?

od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/admin"
"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" --drain_seconds 0 \
  --tls_cert "$dir/server.pem" --tls_key "$dir/server.key" --tls_ca "$dir/ca.pem" \
  --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics-port" \
  --admin_token_file "$dir/admin" 2>"$dir/planner.log" &
pids+=($!)
wait_for 10 test -s "$dir/port" || die "the TLS planner did not start"
S="127.0.0.1:$(cat "$dir/port")"
grep -q "serving TLS; clients need a certificate of --tls_ca" "$dir/planner.log"
check "the planner says it serves mutual TLS" $?
# The certificates here live 2 days: under the 14 days' warning.
grep -Eq -- "--tls_cert=$dir/server.pem: the certificate expires at .*, in [0-9.]+ days: renew it" \
  "$dir/planner.log"
check "a certificate expiring within 14 days is warned about" $?
end=$(date -d "$(openssl x509 -in "$dir/server.pem" -noout -enddate | cut -d= -f2)" +%s)
metrics=$(curl -sf "http://127.0.0.1:$(cat "$dir/metrics-port")/metrics")
grep -Eq "^reshard_tls_certificate_expiry_seconds $end(\.0+)?$" <<<"$metrics"
check "reshard_tls_certificate_expiry_seconds is the certificate's end ($end)" $?
TLS=(--tls_ca "$dir/ca.pem" --tls_cert "$dir/client.pem" --tls_key "$dir/client.key")

out=$("$CTL" --server "$S" "${TLS[@]}" health 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = SERVING ]; check "a client certificate of the CA is served ($rc: $out)" $?
# refused NAME HINT ARGS...: health with ARGS fails UNAVAILABLE (exit 4),
# its message hinting at HINT.
refused() {
  local name=$1 hint=$2 out rc
  shift 2
  out=$(timeout 30 "$CTL" --server "$S" --deadline_seconds 5 "$@" health 2>&1); rc=$?
  [ $rc -eq 4 ] && contains "$out" "UNAVAILABLE" && contains "$out" "$hint"
  check "$name is refused, hinting at the fix ($rc: $out)" $?
}
refused "plaintext" "(the server may require TLS: pass --tls_ca"
refused "TLS without a client certificate" \
  "(the server may require a client certificate: pass --tls_cert and --tls_key;" \
  --tls_ca "$dir/ca.pem"
refused "a client certificate of another CA" \
  "(the server may not accept this client certificate" --tls_ca "$dir/ca.pem" \
  --tls_cert "$dir/stranger.pem" --tls_key "$dir/stranger.key"
refused "an expired client certificate" \
  "(the server may not accept this client certificate" --tls_ca "$dir/ca.pem" \
  --tls_cert "$dir/expired.pem" --tls_key "$dir/expired.key"
refused "a client that does not trust the server's CA" \
  "(the server may not serve TLS, or its certificate is not of --tls_ca)" \
  --tls_ca "$dir/other-ca.pem" --tls_cert "$dir/client.pem" --tls_key "$dir/client.key"
# The planner counts each failed handshake by its likely cause.
metrics=$(curl -sf "http://127.0.0.1:$(cat "$dir/metrics-port")/metrics")
failures() {
  awk -v s="reshard_tls_handshake_failures_total{reason=\"$1\"}" '$1 == s {print $2}' <<<"$metrics"
}
for reason in not_tls no_client_certificate client_certificate_rejected; do
  n=$(failures "$reason")
  awk -v n="${n:-0}" 'BEGIN { exit !(n >= 1) }'
  check "handshake failures counted as $reason (${n:-none})" $?
done
# A client that does not trust the planner closes without a word the
# planner logs (TLS 1.3): that series stays at 0 here.
[ "$(failures server_certificate_rejected)" = 0 ] && [ "$(failures other)" = 0 ]
check "no handshake is counted twice or as another cause" $?

# A plaintext agent says at once what the planner likely wants.
"$AGENT" --server "$S" --job plain --rank 0 --world_size 1 --timeout_seconds 10 \
  2>"$dir/plain-agent.log" &
plain=$!
pids+=($plain)
wait_for 10 grep -q "does not answer yet (.*(the server may require TLS: pass --tls_ca" \
  "$dir/plain-agent.log"
check "a plaintext agent is told the planner may require TLS" $?
kill "$plain"

# Agents over TLS, with the job token the admin issued; a job run over TLS
# validates.
"$CTL" --admin_token_file "$dir/admin" job token tls >"$dir/token"
check "reshardctl job token issues one" $?
for r in 0 1; do
  "$AGENT" --server "$S" --job tls --rank $r --world_size 2 --timeout_seconds 10 \
    --tls_ca "$dir/ca.pem" --tls_cert "$dir/client.pem" --tls_key "$dir/client.key" \
    --job_token_file "$dir/token" 2>"$dir/agent-$r.log" &
  pids+=($!)
done
ready() {
  "$CTL" --server "$S" "${TLS[@]}" --job_token_file "$dir/token" job show tls --json 2>/dev/null |
    jq -e '.state == "ready"' >/dev/null
}
wait_for 30 ready; check "two agents joined over TLS" $?
run=$(timeout 60 "$CTL" --server "$S" "${TLS[@]}" --job_token_file "$dir/token" \
  job run tls --mesh A=2 --shape 8 --from R --to 'S(0)' --json 2>"$dir/run.log"); rc=$?
[ $rc -eq 0 ] && jq -e '.validated' <<<"$run" >/dev/null
check "job run over TLS validates ($rc: $(cat "$dir/run.log"))" $?

# TLS material checked before "serving": exit 2 naming the flag, and no
# "serving TLS" line. refused_start NAME SAYS FLAGS...
refused_start() {
  local name=$1 says=$2 err rc
  shift 2
  err=$(timeout 20 "$PLANNER" --listen 127.0.0.1:0 --drain_seconds 0 "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] && contains "$err" "$says" && ! contains "$err" "serving TLS"
  check "reshard-planner with $name exits 2 naming the flag ($rc: $err)" $?
}
make_cert "$dir" other ca
printf -- '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n' >"$dir/garbage.pem"
refused_start "another certificate's key" \
  "--tls_key=$dir/other.key: is not the private key of --tls_cert's certificate" \
  --tls_cert "$dir/server.pem" --tls_key "$dir/other.key"
refused_start "a garbage --tls_ca" "--tls_ca=$dir/garbage.pem: holds no certificate" \
  --tls_cert "$dir/server.pem" --tls_key "$dir/server.key" --tls_ca "$dir/garbage.pem"
refused_start "an unreadable --tls_ca" "--tls_ca=$dir/none.pem: cannot read it" \
  --tls_cert "$dir/server.pem" --tls_key "$dir/server.key" --tls_ca "$dir/none.pem"
refused_start "a --tls_cert that holds no certificate" "--tls_cert=$dir/garbage.pem: holds no certificate" \
  --tls_cert "$dir/garbage.pem" --tls_key "$dir/server.key"
refused_start "an expired certificate" "--tls_cert=$dir/expired.pem: the certificate expired at " \
  --tls_cert "$dir/expired.pem" --tls_key "$dir/expired.key"
err=$("$CTL" --server "$S" --tls_ca "$dir/ca.pem" --tls_cert "$dir/client.pem" \
  --tls_key "$dir/other.key" health 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--tls_key=$dir/other.key: is not the private key"
check "reshardctl with another certificate's key exits 2 naming it ($rc: $err)" $?

# Half-given flags stop every binary at start-up, naming them.
err=$("$PLANNER" --listen 127.0.0.1:0 --tls_cert "$dir/server.pem" 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--tls_cert and --tls_key: a server with TLS needs both"
check "reshard-planner with --tls_cert alone exits 2 ($rc)" $?
err=$("$AGENT" --server "$S" --job x --rank 0 --world_size 1 --tls_ca "$dir/none.pem" 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--tls_ca=$dir/none.pem: cannot read it"
check "reshard-agent with a missing --tls_ca exits 2 naming it ($rc)" $?
err=$("$CTL" --server "$S" --tls_cert "$dir/client.pem" health 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--tls_cert and --tls_key: a client certificate needs both"
check "reshardctl with --tls_cert alone exits 2 ($rc)" $?
err=$("$CTL" --server "$S" --tls_ca "$dir/token" health 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "holds no PEM block"
check "reshardctl with a --tls_ca that is no PEM file exits 2 ($rc)" $?
exit $fail
