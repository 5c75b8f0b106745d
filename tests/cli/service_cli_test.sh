#!/usr/bin/env bash
# reshardctl against a real reshard-planner: plan --mesh_id, mesh list/get
# with link overrides and --json, the global --deadline_seconds and --server
# (after the command too, port 50051 when omitted), every command's --help, the
# exit statuses (2 bad input, 3 NOT_FOUND, 4 UNAVAILABLE/DEADLINE_EXCEEDED, 5
# FAILED_PRECONDITION) with the message on stderr and, with --json, the error
# object on stdout; plan JSON's null reduce_op and PyTorch's enum repr of
# Partial; mesh delete on a planner with an admin token.
set -u
CTL="$1"
PLANNER="$2"
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is required"; exit 1; }

dir=$(mktemp -d)
pids=()
trap stop_started EXIT
"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" --drain_seconds 0 \
  --legacy_job_tokens --metrics_listen 127.0.0.1:0 \
  --metrics_port_file "$dir/metrics-port" 2>"$dir/planner.log" &
pid=$!
pids+=($pid)
wait_for 10 test -s "$dir/port" || die "planner did not start"
S="127.0.0.1:$(cat "$dir/port")"
unset RESHARD_SERVER

# expect NAME WANT_RC STDERR_PART CMD...: runs CMD with --json added, checks
# the exit status, the message on stderr and the error object on stdout
# (its code is the stderr's).
expect() {
  local name=$1 want=$2 part=$3; shift 3
  local out err rc code
  out=$("$@" --json 2>"$dir/err"); rc=$?; err=$(cat "$dir/err")
  [ "$rc" -eq "$want" ]; check "$name: exit $want (got $rc)" $?
  contains "$err" "$part"; check "$name: stderr has \"$part\" ($err)" $?
  code=$(jq -r '.error.code' <<<"$out")
  [ "$(jq -r '.error | keys | join(",")' <<<"$out")" = "code,message" ] &&
    contains "$err" "reshardctl: $code: " &&
    contains "$err" "$(jq -r '.error.message' <<<"$out")"
  check "$name: JSON error object on stdout ($out)" $?
}

# Item 9: meshes that differ only in links print differently; plan on one.
id1=$("$CTL" --server "$S" mesh register --mesh A=2,B=2 --link A=100:1.5); check "register with link" $?
id2=$("$CTL" --server "$S" mesh register --mesh A=2,B=2 --link A=5:20); check "register other link" $?
[ "$id1" != "$id2" ]; check "different links, different ids" $?
out=$("$CTL" --server "$S" mesh list)
contains "$out" "$id1  A=2,B=2  links A=100:1.5" &&
  contains "$out" "$id2  A=2,B=2  links A=5:20"
check "mesh list shows link overrides ($out)" $?
out=$("$CTL" mesh list --server "$S" --json)
jq -e --arg id "$id2" '.meshes | length == 2 and (map(select(.mesh_id == $id))[0] |
  .links == [{"dim": "A", "bandwidth_gbps": 5, "latency_us": 20,
    "all_to_all_us": null}] and
  .shape == [2, 2] and .dim_names == ["A", "B"] and .rank_map == null)' \
  <<<"$out" >/dev/null
check "mesh list --json" $?
out=$("$CTL" mesh get "$id1" --json --server "$S")
jq -e '.links[0].bandwidth_gbps == 100 and .links[0].latency_us == 1.5' <<<"$out" >/dev/null
check "mesh get --json" $?
# Without an admin token a mesh is deleted only by the credential that
# registered it (the share of its job token; here a self-chosen one,
# --legacy_job_tokens, given in the environment).
owned=$(RESHARD_JOB_TOKEN=owner-token "$CTL" --server "$S" mesh register --mesh A=3)
check "register with a job token" $?
# --legacy_job_tokens warns at start and counts the self-chosen tokens.
grep -q "warning.*--legacy_job_tokens: self-chosen job tokens are accepted" "$dir/planner.log"
check "--legacy_job_tokens warns at start" $?
metrics=$(curl -sf "http://127.0.0.1:$(cat "$dir/metrics-port")/metrics")
legacy=$(grep '^reshard_legacy_job_tokens_total' <<<"$metrics")
grep -Eq '^reshard_legacy_job_tokens_total [1-9]' <<<"$legacy"
check "reshard_legacy_job_tokens_total counts it ($legacy)" $?
expect "mesh delete by another credential" 6 \
  "PERMISSION_DENIED: mesh_id: mesh $owned was registered by another credential" \
  "$CTL" --server "$S" mesh delete "$owned"
