#!/usr/bin/env bash
# reshard-agent's /metrics on real processes over loopback: a reshard-planner
# and 4 Gloo agents serving metrics on port 0 (each writes its bound port).
# Before any run every result and error kind series is there at 0; after a
# validated `reshardctl job run` each agent counts one ok execution and, per
# collective step of the plan the run printed (op and group labels), the
# step's bytes times its executions, a duration observation and a busbw;
# after a peer is SIGKILLed mid-run the surviving agents count one failed
# execution as a peer or timeout error. Every scrape passes `promtool check
# metrics`. Every process started here is stopped by its PID (on failure
# too) and every wait is bounded.
# usage: agent_metrics_test.sh PLANNER AGENT RESHARDCTL [PROMTOOL]
set -u
PLANNER="$1"
AGENT="$2"
CTL="$3"
PROMTOOL="${4:-promtool}"
. "$(dirname "$0")/../cli/lib.sh" || { echo "FAIL: tests/cli/lib.sh not found"; exit 1; }

dir=$(mktemp -d /tmp/reshard-agent-metrics-XXXXXX)
pids=()
declare -A agent_pid
trap stop_started EXIT

"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" 2>"$dir/planner.log" &
pids+=($!)
wait_for 15 test -s "$dir/port" || die "planner did not start"
server="127.0.0.1:$(cat "$dir/port")"

start_agent() {
  "$AGENT" --server "$server" --job am --rank "$1" --world_size 4 \
    --timeout_seconds 10 --metrics_listen 127.0.0.1:0 \
    --metrics_port_file "$dir/metrics-$1" 2>>"$dir/agent-$1.log" &
  pids+=($!)
  agent_pid[$1]=$!
}
for r in 0 1 2 3; do start_agent "$r"; done
for r in 0 1 2 3; do
  wait_for 15 test -s "$dir/metrics-$r" || die "agent $r wrote no metrics port"
done

# scrape RANK: the agent's /metrics, also kept in $dir/scrape-RANK.
scrape() {
  curl -sf --max-time 5 "http://127.0.0.1:$(cat "$dir/metrics-$1")/metrics" \
    | tee "$dir/scrape-$1"
}
# value RANK 'SERIES{LABELS}': the sample's value in the last scrape, or
# empty.
value() {
  awk -v s="$2" '$1 == s {print $2}' "$dir/scrape-$1"
}
# promtool_ok RANK: the last scrape passes promtool's lint.
promtool_ok() { "$PROMTOOL" check metrics <"$dir/scrape-$1" >"$dir/lint" 2>&1; }

scrape 0 >/dev/null; check "agent 0 serves /metrics" $?
promtool_ok 0; check "promtool check metrics passes before any run" $?
[ "$(value 0 'reshard_plan_executions_total{result="ok"}')" = 0 ] &&
  [ "$(value 0 'reshard_plan_executions_total{result="failed"}')" = 0 ]
