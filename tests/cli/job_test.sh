#!/usr/bin/env bash
# reshardctl job end to end on a local cluster (scripts/local-cluster.sh: a
# reshard-planner and 4 Gloo reshard-agent processes on 127.0.0.1, port 0):
# `job run` from plan flags and from --plan FILE prints what `reshardctl
# exec --local 4` prints for the same plan (checksums, JSON keys), and
# `job run --batch` what `exec --batch` prints (every tensor's checksums,
# bucketed and tensor by tensor; a batch cancelled in flight); `job
# list`/`show`/`cancel`; an unknown job is NOT_FOUND; bad flags exit 2 naming
# the flag; `stop` leaves none of the cluster's PIDs alive.
# usage: job_test.sh RESHARDCTL BUILD_DIR LOCAL_CLUSTER_SH
set -u
CTL="$1"
export RESHARD_BUILD="$2"
CLUSTER="$3"
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
export RESHARD_CLUSTER_DIR="$tmp/cluster"
cleanup() {
  [ -n "${run_pid:-}" ] && kill "$run_pid" 2>/dev/null
  [ -f "$RESHARD_CLUSTER_DIR/pids" ] && "$CLUSTER" stop >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

# The "checksums": [...] of a run's JSON, as text (2^61-range numbers lose
# digits as jq doubles).
checksums() { grep -o '"checksums": \[[0-9, ]*\]' <<<"$1"; }

err=$("$CLUSTER" start 0 2>&1); rc=$?
[ $rc -eq 2 ]; check "start 0 exits 2" $?
contains "$err" 'start N: "0" is not a positive integer'; check "start 0 names N" $?

server=$(timeout 60 "$CLUSTER" start 4 --job jt 2>"$tmp/start.err"); rc=$?
check "local-cluster start 4 exits 0" $rc
[ $rc -eq 0 ] || { cat "$tmp/start.err"; exit 1; }
[[ "$server" =~ ^127\.0\.0\.1:[0-9]+$ ]]; check "start prints the server address ($server)" $?
pids=$(awk '{print $1}' "$RESHARD_CLUSTER_DIR/pids")
[ "$(wc -w <<<"$pids")" -eq 5 ]; check "five PIDs recorded (planner + 4 agents)" $?
J=("$CTL" --server "$server" job)
# The cluster's agents created job jt with the token issued for it; every
# reshardctl call below presents it.
RESHARD_JOB_TOKEN=$(cat "$RESHARD_CLUSTER_DIR/job-token")
export RESHARD_JOB_TOKEN
[[ "$RESHARD_JOB_TOKEN" =~ ^rjt1\.[0-9a-f]{8}\.[0-9a-f]{64}\.jt$ ]]
check "the cluster's job token is issued for jt ($RESHARD_JOB_TOKEN)" $?
issued=$("$CTL" --admin_token_file "$RESHARD_CLUSTER_DIR/admin-token" job token jt)
[ "$issued" = "$RESHARD_JOB_TOKEN" ]; check "job token prints the same token" $?
err=$(env -u RESHARD_ADMIN_TOKEN "$CTL" job token jt 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "job token: needs the planner's admin token (--admin_token_file FILE or \$RESHARD_ADMIN_TOKEN)"
check "job token without the admin token exits 2 ($rc: $err)" $?
err=$("$CTL" --admin_token_file "$RESHARD_CLUSTER_DIR/admin-token" job token 'a/b' 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "job token: NAME: \"a/b\" may only hold letters"
check "job token of a bad name exits 2 naming it ($rc: $err)" $?
# Another job's token, issued by the same admin, takes no other name.
other=$("$CTL" --admin_token_file "$RESHARD_CLUSTER_DIR/admin-token" job token jt2)
out=$(env RESHARD_JOB_TOKEN="$other" "${J[@]}" list --json)
jq -e '.jobs == []' <<<"$out" >/dev/null; check "jt2's token does not see jt ($out)" $?

# Starts `job run jt ARGS...` in the background, waits (bounded) until the
# job runs it, cancels it and checks that it failed CANCELLED. WHAT names
# it in the checks. The cancel often lands while the ranks are still
# connecting their groups (the next check then shows that none of them was
# left waiting out a timeout; executor/gloo's ConnectStore).
cancel_in_flight() {
  local what=$1 out rc
  shift
  timeout 60 "${J[@]}" run jt "$@" >"$tmp/cancelled-$what.out" 2>&1 &
  run_pid=$!
  for _ in $(seq 100); do
    "${J[@]}" show jt --json | jq -e '.state == "running"' >/dev/null && break
    sleep 0.1
  done
  out=$("${J[@]}" cancel jt); rc=$?
  [ $rc -eq 0 ] && contains "$out" "job jt: cancelled run "; check "job cancel of a $what in flight" $?
  wait "$run_pid"; rc=$?; run_pid=""
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && contains "$(cat "$tmp/cancelled-$what.out")" "CANCELLED"
  check "the cancelled $what fails CANCELLED (exit $rc)" $?
}
# `job run jt ARGS...` validates within 10 s (slack for a sanitized build):
# half a long run's collective timeout, so no rank waited one out. NAME
# names the check; the agents' logs are printed when it fails.
validates_at_once() {
  local name=$1 start=$SECONDS run rc
  shift
  run=$(timeout 30 "${J[@]}" run jt "$@" 2>"$tmp/at_once.err"); rc=$?
  [ $rc -eq 0 ] && echo "$run" | jq -e '.validated' >/dev/null && [ $((SECONDS - start)) -lt 10 ]
  check "$name" $?
  if [ $rc -ne 0 ] || [ $((SECONDS - start)) -ge 10 ]; then
    echo "exit $rc after $((SECONDS - start)) s: $(cat "$tmp/at_once.err")"
    "${J[@]}" show jt
    for log in "$RESHARD_CLUSTER_DIR"/*.log; do echo "---- $log"; tail -n 8 "$log"; done
  fi
}

# Plan flags: the job's replica plans; the same plan through exec.
PF=(--mesh A=2,B=2 --flatten A,B --shape 9,5 --dtype i64 --from 'P(sum),S(0)'
    --to 'S(1),R' --iters 2 --warmup 1 --timeout_seconds 20)
run=$(timeout 120 "${J[@]}" run jt "${PF[@]}" --json); rc=$?
check "job run (plan flags) exits 0" $rc
local=$(timeout 120 "$CTL" exec --local 4 "${PF[@]}" --json); rc=$?
check "exec --local 4 (same flags) exits 0" $rc
echo "$run" | jq -e '.validated == true and .world_size == 4 and .backend == "gloo" and
  .iters == 2 and .warmup == 1 and (.checksums | length) == 4 and
  (.steps | length) >= 1 and .steps[0].seconds_median > 0' >/dev/null
check "job run JSON: validated, 4 ranks, iters and warm-up echoed" $?
[ -n "$(checksums "$run")" ] && [ "$(checksums "$run")" = "$(checksums "$local")" ]
check "job run checksums equal exec's ($(checksums "$run"))" $?
[ "$(echo "$run" | jq -c 'keys')" = "$(echo "$local" | jq -c 'keys')" ]
check "job run JSON has exec's keys" $?
[ "$(echo "$run" | jq -c '.steps[0] | keys')" = "$(echo "$local" | jq -c '.steps[0] | keys')" ]
check "job run step rows have exec's keys" $?
[ "$(echo "$run" | jq -c '[.steps[].model_seconds]')" = "$(echo "$local" | jq -c '[.steps[].model_seconds]')" ]
check "job run rows carry the model's time as exec's do" $?
[ "$(echo "$run" | jq -c '.plan.trace')" = "$(echo "$local" | jq -c '.plan.trace')" ]
check "the replica planned exec's plan" $?

# --plan FILE: run as given (nulls accepted, as exec reads it).
"$CTL" plan --offline --mesh A=2,B=2 --shape 8,6 --dtype bf16 --from 'S(0),P(avg)' \
  --to 'R,S(1)' --json | sed 's/"time_us":[0-9.e+-]*/"time_us":null/g' > "$tmp/plan.json"
run=$(timeout 120 "${J[@]}" run jt --plan "$tmp/plan.json" --iters 2 --json); rc=$?
check "job run --plan FILE exits 0" $rc
local=$(timeout 120 "$CTL" exec --local 4 --plan "$tmp/plan.json" --iters 2 --json); rc=$?
check "exec --plan FILE exits 0" $rc
echo "$run" | jq -e '.validated and (.checksums | length) == 4' >/dev/null
check "plan file validated on the job" $?
[ -n "$(checksums "$run")" ] && [ "$(checksums "$run")" = "$(checksums "$local")" ]
check "plan file checksums equal exec's" $?

table=$(timeout 120 "${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)'); rc=$?
check "job run (table) exits 0" $rc
contains "$table" "backend gloo, job jt, 4 agents, run "; check "table header names the job" $?
contains "$table" "validated: yes"; check "table says validated" $?
contains "$table" "busbw_GB/s"; check "table has exec's columns" $?

# The token: without it the job is not listed and every call on it is
# answered as for a missing job (exit 3, NOT_FOUND), another one too, in a
# file or in the environment.
out=$(env -u RESHARD_JOB_TOKEN "${J[@]}" list --json); rc=$?
[ $rc -eq 0 ] && jq -e '.jobs == []' <<<"$out" >/dev/null
check "job list without the token shows no job ($out)" $?
out=$(env -u RESHARD_JOB_TOKEN "${J[@]}" list); rc=$?
[ $rc -eq 0 ] && contains "$out" "listed: only jobs without a job token; one with a token is listed to callers presenting it"
check "job list without the token says what it lists ($out)" $?
err=$(env -u RESHARD_JOB_TOKEN "${J[@]}" show jt 2>&1); rc=$?
[ $rc -eq 3 ] && contains "$err" 'NOT_FOUND: job: no job "jt" for this caller'
check "job show without the token: exit 3, NOT_FOUND ($rc: $err)" $?
missing=$(env -u RESHARD_JOB_TOKEN "${J[@]}" show jt-missing 2>&1)
[ "${missing//jt-missing/jt}" = "$err" ]
check "a missing job answers the same bytes ($missing)" $?
echo "not-the-token" >"$tmp/wrong-token"
err=$("${J[@]}" cancel jt --job_token_file "$tmp/wrong-token" 2>&1); rc=$?
[ $rc -eq 3 ] && contains "$err" 'NOT_FOUND: job: no job "jt" for this caller'
check "job cancel with another token file: exit 3, NOT_FOUND ($rc: $err)" $?
err=$(RESHARD_JOB_TOKEN=other "${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)' 2>&1); rc=$?
[ $rc -eq 3 ] && contains "$err" "NOT_FOUND"
check "job run with another token: exit 3 ($rc: $err)" $?
err=$("${J[@]}" show jt --job_token_file "$tmp/missing" 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--job_token_file=$tmp/missing: cannot read it"
check "an unreadable --job_token_file exits 2 naming it ($rc: $err)" $?

# list / show / cancel.
out=$("${J[@]}" list); rc=$?
check "job list exits 0" $rc
contains "$out" "jt" && contains "$out" "4/4" && contains "$out" "ready"
check "job list: jt, 4/4 agents, ready" $?
contains "$out" "listed: jobs without a job token and the job of the token presented"
check "job list with the token says so" $?
"${J[@]}" list --json | jq -e '.jobs | length == 1 and .[0].name == "jt" and
  .[0].world_size == 4 and .[0].backend == "gloo" and .[0].state == "ready" and
  .[0].runs_total == 3 and .[0].runs_failed == 0 and .[0].store_keys == 0 and
  (.[0].agents | map(.connected) | all) and (.[0].agents | map(.rank)) == [0,1,2,3]' >/dev/null
check "job list --json: 3 runs, no failures, store empty, 4 connected agents" $?
out=$("${J[@]}" show jt); rc=$?
check "job show exits 0" $rc
contains "$out" "job jt: world size 4, backend gloo" && contains "$out" "agents: 4 of 4 connected" &&
  contains "$out" "runs: 3 total, 0 failed"
check "job show: shape, agents, runs" $?
"${J[@]}" show jt --json | jq -e '.name == "jt" and .generation > 0 and
  (.agents | length) == 4 and (.agents[0].version | length) > 0 and .current_run == ""' >/dev/null
check "job show --json" $?
# Who holds a rank stays with the Coordinator: the incarnation rank 0's
# agent logged appears nowhere in job show (text and JSON).
logged=$(grep -l "as rank 0 of" "$RESHARD_CLUSTER_DIR"/agent-*.log | head -1)
inc=$(grep -o 'incarnation [0-9a-f]\{16\}' "$logged" | tail -1 | cut -d' ' -f2)
[ -n "$inc" ] && ! contains "$("${J[@]}" show jt --json)" "$inc" &&
  ! contains "$("${J[@]}" show jt)" "$inc" &&
  [ "$("${J[@]}" show jt --json | jq '.agents[0] | has("incarnation")')" = false ]
check "job show does not show the agents' incarnations ($inc)" $?
out=$("${J[@]}" cancel jt); rc=$?
check "job cancel exits 0" $rc
contains "$out" "job jt: no run was running"; check "cancel with no run says so" $?

# Deadlines and cancel: a run far longer than its deadline fails
# DEADLINE_EXCEEDED and the agents stop it; `job cancel` stops a run in
# flight on every rank. Either way the next run validates at once: within
# 10 s (slack for a sanitized build), half the long run's collective
# timeout, so no rank waited one out.
LONG=(--mesh A=4 --shape 65536 --from 'S(0)' --to R --iters 100000
      --timeout_seconds 20)
SHORT=(--mesh A=4 --shape 8 --from R --to 'S(0)' --json)
err=$(timeout 60 "${J[@]}" run jt "${LONG[@]}" --deadline_seconds 1 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && contains "$err" "DEADLINE_EXCEEDED"
check "a long run with --deadline_seconds 1: DEADLINE_EXCEEDED (exit $rc)" $?
validates_at_once "the agents stopped it: the next run validates at once" "${SHORT[@]}"
cancel_in_flight run "${LONG[@]}"
validates_at_once "after the cancel the next run validates at once" "${SHORT[@]}"

# Every rank is told (a rank whose peer stopped first may fail with that
# peer's error before its own cancel is read; the run after shows all stopped).
stopped=0
for r in 0 1 2 3; do
  [ "$(grep -c "cancelled by the Coordinator" "$RESHARD_CLUSTER_DIR/agent-$r.log")" -ge 2 ] &&
    stopped=$((stopped + 1))
done
[ $stopped -eq 4 ]; check "every agent received both cancels ($stopped of 4)" $?
"${J[@]}" show jt --json | jq -e '(.recent_runs | length) == 7 and
  (.recent_runs | map(.result)) == ["validated", "validated", "validated",
    "DEADLINE_EXCEEDED", "validated", "CANCELLED", "validated"] and
  (.recent_runs[5].error | contains("was cancelled (CancelJob)"))' >/dev/null
rc=$?
check "job show --json lists the 7 runs, the deadline and the cancel among them" $rc
[ $rc -eq 0 ] || "${J[@]}" show jt --json | jq -c '.recent_runs[] | [.result, .error]'
out=$("${J[@]}" show jt)
contains "$out" "recent runs (last 7):" && contains "$out" "CANCELLED"
check "job show prints the recent runs" $?

# Ctrl-C on `job run`: the run stops on every agent, the call prints what
# the finished executions measured, says interrupted and exits 130; the job
# records the run as stopped by its caller.
executing() { cat "$RESHARD_CLUSTER_DIR"/agent-*.log | grep -c ': executing'; }
before=$(executing)
timeout 60 "${J[@]}" run jt "${LONG[@]}" --json >"$tmp/int.out" 2>"$tmp/int.err" &
run_pid=$!
for _ in $(seq 200); do
  [ "$(executing)" -ge $((before + 4)) ] && break
  sleep 0.05
done
# While it runs, job show says how far it is (the agents' Progress calls,
# about once a second).
progress=""
for _ in $(seq 100); do
  progress=$("${J[@]}" show jt --json | jq -c '.current_run_progress')
  jq -e '.executions_done > 0 and .executions_total == 100002 and .seconds > 0' <<<"$progress" >/dev/null && break
  sleep 0.05
done
jq -e '.executions_done > 0' <<<"$progress" >/dev/null
check "job show --json: the current run's progress ($progress)" $?
[[ "$("${J[@]}" show jt)" =~ current\ run:\ [0-9a-f-]+\ \(([0-9]+)\ of\ 100002\ executions,\ [0-9.]+\ s\) ]]
check "job show: current run RUN (K of 100002 executions, T s)" $?
start=$SECONDS
kill -INT "$run_pid"
wait "$run_pid"; rc=$?; run_pid=""
[ $rc -eq 130 ] && [ -s "$tmp/int.out" ] && jq -e '.interrupted and (.validated | not) and .executions_completed >= 0 and
  .executions_completed < 100002 and (.executions_completed <= .warmup or all(.steps[]; .seconds_median > 0))' \
  "$tmp/int.out" >/dev/null
check "Ctrl-C on job run: exit 130 and the measured rows, interrupted (exit $rc: $(head -c 300 "$tmp/int.out"))" $?
contains "$(cat "$tmp/int.err")" "job jt: interrupted; stopping the run" &&
  contains "$(cat "$tmp/int.err")" "CANCELLED: interrupted after "
check "it says it stops the run, and after how many executions" $?
[ $((SECONDS - start)) -lt 10 ]; check "the run stopped within 10 s ($((SECONDS - start)) s)" $?
"${J[@]}" show jt --json | jq -e '.recent_runs[-1] | .result == "CANCELLED" and (.error | startswith("stopped by its caller after "))' >/dev/null
check "job show records the run as stopped by its caller" $?
validates_at_once "after the interrupt the next run validates at once" "${SHORT[@]}"

# Batches: `job run --batch` runs a batch whole on the agents, bucketed and
# tensor by tensor, and prints what `exec --batch` prints for it, every
# tensor's checksums included.
cat >"$tmp/batch.jsonl" <<'LINES'
{"name": "wq", "shape": [64, 32], "dtype": "bf16", "from": "S(0),R", "to": "R,S(1)"}
{"name": "bias", "shape": [33], "dtype": "f32", "from": "S(0),R", "to": "R,R"}
{"name": "grad", "shape": [16, 16], "dtype": "f32", "from": "P(sum),R", "to": "R,S(1)"}
{"name": "avg", "shape": [7, 5], "dtype": "f64", "from": "P(avg),P(sum)", "to": "S(0),R"}
LINES
BATCH=(--batch "$tmp/batch.jsonl" --mesh A=2,B=2 --iters 2 --warmup 1 --timeout_seconds 20)
tensor_checksums() { echo "$1" | jq -r '.tensors[] | "\(.name) \(.checksums)"'; }
run=$(timeout 120 "${J[@]}" run jt "${BATCH[@]}" --json); rc=$?
check "job run --batch exits 0" $rc
local=$(timeout 120 "$CTL" exec --local 4 "${BATCH[@]}" --json); rc=$?
check "exec --local 4 --batch (same flags) exits 0" $rc
echo "$run" | jq -e '.validated and .bucketing and (.tensors | length) == 4 and
  all(.tensors[]; .validated and (.checksums | length) == 4) and
  (.buckets | length) == .plan.collectives_after and .buckets[0].seconds_median > 0' >/dev/null
check "job run --batch: every tensor validated on every rank, one row per bucket" $?
[ "$(echo "$run" | jq -c 'keys')" = "$(echo "$local" | jq -c 'keys')" ] &&
  [ "$(echo "$run" | jq -c '.buckets[0] | keys')" = "$(echo "$local" | jq -c '.buckets[0] | keys')" ]
check "job run --batch JSON has exec --batch's keys" $?
# Checksums as text: 2^61-range values lose digits as jq doubles, alike on both.
[ -n "$(tensor_checksums "$run")" ] && [ "$(tensor_checksums "$run")" = "$(tensor_checksums "$local")" ]
check "every tensor's checksums equal exec --batch's" $?
plain=$(timeout 120 "${J[@]}" run jt "${BATCH[@]}" --no-bucketing --json); rc=$?
check "job run --batch --no-bucketing exits 0" $rc
echo "$plain" | jq -e '(.bucketing | not) and .validated and
  (.buckets | length) == .plan.collectives_before and all(.buckets[]; .members == 1)' >/dev/null
check "tensor by tensor: one row per communicating step" $?
[ "$(tensor_checksums "$plain")" = "$(tensor_checksums "$run")" ]
check "tensor by tensor gives the same checksums" $?
table=$(timeout 120 "${J[@]}" run jt "${BATCH[@]}"); rc=$?
check "job run --batch (table) exits 0" $rc
contains "$table" "job jt, 4 agents, run " && contains "$table" ", bucketed, 2 iters after 1 warm-up" &&
  contains "$table" "bias                 validated checksums: " && contains "$table" "validated: yes"
check "batch table: header, tensor rows, verdict" $?

# A long batch is cancelled on every rank; the next batch runs at once.
cancel_in_flight batch "${BATCH[@]}" --iters 100000
validates_at_once "after the cancel the next batch validates at once" "${BATCH[@]}" --json

# Each agent's --max_run_bytes auto is its share of the host's memory: the
# cluster's four agents say so at start.
shared=$(grep -l -- "--max_run_bytes auto: .* shared by 4 agent(s) (--agents_per_host" \
  "$RESHARD_CLUSTER_DIR"/agent-*.log | wc -l)
[ "$shared" -eq 4 ]; check "every agent logs its share of the host's memory ($shared of 4)" $?

# A run too large for the agents' memory (a 32 GiB tensor; --max_run_bytes
# auto is 3/4 of the host's memory over 4 agents) is refused by every agent before it
# allocates: FAILED_PRECONDITION naming the bound. The agents survive and
# the next run validates at once.
err=$(timeout 60 "${J[@]}" run jt --mesh A=4 --shape 17179869184 --dtype bf16 \
  --from 'S(0)' --to R 2>&1); rc=$?
refused=$(grep -o "exceeds this agent's --max_run_bytes" <<<"$err" | wc -l)
[ $rc -eq 5 ] && contains "$err" "FAILED_PRECONDITION: " && [ "$refused" -eq 4 ] &&
  contains "$err" "rank 0: run: its peak of "
check "a 32 GiB run is refused by all 4 agents, exit 5 ($rc: $(head -c 300 <<<"$err"))" $?
left=""; for p in $pids; do alive "$p" || left="$left $p"; done
[ -z "$left" ]; check "every cluster process survived it${left:+ (gone:$left)}" $?
validates_at_once "after the refusal the next run validates at once" "${SHORT[@]}"

echo '{"name": "bad", "shape": [8], "from": "S(3),R", "to": "R,R"}' >"$tmp/bad.jsonl"
err=$("${J[@]}" run jt --batch "$tmp/bad.jsonl" --mesh A=2,B=2 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "INVALID_ARGUMENT: --batch: items[0].src[0]: shard dim 3"
check "a batch with a bad item exits 2 naming it" $?
err=$("${J[@]}" run jt "${BATCH[@]}" --plan "$tmp/plan.json" 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--plan: cannot be combined with --batch"
check "--batch with --plan exits 2" $?
err=$("${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)' --no-bucketing 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "--no-bucketing: only with --batch FILE"
check "--no-bucketing without --batch exits 2" $?
# An NCCL agent on a machine without a usable GPU says so before joining.
if [ ! -e /dev/nvidia0 ]; then
  err=$("$RESHARD_BUILD/agent/reshard-agent" --server 127.0.0.1:1 --job g \
    --rank 0 --world_size 2 --backend nccl 2>&1); rc=$?
  [ $rc -eq 2 ] && { contains "$err" "--backend nccl: no usable GPU (cudaGetDeviceCount" ||
    contains "$err" "--backend nccl: this build has no NCCL backend"; }
  check "an NCCL agent without a GPU exits 2 saying why" $?
fi

# Errors: status code and message.
err=$("${J[@]}" run nope --mesh A=4 --shape 8 --from R --to 'S(0)' 2>&1); rc=$?
[ $rc -eq 3 ]; check "run on an unknown job exits 3 (NOT_FOUND)" $?
contains "$err" 'NOT_FOUND: ' && contains "$err" '"nope"'; check "unknown job is NOT_FOUND naming it" $?
err=$("${J[@]}" show nope 2>&1); rc=$?
[ $rc -eq 3 ] && contains "$err" 'NOT_FOUND: '; check "show of an unknown job is NOT_FOUND, exit 3" $?
err=$("${J[@]}" run jt --mesh A=8 --shape 8 --from R --to 'S(0)' 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "INVALID_ARGUMENT: mesh: world size 8"
check "a mesh of another world size is refused" $?
for bad in "2|--iters 0|--iters: \"0\" is not an integer >= 1" \
           "2|--warmup -1|--warmup: \"-1\" is not an integer >= 0" \
           "2|--timeout_seconds x|--timeout_seconds: \"x\" is not an integer >= 1" \
           "2|--deadline_seconds 0|--deadline_seconds: \"0\" is not a number of seconds > 0" \
           "2|--plan $tmp/plan.json --mesh A=4|--plan: cannot be combined with --mesh" \
           "2|--bogus 1|unknown flag --bogus" \
           "2|--shape 8|job run: --plan FILE or the plan flags" \
           "3|--plan $tmp/missing.json|NOT_FOUND: --plan: cannot read"; do
  code=${bad%%|*}; bad=${bad#*|}; args=${bad%%|*}; want=${bad#*|}
  # shellcheck disable=SC2086
  err=$("${J[@]}" run jt $args 2>&1); rc=$?
  [ $rc -eq "$code" ] && contains "$err" "$want"; check "run $args: exit $code, \"$want\"" $?
done
err=$("${J[@]}" show 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "job show: NAME (the job) is required"; check "show without NAME" $?
err=$("${J[@]}" frob 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" 'job: expected list, show, run, prepare, cancel, calibrate or token, not "frob"'
check "unknown job verb" $?
err=$("${J[@]}" calibrate jt --mesh A=2 --small_passes 0 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" '--small_passes: "0" is not an integer >= 1'
check "calibrate names a bad --small_passes" $?
err=$("${J[@]}" list --json --all 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" "unknown flag --all"; check "job list names a bad flag" $?
out=$("${J[@]}" run --help); rc=$?
[ $rc -eq 0 ] && contains "$out" "--deadline_seconds D"; check "job run --help" $?
err=$("$CLUSTER" start 4 --job jt 2>&1); rc=$?
[ $rc -ne 0 ] && contains "$err" "a cluster is running"; check "a second start is refused" $?

# Retry loops say what they retry at once: an agent whose Coordinator does
# not answer, and one whose rank a live agent holds, each log it within 2 s,
# while still retrying, then give up at their --timeout_seconds.
AGENT_BIN="$RESHARD_BUILD/agent/reshard-agent"
says_soon() {  # FILE TEXT PID: TEXT in FILE within 2 s, PID still running
  for _ in $(seq 20); do
    grep -qF -- "$2" "$1" && { alive "$3"; return; }
    sleep 0.1
  done
  return 1
}
"$AGENT_BIN" --server 127.0.0.1:1 --job nobody --rank 0 --world_size 2 \
  --timeout_seconds 3 2>"$tmp/refused.log" &
apid=$!
says_soon "$tmp/refused.log" "the Coordinator at 127.0.0.1:1 does not answer yet" "$apid"
check "an agent says at once that its Coordinator does not answer" $?
wait "$apid"; rc=$?
[ $rc -eq 1 ] && contains "$(cat "$tmp/refused.log")" "no answer from the Coordinator at 127.0.0.1:1 by the deadline"
check "and gives up at its timeout (exit $rc)" $?
"$AGENT_BIN" --server "$server" --job jt --rank 0 --world_size 4 \
  --timeout_seconds 3 2>"$tmp/duplicate.log" &
apid=$!
says_soon "$tmp/duplicate.log" 'rank 0 of job "jt" is held by a live agent (connected)' "$apid" &&
  contains "$(cat "$tmp/duplicate.log")" "asking again until the Coordinator sees it gone, for up to 3 s"
check "an agent whose rank a live agent holds says so at once" $?
wait "$apid"; rc=$?
[ $rc -ne 0 ]; check "and gives up at its timeout (exit $rc)" $?

# A rank lost between runs (its agent SIGKILLed): `job run` says on stderr
# which rank it waits for, and fails UNAVAILABLE (exit 4) naming it after
# --agent_wait_seconds instead of at its deadline.
lost=$(tail -1 "$RESHARD_CLUSTER_DIR/pids" | awk '{print $1}')
kill -KILL "$lost"
for _ in $(seq 100); do
  "${J[@]}" show jt --json | jq -e '.agents[3].connected == false' >/dev/null && break
  sleep 0.1
done
start=$SECONDS
err=$("${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)' --agent_wait_seconds 2 2>&1); rc=$?
took=$((SECONDS - start))
[ $rc -eq 4 ] && contains "$err" "waiting for rank 3 (not connected)"
check "job run with a lost rank says which rank it waits for (exit $rc: $err)" $?
contains "$err" 'UNAVAILABLE: job "jt" lost a rank for longer than --agent_wait_seconds (2 s): rank 3 (its agent'"'"'s dispatch stream closed'
check "it fails naming the lost rank and how it went" $?
[ "$took" -le 6 ]; check "within the agent wait and a poll ($took s)" $?
# The same failure as JSON: one entry per failed rank, with its host and
# kind, in the shape of docs/GUIDE.md's example.
json=$("${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)' --agent_wait_seconds 2 --json 2>/dev/null); rc=$?
[ $rc -eq 4 ] && jq -e '.error.code == "UNAVAILABLE" and (.error.ranks | length) == 1 and
  .error.ranks[0].rank == 3 and .error.ranks[0].kind == "lost" and
  .error.ranks[0].host != "" and
  (.error.ranks[0].message | startswith("its agent'"'"'s dispatch stream closed"))' <<<"$json" >/dev/null
check "job run --json names the lost rank, its host and kind ($rc: $json)" $?
readme=$(sed -n '/<!-- failed-run-json -->/,/<!-- \/failed-run-json -->/p' "$(dirname "$0")/../../docs/GUIDE.md" | sed -n '/^{/p')
keys() { jq -c '[paths(scalars) | map(tostring) | join(".")] | sort'; }
[ -n "$readme" ] && [ "$(keys <<<"$readme")" = "$(keys <<<"$json")" ]
check "docs/GUIDE.md's failed-run example has the keys of the real one ($readme)" $?
err=$("${J[@]}" run jt --mesh A=4 --shape 8 --from R --to 'S(0)' --agent_wait_seconds 0 2>&1); rc=$?
[ $rc -eq 2 ] && contains "$err" '--agent_wait_seconds: "0" is not a number of seconds in (0, 86400]'
check "--agent_wait_seconds 0 is refused naming the flag" $?

# stop: none of the recorded PIDs survives, the state is gone.
timeout 60 "$CLUSTER" stop 2>/dev/null; rc=$?
check "local-cluster stop exits 0" $rc
left=""; for p in $pids; do alive "$p" && left="$left $p"; done
[ -z "$left" ]; check "no cluster PID alive after stop${left:+ (alive:$left)}" $?
[ ! -e "$RESHARD_CLUSTER_DIR" ]; check "state dir removed" $?

exit $fail