out=$(RESHARD_JOB_TOKEN=owner-token "$CTL" --server "$S" mesh delete "$owned")
[ "$out" = "deleted $owned" ]; check "its registrant deletes it ($out)" $?
P=(--shape 64,64 --from 'S(0),R' --to 'R,R')
strip() { jq -c 'del(.planning_us, .states_expanded, .cache_hit)'; }
by_id=$("$CTL" --server "$S" plan --mesh_id "$id2" "${P[@]}" --json | strip); check "plan --mesh_id" $?
inline=$("$CTL" plan --offline --mesh A=2,B=2 --link A=5:20 "${P[@]}" --json | strip)
[ -n "$by_id" ] && [ "$by_id" = "$inline" ]; check "plan --mesh_id equals the inline plan with the same links" $?
other=$("$CTL" --server "$S" plan --mesh_id "$id1" "${P[@]}" --json | strip)
[ "$(jq .total_time_us <<<"$other")" != "$(jq .total_time_us <<<"$by_id")" ]
check "the registered links price the plan" $?
out=$("$CTL" --server "$S" plan --mesh_id "$id1" "${P[@]}"); check "plan --mesh_id table" $?
contains "$out" "trace: S(0)R->RR"; check "plan --mesh_id table has the trace" $?
expect "unknown --mesh_id" 3 "NOT_FOUND: mesh_id: unknown mesh" \
  "$CTL" --server "$S" plan --mesh_id mesh-nope "${P[@]}"
expect "an unknown --mesh_id points at mesh list" 3 \
  "; \`reshardctl mesh list\` shows the meshes registered on this server" \
  "$CTL" --server "$S" plan --mesh_id mesh-nope "${P[@]}"
expect "an unknown flag suggests the closest" 2 \
  "unknown flag --plannr; did you mean --planner?" \
  "$CTL" plan --offline --mesh A=2 --shape 4 --from R --to R --plannr x
expect "--mesh_id with --mesh" 2 "INVALID_ARGUMENT: --mesh_id: cannot be combined with --mesh" \
  "$CTL" --server "$S" plan --mesh_id "$id1" --mesh A=2,B=2 "${P[@]}"
expect "--mesh_id with --offline" 2 "--mesh_id: the registry is the service's" \
  "$CTL" plan --offline --mesh_id "$id1" "${P[@]}"
expect "plan without a mesh" 2 "plan: --mesh or --mesh_id is required" \
  "$CTL" plan --offline "${P[@]}"

# Item 10: --deadline_seconds bounds the whole call.
SLOW=(plan --mesh A=2,B=2,C=2,D=2,E=2,F=2,G=2,H=2 --shape 256,256,256
      --from 'S(0),S(1),S(2),P(sum),S(0),S(1),S(2),P(avg)'
      --to 'S(2),R,S(0),S(1),P(sum),S(2),R,S(1)' --search_budget 300000
      --flatten_policy none)
start=$(date +%s%N)
expect "a search past --deadline_seconds" 4 \
  "DEADLINE_EXCEEDED: the call did not finish within --deadline_seconds 0.2" \
  "$CTL" --server "$S" --deadline_seconds 0.2 "${SLOW[@]}"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 3000 ]; check "the deadline cut the call short (${ms} ms)" $?
"$CTL" "${SLOW[@]}" --server "$S" --deadline_seconds 60 >/dev/null
check "the same search within a deadline given after the command" $?
expect "--deadline_seconds 0" 2 '--deadline_seconds: "0" is not a number of seconds > 0' \
  "$CTL" --server "$S" health --deadline_seconds 0

