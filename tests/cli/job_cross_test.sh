#!/usr/bin/env bash
# reshardctl job run --src_mesh ... --dst_mesh ... (docs/DESIGN.md §9) on a
# local cluster (scripts/local-cluster.sh: a reshard-planner and 4 Gloo
# reshard-agent processes with metrics): disjoint, overlapping and
# colocated permuted moves validate on every destination rank with the
# checksums `exec --local 4` prints for the same flags; a random sweep of
# moves validates; the agents count their transfers' bytes; rank maps that
# are not the job's ranks, two tensors, and registered tensors on agents
# without them are refused, naming the field or the ranks. A prepared
# schedule (`job prepare`) runs on generated data with the checksums of the
# same move planned per run, with its plan sent only the first time; once
# deleted it is refused saying "prepare again"; `job show` lists it while
# it holds. A cross-mesh batch runs with
# the checksums `exec --local 4` prints for it, planned in the client or by
# the job's replica, and prepared once by the replica; `plan` without
# --offline has the service plan it, as --offline does in-process.
# usage: job_cross_test.sh RESHARDCTL BUILD_DIR LOCAL_CLUSTER_SH [MOVES]
set -u
CTL="$1"
export RESHARD_BUILD="$2"
CLUSTER="$3"
MOVES="${4:-100}"
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
export RESHARD_CLUSTER_DIR="$tmp/cluster"
cleanup() {
  [ -f "$RESHARD_CLUSTER_DIR/pids" ] && "$CLUSTER" stop >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

server=$(timeout 60 "$CLUSTER" start 4 --job jc --metrics 2>"$tmp/start.err")
rc=$?
check "local-cluster start 4 exits 0" $rc
[ $rc -eq 0 ] || { cat "$tmp/start.err"; exit 1; }
RESHARD_JOB_TOKEN=$(cat "$RESHARD_CLUSTER_DIR/job-token")
export RESHARD_JOB_TOKEN
J=("$CTL" --server "$server" job run jc --iters 2 --warmup 1
   --timeout_seconds 20 --json)

# The destination ranks' checksums of a run's JSON, as text (2^61-range
# numbers lose digits as jq doubles).
dst_sums() {
  grep -o '"destination": true, "checksum": [0-9]*' <<<"$1" |
    awk '{print $NF}' | paste -sd,
}

# Runs the move FLAGS... on the job and with exec --local 4 and checks
# that both validate with the same checksums. WHAT names it.
same_as_exec() {
  local what=$1 job exec rc
  shift
  job=$(timeout 120 "${J[@]}" "$@" 2>"$tmp/err"); rc=$?
  check "$what: job run exits 0 ($rc: $(cat "$tmp/err"))" $rc
  jq -e '.kind == "cross_mesh" and .validated and .world_size == 4 and
    (.rows | map(.name) == ["pre_steps", "transfers", "post_steps"]) and
    ([.ranks[] | select(.destination) | .validated] | all) and
    ([.ranks[] | select(.destination | not) | .checksum == null] | all)' \
    <<<"$job" >/dev/null
  check "$what: every destination rank validated" $?
  exec=$(timeout 120 "$CTL" exec --local 4 --iters 1 --warmup 0 --json "$@")
  [ -n "$(dst_sums "$job")" ] && [ "$(dst_sums "$job")" = "$(dst_sums "$exec")" ]
  check "$what: checksums equal exec --local's ($(dst_sums "$job"))" $?
}

same_as_exec "disjoint" --src_mesh a=2 --src_ranks 0,1 --dst_mesh b=2 \
  --dst_ranks 2,3 --shape 8,6 --dtype f32 --from 'S(0)' --to 'S(1)'
same_as_exec "overlapping" --src_mesh a=3 --src_ranks 0,1,2 --dst_mesh b=3 \
  --dst_ranks 3,1,2 --shape 7,5 --dtype bf16 --from 'S(1)' --to 'S(0)'
same_as_exec "colocated permuted from P(sum)" --src_mesh x=2,y=2 \
  --dst_mesh z=4 --dst_ranks 3,1,0,2 --shape 9,7 --dtype f32 \
  --from 'P(sum),S(1)' --to 'S(0)'

# A sweep: random layouts on random rank maps of the job's 4 ranks.
placements=("R" "S(0)" "S(1)" "P(sum)")
ok=0
for i in $(seq "$MOVES"); do
  src=${placements[RANDOM % 4]}
  dst=${placements[RANDOM % 3]}
  perm=$(printf '%s\n' 0 1 2 3 | shuf | paste -sd,)
  out=$(timeout 120 "${J[@]}" --src_mesh p=2,q=2 --dst_mesh r=4 \
    --dst_ranks "$perm" --shape $((RANDOM % 9 + 4)),$((RANDOM % 9 + 1)) \
    --dtype f32 --from "$src,R" --to "$dst" 2>&1)
  if jq -e '.validated' <<<"$out" >/dev/null 2>&1; then
    ok=$((ok + 1))
  else
    echo "move $i ($src -> $dst on $perm): $out"
  fi
done
[ "$ok" -eq "$MOVES" ]; check "$ok of $MOVES random moves validated" $?

# Every agent counted bytes it sent or received between ranks.
sent=0
for r in 0 1 2 3; do
  port=$(cat "$RESHARD_CLUSTER_DIR/agent-$r.metrics-port")
  v=$(curl -s "http://127.0.0.1:$port/metrics" |
    awk '/^reshard_transfer_bytes_total\{direction="sent"\}/ {print $2}')
  [ -n "$v" ] && awk "BEGIN {exit !($v > 0)}" && sent=$((sent + 1))
  curl -s "http://127.0.0.1:$port/metrics" |
    grep -q '^reshard_transfer_duration_seconds_count [1-9]'
  check "rank $r observed its transfers' duration" $?
done
[ "$sent" -eq 4 ]; check "every rank counted bytes sent ($sent of 4)" $?

# A prepared schedule: the same move, planned once.
MOVE=(--src_mesh a=2 --src_ranks 0,1 --dst_mesh b=2 --dst_ranks 2,3
  --shape 8,6 --dtype f32 --from 'S(0)' --to 'S(1)')
prepared=$(timeout 60 "$CTL" --server "$server" job prepare jc "${MOVE[@]}" \
  --json 2>"$tmp/err"); rc=$?
check "job prepare exits 0 ($rc: $(cat "$tmp/err"))" $rc
id=$(jq -r .schedule_id <<<"$prepared")
jq -e '.schedules >= 1 and .generation >= 1 and .plan.kind == "cross_mesh"' \
  <<<"$prepared" >/dev/null
check "job prepare prints the schedule ($id) and its plan" $?
# listed ID TENSORS DELIVERED: `job show` lists schedule ID so.
listed() {
  "$CTL" --server "$server" job show jc --json | jq -e --arg id "$1" \
    "[.schedules[] | select(.id == \$id)] == [{id: \$id, tensors: $2, delivered: $3}]" \
    >/dev/null
}
listed "$id" 1 false
check "job show lists the schedule, its plan not yet delivered" $?
planned=$(timeout 120 "${J[@]}" "${MOVE[@]}")
for i in 1 2; do
  out=$(timeout 120 "${J[@]}" --schedule "$id" 2>"$tmp/err"); rc=$?
  check "run $i of schedule $id exits 0 ($rc: $(cat "$tmp/err"))" $rc
  [ -n "$(dst_sums "$out")" ] && [ "$(dst_sums "$out")" = "$(dst_sums "$planned")" ]
  check "run $i of the schedule has the planned run's checksums" $?
done
listed "$id" 1 true &&
  contains "$("$CTL" --server "$server" job show jc)" "$id  1 tensor, held by every agent"
check "job show says every agent holds the schedule's plan" $?
text=$(timeout 60 "$CTL" --server "$server" job prepare jc --delete "$id")
check "job prepare --delete exits 0" $?
contains "$text" "schedule $id of job jc deleted"
check "the delete says so ($text)" $?
err=$("${J[@]}" --schedule "$id" 2>&1 >/dev/null); rc=$?
[ $rc -eq 5 ] && contains "$err" "FAILED_PRECONDITION" &&
  contains "$err" "holds no schedule \"$id\"" && contains "$err" "prepare again"
check "a deleted schedule is refused, exit 5 ($rc: $err)" $?
err=$("$CTL" --server "$server" job prepare jc --delete "$id" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 3 ] && contains "$err" "schedule_id: job \"jc\" holds no schedule"
check "deleting it again is NOT_FOUND, exit 3 ($rc: $err)" $?
err=$("${J[@]}" --schedule "$id" "${MOVE[@]}" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "--schedule runs a prepared move"
check "--schedule with the cross-mesh flags is refused ($rc: $err)" $?

# A batch planned here (--offline): two pipeline stages' tensors from
# their own source meshes and two from the batch's, colocated and
# permuted; every tensor validates on every destination rank with the
# checksums exec --local 4 prints for the same batch, in one exchange and
# in one per tensor.
cat >"$tmp/batch.jsonl" <<'LINES'
{"name": "stage0.w", "shape": [16, 12], "dtype": "bf16", "from": "R", "to": "S(0)", "src_mesh": "D=2", "src_ranks": [0, 1]}
{"name": "stage1.w", "shape": [16, 13], "dtype": "bf16", "from": "S(1)", "to": "S(1)", "src_mesh": "D=2", "src_ranks": [2, 3]}
{"name": "norm", "shape": [31], "dtype": "f32", "from": "R,R", "to": "R"}
{"name": "grad", "shape": [9, 7], "dtype": "f32", "from": "P(sum),S(0)", "to": "S(1)"}
LINES
BATCH=(--offline --src_mesh pp=2,dp=2 --dst_mesh z=4 --dst_ranks 3,1,0,2
  --batch "$tmp/batch.jsonl")
all_sums() { grep -o '"checksum": [0-9]*' <<<"$1" | awk '{print $NF}' | paste -sd,; }
exec_out=$(timeout 120 "$CTL" exec --local 4 --iters 1 --warmup 0 --json "${BATCH[@]}")
for bound in 25MiB 1; do
  out=$(timeout 120 "${J[@]}" "${BATCH[@]}" --bucket_bytes "$bound" 2>"$tmp/err"); rc=$?
  check "a cross-mesh batch runs on the job (--bucket_bytes $bound, $rc: $(cat "$tmp/err"))" $rc
  jq -e '.kind == "cross_mesh_batch" and .validated and .world_size == 4 and
    (.tensors | map(.name)) == ["stage0.w", "stage1.w", "norm", "grad"] and
    ([.tensors[] | .validated and (.checksums | length) == 4] | all)' \
    <<<"$out" >/dev/null
  check "every tensor validated on every destination rank ($bound)" $?
  [ -n "$(all_sums "$out")" ] && [ "$(all_sums "$out")" = "$(all_sums "$exec_out")" ]
  check "the batch's checksums equal exec --local's ($bound)" $?
done
# Without --offline the job's replica plans the batch: the same checksums.
SERVICE=(--src_mesh pp=2,dp=2 --dst_mesh z=4 --dst_ranks 3,1,0,2
  --batch "$tmp/batch.jsonl")
out=$(timeout 120 "${J[@]}" "${SERVICE[@]}" 2>"$tmp/err"); rc=$?
check "the job's replica plans the batch and runs it ($rc: $(cat "$tmp/err"))" $rc
jq -e '.kind == "cross_mesh_batch" and .validated and (has("plan") | not) and
  (.tensors | map(.name)) == ["stage0.w", "stage1.w", "norm", "grad"]' \
  <<<"$out" >/dev/null
check "its tensors are named and validated" $?
[ -n "$(all_sums "$out")" ] && [ "$(all_sums "$out")" = "$(all_sums "$exec_out")" ]
check "its checksums equal exec --local's" $?
# Prepared once by the replica: its plans go to the agents on the first
# run only, every run with the same checksums.
prepared=$(timeout 60 "$CTL" --server "$server" job prepare jc "${SERVICE[@]}" \
  --json 2>"$tmp/err")
check "job prepare keeps the batch ($(cat "$tmp/err"))" $?
bid=$(jq -r .schedule_id <<<"$prepared")
jq -e '.tensors == 4 and (has("plan") | not)' <<<"$prepared" >/dev/null
check "job prepare says the schedule holds 4 tensors" $?
for i in 1 2 3; do
  out=$(timeout 120 "${J[@]}" --schedule "$bid" 2>"$tmp/err"); rc=$?
  check "run $i of the batch's schedule exits 0 ($rc: $(cat "$tmp/err"))" $rc
  sent=$([ "$i" = 1 ] && echo true || echo false)
  jq -e ".validated and .plan_sent == $sent" <<<"$out" >/dev/null &&
    [ "$(all_sums "$out")" = "$(all_sums "$exec_out")" ]
  check "run $i validates with exec --local's checksums (plan sent: $sent)" $?
done
listed "$bid" 4 true
check "job show lists the batch's schedule with its 4 tensors" $?
"$CTL" --server "$server" job prepare jc --delete "$bid" >/dev/null
listed "$bid" 0 false
[ $? -ne 0 ] && [ "$("$CTL" --server "$server" job show jc --json |
  jq --arg id "$bid" '[.schedules[] | select(.id == $id)] | length')" = 0 ]
check "a deleted schedule is no longer listed" $?
err=$("${J[@]}" --schedule "$bid" 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && contains "$err" "prepare again"
check "a deleted batch schedule is refused ($rc)" $?
# `plan` without --offline has the service plan the batch
# (PlanCrossMeshBatch): the plan --offline makes, planning times aside.
untimed() { jq -S 'del(.. | .planning_us?)'; }
served=$("$CTL" --server "$server" plan "${SERVICE[@]}" --json 2>"$tmp/err"); rc=$?
check "plan --batch on the service exits 0 ($rc: $(cat "$tmp/err"))" $rc
offline=$("$CTL" plan --offline "${SERVICE[@]}" --json)
[ -n "$served" ] && [ "$(untimed <<<"$served")" = "$(untimed <<<"$offline")" ]
check "the service's batch plan is the in-process one" $?
table=$("$CTL" --server "$server" plan "${SERVICE[@]}" --bucket_bytes 1)
contains "$table" "schedule: " && contains "$table" "stage1.w: S(1) -> "
check "plan --batch on the service prints its table" $?

err=$("${J[@]}" "${BATCH[@]}" --tensor w --into w2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "--tensor: 1 names for 4 tensors in --batch (one each)"
check "a batch's --tensor names must be one per tensor ($rc: $err)" $?

err=$("${J[@]}" --src_mesh a=2 --src_ranks 0,1 --dst_mesh b=2 --dst_ranks 1,2 \
  --shape 4 --from 'S(0)' --to R 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && contains "$err" "cross: the two meshes' rank maps hold 3 ranks up to 2" &&
  contains "$err" "are 0 to 3"
check "rank maps that are not the job's ranks are refused ($rc: $err)" $?
err=$("${J[@]}" --src_mesh a=2 --dst_mesh b=2 --shape 4 --from 'S(0)' --to R \
  --tensor v,w --into x,y 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "a cross-mesh run moves one tensor"
check "two --tensor names with --src_mesh are refused ($rc: $err)" $?
# These agents have no --tensor_socket: a run on registered tensors names
# every rank that cannot take it.
err=$("${J[@]}" --src_mesh a=2 --dst_mesh b=2 --shape 4 --from 'S(0)' --to R \
  --tensor w --into w2 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && contains "$err" 'tensors: the agents of ranks 0, 1, 2, 3 do not advertise "registered_tensors"'
check "registered tensors on agents without them are refused naming the ranks ($rc)" $?
exit $fail
