#!/usr/bin/env bash
# scripts/local-cluster.sh as docs/GUIDE.md's Security and docs/REFERENCE.md's Metrics sections
# use it: `start 4 --job_token_file F --tls --metrics` serves mutual TLS
# (a plaintext reshardctl is refused, hinted at TLS), writes the issued
# token to F, and serves metrics on the ports it records; `restart 2`
# replaces rank 2's agent (a new PID, the job ready again) and a run over
# TLS with F's token validates after it. `stop` leaves no PID alive.
# usage: local_cluster_test.sh RESHARDCTL BUILD_DIR LOCAL_CLUSTER_SH
set -u
CTL="$1"
export RESHARD_BUILD="$2"
CLUSTER="$3"
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
export RESHARD_CLUSTER_DIR="$tmp/cluster"
cleanup() {
  [ -f "$RESHARD_CLUSTER_DIR/pids" ] && "$CLUSTER" stop >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

server=$(timeout 90 "$CLUSTER" start 4 --job lc --job_token_file "$tmp/token" --tls \
  --metrics 2>"$tmp/start.err"); rc=$?
check "start 4 --job_token_file --tls --metrics exits 0 ($(tail -3 "$tmp/start.err"))" $rc
[ $rc -eq 0 ] || exit 1
[[ "$(cat "$tmp/token")" =~ ^rjt1\.[0-9a-f]{8}\.[0-9a-f]{64}\.lc$ ]]
check "the job's issued token is in --job_token_file" $?
[ "$(stat -c %a "$tmp/token")" = 600 ]; check "readable by this user only" $?
grep -q "serving TLS; clients need a certificate of --tls_ca" "$RESHARD_CLUSTER_DIR/planner.log"
check "the planner serves mutual TLS" $?
contains "$(cat "$tmp/start.err")" "mutual TLS: reshardctl --tls_ca $RESHARD_CLUSTER_DIR/tls/ca.pem"
check "start says which reshardctl flags to use" $?
TLS=(--tls_ca "$RESHARD_CLUSTER_DIR/tls/ca.pem" --tls_cert "$RESHARD_CLUSTER_DIR/tls/client.pem"
  --tls_key "$RESHARD_CLUSTER_DIR/tls/client.key")
J=("$CTL" --server "$server" "${TLS[@]}" --job_token_file "$tmp/token" job)

err=$("$CTL" --server "$server" --deadline_seconds 5 health 2>&1); rc=$?
[ $rc -eq 4 ] && contains "$err" "(the server may require TLS: pass --tls_ca"
check "a plaintext reshardctl is refused and hinted at TLS ($rc: $err)" $?
out=$("$CLUSTER" exec -- sh -c "\"$CTL\" --server $server \$RESHARD_TLS_FLAGS health")
[ "$out" = SERVING ]; check "exec passes the TLS flags in \$RESHARD_TLS_FLAGS ($out)" $?

# scrape FILE: the /metrics of the port in FILE.
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$(cat "$1")/metrics"; }
scrape "$RESHARD_CLUSTER_DIR/planner.metrics-port" | grep -q '^reshard_agents{state="connected"} 4'
check "the planner's metrics count 4 connected agents" $?
ports=0
for r in 0 1 2 3; do
  scrape "$RESHARD_CLUSTER_DIR/agent-$r.metrics-port" | grep -q '^reshard_plan_executions_total' &&
    ports=$((ports + 1))
done
[ $ports -eq 4 ]; check "every agent serves metrics on its recorded port ($ports of 4)" $?

before=$(awk '$2 == "reshard-agent" && $3 == 2 {print $1}' "$RESHARD_CLUSTER_DIR/pids")
timeout 60 "$CLUSTER" restart 2 2>"$tmp/restart.err"; rc=$?
check "restart 2 exits 0 ($(tail -1 "$tmp/restart.err"))" $rc
after=$(awk '$2 == "reshard-agent" && $3 == 2 {print $1}' "$RESHARD_CLUSTER_DIR/pids")
[ -n "$after" ] && [ "$after" != "$before" ] && ! alive "$before"
check "rank 2 runs as a new process ($before -> $after)" $?
[ "$(awk '$2 == "reshard-agent"' "$RESHARD_CLUSTER_DIR/pids" | wc -l)" -eq 4 ]
check "four agents recorded" $?
json=$(timeout 60 "${J[@]}" run lc --mesh A=4 --shape 16 --from 'S(0)' --to R --json); rc=$?
[ $rc -eq 0 ] && jq -e '.validated == true' <<<"$json" >/dev/null
check "a run over TLS with the token file validates after the restart ($rc)" $?
err=$("$CLUSTER" restart 9 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" 'restart RANK: "9" is not a rank of 0..3'
check "restart of a rank outside the job exits 2 ($rc: $err)" $?

pids=$(awk '{print $1}' "$RESHARD_CLUSTER_DIR/pids")
timeout 60 "$CLUSTER" stop 2>/dev/null; check "stop exits 0" $?
left=""; for p in $pids; do alive "$p" && left="$left $p"; done
[ -z "$left" ]; check "no cluster PID alive after stop${left:+ (alive:$left)}" $?
exit $fail