# Item 11: every command's --help; global flags after the command; HOST
# without a port means 50051 (nothing else may listen there: then the
# message names it).
for cmd in "plan|plan [--offline] --mesh" "plan --batch x|--bucket_bytes N" \
           "exec|exec --local N" "job|job list [--json]" \
           "job run|job run NAME" "mesh|mesh register --mesh" \
           "mesh get|mesh get MESH_ID [--json]" "health|health [--json]"; do
  words=${cmd%%|*}; want=${cmd#*|}
  # shellcheck disable=SC2086
  out=$("$CTL" $words --help 2>&1); rc=$?
  [ $rc -eq 0 ] && contains "$out" "usage: reshardctl" && contains "$out" "$want"
  check "$words --help: exit 0, its usage" $?
done
# One byte-count form for every byte flag (common/byte_size.h).
out=$("$CTL" plan --offline --mesh A=2 --shape 8 --from R --to 'S(0)' \
  --max_peak_bytes 1MiB --json); rc=$?
[ $rc -eq 0 ] && contains "$out" '"steps"'; check "--max_peak_bytes 1MiB is a byte count" $?
expect "--max_peak_bytes 1MB" 2 \
  '--max_peak_bytes: "1MB" is not a byte count >= 0 (with an optional KiB, MiB, GiB or TiB)' \
  "$CTL" plan --offline --mesh A=2 --shape 8 --from R --to 'S(0)' --max_peak_bytes 1MB
expect "calibrate --max_bytes 1MB" 2 \
  '--max_bytes: "1MB" is not a byte count >= 0 (with an optional KiB, MiB, GiB or TiB)' \
  "$CTL" --server "$S" job calibrate nojob --mesh A=2 --max_bytes 1MB
expect "calibrate --min_bytes 2" 2 '--min_bytes: "2" is below 4 bytes' \
  "$CTL" --server "$S" job calibrate nojob --mesh A=2 --min_bytes 2
out=$("$CTL" --version); rc=$?
[ $rc -eq 0 ] && [[ "$out" =~ ^reshardctl\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
check "--version: exit 0, reshardctl and its version ($out)" $?
out=$("$CTL" plan --offline --mesh A=2 --shape 8 --from R --to R --help); rc=$?
[ $rc -eq 0 ] && contains "$out" "--mesh_id MESH_ID"; check "--help after other flags" $?
out=$("$CTL" health --server "$S"); check "health --server after the command" $?
[ "$out" = "SERVING" ]; check "health says SERVING" $?
err=$("$CTL" health --server 127.0.0.1 --deadline_seconds 2 2>&1); rc=$?
[ $rc -eq 0 ] || contains "$err" "127.0.0.1:50051"
check "--server HOST dials port 50051 ($err)" $?

# Item 12: the other statuses (the NOT_FOUND and DEADLINE ones are above).
expect "bad placement" 2 "INVALID_ARGUMENT: src[0]: shard dim 3 out of range" \
  "$CTL" --server "$S" plan --mesh A=2 --shape 8 --from 'S(3)' --to R
expect "unknown flag" 2 "INVALID_ARGUMENT: unknown flag --bogus" \
  "$CTL" plan --offline --bogus 1
expect "unknown command" 2 'unknown command "frob"' "$CTL" frob
expect "torch refusal" 5 "FAILED_PRECONDITION: torch_greedy: PyTorch cannot" \
  "$CTL" --server "$S" plan --mesh A=2 --shape 8 --from 'P(sum)' --to 'P(avg)' --planner torch_greedy
expect "peak cap" 5 "FAILED_PRECONDITION: options.max_peak_bytes" \
  "$CTL" --server "$S" plan --mesh A=4 --shape 64,64 --from 'S(0)' --to 'S(1)' --max_peak_bytes 100
expect "unknown job" 3 'NOT_FOUND: ' "$CTL" --server "$S" job show nope
expect "deleted mesh" 3 "NOT_FOUND: mesh_id: unknown mesh" \
  "$CTL" --server "$S" mesh get mesh-0000
expect "missing plan file" 3 "NOT_FOUND: --plan: cannot read" \
  "$CTL" exec --local 2 --plan "$dir/missing.json"

# Item 13 over the service: null reduce_op; the enum repr of Partial.
out=$("$CTL" --server "$S" plan --mesh A=2,B=2 --shape 8,8 --from 'S(0),R' \
      --to 'R,S(1)' --json)
jq -e '[.steps[] | {op, reduce_op}] | sort_by(.op) == [{"op": "all_gather", "reduce_op": null},
  {"op": "chunk", "reduce_op": null}]' <<<"$out" >/dev/null
check "reduce_op is null on all_gather and chunk" $?
out=$("$CTL" --server "$S" plan --mesh A=2 --shape 8 \
      --from 'Partial(reduce_op=ReduceOp.SUM)' --to 'Replicate()' --json)
jq -e '.src == "P(sum)" and .steps[0].reduce_op == "sum"' <<<"$out" >/dev/null
check "Partial(reduce_op=ReduceOp.SUM) parses" $?

kill -TERM "$pid"; wait "$pid"; rc=$?
pids=()  # stopped and reaped: nothing left for stop_started
check "planner exits 0 on SIGTERM" $rc
expect "no server" 4 "UNAVAILABLE" "$CTL" --server "$S" health
expect "no server for a plan" 4 "UNAVAILABLE" \
  "$CTL" plan --server "$S" --mesh A=2 --shape 8 --from R --to R

# A planner with an admin token: mesh delete without it, or with another
# ($RESHARD_ADMIN_TOKEN), is refused (exit 6) and the mesh stays; with
# --admin_token_file it deletes.
printf 'tok-%s\n' "$$" > "$dir/admin"
"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port2" --drain_seconds 0 \
  --admin_token_file "$dir/admin" 2>"$dir/planner2.log" &
pids+=($!)
wait_for 10 test -s "$dir/port2" || die "planner with an admin token did not start"
S2="127.0.0.1:$(cat "$dir/port2")"
id=$("$CTL" --server "$S2" mesh register --mesh A=2); check "register on the guarded planner" $?
expect "mesh delete without the admin token" 6 \
  "UNAUTHENTICATED: DeleteMesh needs the planner's admin token" \
  "$CTL" --server "$S2" mesh delete "$id"
expect "mesh delete with another admin token" 6 \
  "PERMISSION_DENIED: DeleteMesh: metadata x-reshard-admin-token: the admin token does not match" \
  env RESHARD_ADMIN_TOKEN=wrong "$CTL" --server "$S2" mesh delete "$id"
"$CTL" --server "$S2" mesh get "$id" >/dev/null; check "the mesh is still there" $?
out=$("$CTL" --server "$S2" mesh delete "$id" --admin_token_file "$dir/admin")
[ "$out" = "deleted $id" ]; check "mesh delete --admin_token_file deletes ($out)" $?

exit $fail