check "both result series exist at 0 before a run" $?
for kind in timeout peer digest_mismatch bad_plan cancelled validation binding other; do
  [ "$(value 0 "reshard_executor_errors_total{kind=\"$kind\"}")" = 0 ] ||
    { check "errors_total{kind=$kind} exists at 0" 1; }
done
grep -q '^reshard_build_info{version=' "$dir/scrape-0"
check "reshard_build_info names the version" $?

# A validated run: 3 executions (warm-up 1, iters 2) of every step.
PF=(--mesh A=2,B=2 --flatten A,B --shape 64,48 --dtype f32
    --from 'P(sum),S(0)' --to 'S(1),R' --iters 2 --warmup 1)
run=$(timeout 120 "$CTL" --server "$server" job run am "${PF[@]}" --json)
check "job run exits 0" $?
echo "$run" | jq -e '.validated == true' >/dev/null; check "the run validated" $?
# Expected per (op, group): bytes x 3 summed over the plan's collective steps.
expected=$(echo "$run" | jq -r '[.steps[] | select(.op | IN("all_gather", "all_reduce", "reduce_scatter", "all_to_all"))] |
  group_by([.op, .group])[] |
  "\(.[0].op) \(.[0].group) \(map(.bytes) | add * 3) \(length)"')
[ -n "$expected" ]; check "the plan has collective steps ($(echo $expected))" $?
# busbw per (op, group, group size, size bucket: powers of 4 from 1 KiB).
busbw_series=$(echo "$run" | jq -r '
  def bucket: . as $b | reduce range(0; 10) as $i (1024; if . * 4 <= $b then . * 4 else . end) |
    if . >= 1048576 then "\(. / 1048576)MiB" else "\(. / 1024)KiB" end;
  [.steps[] | select(.op | IN("all_gather", "all_reduce", "reduce_scatter", "all_to_all")) |
   "group=\"\(.group)\",group_size=\"\(if .group == "A_B" then 4 else 2 end)\",op=\"\(.op)\",size=\"\(.bytes | bucket)\""] |
  unique[]')
for r in 0 1 2 3; do
  scrape "$r" >/dev/null || die "scrape of agent $r"
  promtool_ok "$r"; check "agent $r: promtool check metrics passes" $?
  [ "$(value "$r" 'reshard_plan_executions_total{result="ok"}')" = 1 ]
  check "agent $r: one ok execution" $?
  while read -r op group bytes steps; do
    labels="group=\"$group\",op=\"$op\""
    [ "$(value "$r" "reshard_collective_bytes_total{$labels}")" = "$bytes" ]
    check "agent $r: bytes_total{$labels} = $bytes" $?
    [ "$(value "$r" "reshard_collective_duration_seconds_count{$labels}")" = "$steps" ]
    check "agent $r: duration_seconds_count{$labels} = $steps" $?
  done <<<"$expected"
  while read -r labels; do
    busbw=$(value "$r" "reshard_collective_busbw_gbytes_per_second{$labels}")
    awk -v b="${busbw:-0}" 'BEGIN { exit !(b > 0) }'
    check "agent $r: busbw{$labels} > 0 ($busbw)" $?
  done <<<"$busbw_series"
done

# executing_everywhere: the job's run in flight moves data on all 4 agents
# (each logs "run ID: executing" once its communicators are connected and
# the ranks' plan digests agree).
executing_everywhere() {
  local id r
  id=$(timeout 10 "$CTL" --server "$server" job show am --json |
    jq -r 'select(.state == "running") | .current_run') || return 1
  [ -n "$id" ] || return 1
  for r in 0 1 2 3; do
    grep -qF "run $id: executing" "$dir/agent-$r.log" || return 1
  done
}

# A peer killed mid-run: a run of many iterations on one group of all 4
# ranks (so every survivor talks to the dead peer), rank 3 SIGKILLed once it
# executes on every rank; the survivors count a failed execution (peer or
# timeout; or cancelled, should the failed run's cancel reach one between
# iterations).
timeout 90 "$CTL" --server "$server" job run am --mesh A=4 --shape 256,256 \
  --dtype f32 --from 'S(0)' --to 'R' --iters 100000 --timeout_seconds 3 \
  --json >"$dir/killed.json" 2>"$dir/killed.err" &
run_pid=$!
pids+=($run_pid)
wait_for 30 executing_everywhere
check "the long run executes on every agent before the kill" $?
kill -9 "${agent_pid[3]}"
wait "$run_pid"; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ]
check "the run with a killed peer fails (exit $rc) before its bound" $?
# reshardctl's exit status is its status code's (docs/GUIDE.md, "Exit status"),
# and --json printed that code as the error object.
code=$(sed -n 's/^reshardctl: \([A-Z_]*\): .*/\1/p' "$dir/killed.err" | head -1)
case "$code" in
  UNAVAILABLE|DEADLINE_EXCEEDED) want=4 ;; FAILED_PRECONDITION) want=5 ;;
  NOT_FOUND) want=3 ;; INVALID_ARGUMENT|OUT_OF_RANGE) want=2 ;; *) want=1 ;;
esac
[ -n "$code" ] && [ "$rc" -eq "$want" ] &&
  [ "$(jq -r .error.code "$dir/killed.json")" = "$code" ]
check "the failed run exits $want for $code (exit $rc) with the JSON error" $?
for r in 0 1 2; do
  wait_for 10 eval \
    "scrape $r >/dev/null && [ \"\$(value $r 'reshard_plan_executions_total{result=\"failed\"}')\" = 1 ]"
  check "agent $r: one failed execution" $?
  peer=$(value "$r" 'reshard_executor_errors_total{kind="peer"}')
  timeout=$(value "$r" 'reshard_executor_errors_total{kind="timeout"}')
  cancelled=$(value "$r" 'reshard_executor_errors_total{kind="cancelled"}')
  [ $((${peer%.*} + ${timeout%.*} + ${cancelled%.*})) -eq 1 ]
  check "agent $r: the failure counts as peer, timeout or cancelled (peer $peer, timeout $timeout, cancelled $cancelled)" $?
  [ "$(value "$r" 'reshard_plan_executions_total{result="ok"}')" = 1 ]
  check "agent $r: the ok count did not move" $?
done
exit "$fail"
