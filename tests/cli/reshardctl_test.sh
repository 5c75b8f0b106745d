#!/usr/bin/env bash
# reshardctl end to end: the README's example as a table and as JSON, the
# planner/cost-model switches, and errors on stderr with their exit status
# (2 bad input, 3 NOT_FOUND, 4 UNAVAILABLE, 5 FAILED_PRECONDITION).
set -u
CTL="$1"
PLANNER="${2:-}"
. "$(dirname "$0")/lib.sh"

ARGS=(plan --offline --mesh A=2,B=2,C=2 --flatten A,C --shape 16,16 --dtype f32
      --from 'P(sum),R,P(sum)' --to 'R,R,R' --merge)
out=$("$CTL" "${ARGS[@]}"); rc=$?
check "table exit 0" $rc
contains "$out" "trace: P(sum)RP(sum)-->RRR"; check "table has trace" $?
contains "$out" "all_reduce        A_C"; check "table has merged step" $?

json=$("$CTL" "${ARGS[@]}" --json); rc=$?
check "json exit 0" $rc
contains "$json" '"steps":[{"op":"all_reduce","mesh_dims":[0,2],"group":"A_C","reduce_op":"sum","avg_divisor":1'
check "json step" $?
contains "$json" '"total_time_us":10.21751425313569,"total_bytes":1024,"peak_bytes":2048'
check "json totals" $?
if command -v jq >/dev/null 2>&1; then
  echo "$json" | jq -e '.trace == "P(sum)RP(sum)-->RRR" and (.warnings|length) == 0' >/dev/null
  check "json parses with jq" $?
fi

warn=$("$CTL" plan --offline --mesh A=2,B=2,C=2 --shape 16,16 --from 'P(sum),R,P(sum)' --to 'R,R,R' --merge)
contains "$warn" 'warning [missing_flattened_group]'; check "missing group warning" $?
contains "$warn" 'mesh["A", "C"]._flatten()'; check "warning remedy" $?

# Rank programs (docs/PLAN_JSON.md): every rank's, or one position's.
progs=$("$CTL" "${ARGS[@]}" --json --programs); check "programs exit 0" $?
contains "$progs" '"programs":[{"position":0,"dtype":"float32","in_shape":[16,16],"out_shape":[16,16],"steps":[{"plan_step":0,"op":"all_reduce","mesh_dims":[0,2],"members":[0,1,4,5]'
check "programs: rank 0's merged all_reduce" $?
one=$("$CTL" "${ARGS[@]}" --json --program_position 7); check "one program exit 0" $?
contains "$one" '"programs":[{"position":7,'; check "program_position 7" $?
if command -v jq >/dev/null 2>&1; then
  echo "$progs" | jq -e '(.programs|length) == 8 and .programs[5].steps[0].index == 3' >/dev/null
  check "programs parse with jq" $?
fi
err=$("$CTL" "${ARGS[@]}" --json --program_position 8 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "program_position out of range exits 2" $?
contains "$err" "INVALID_ARGUMENT: --program_position: 8 is not a position of the 8-rank mesh"
check "program_position message" $?

graph=$("$CTL" plan --offline --mesh A=2,B=2 --shape 8 --from 'S(0)[1]S(0)[0]' --to 'R,R' --planner torch_graph --cost_model torch)
contains "$graph" "torch model, torch_graph planner"; check "graph planner selectable" $?

err=$("$CTL" plan --offline --mesh A=2,B=2 --shape 8 --from 'S(3),R' --to 'R,R' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "bad placement exits 2" $?
contains "$err" "INVALID_ARGUMENT: src[0]: shard dim 3 out of range"; check "bad placement message" $?

err=$("$CTL" plan --offline --mesh A=2,A=2 --shape 8 --from 'R,R' --to 'R,R' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "duplicate dim exits 2" $?
contains "$err" 'mesh.dim_names[1]: duplicate name "A"'; check "duplicate dim message" $?

err=$("$CTL" plan --offline --mesh A=2 --shape 8 --from 'P(sum)' --to 'P(avg)' --planner torch_greedy 2>&1 >/dev/null); rc=$?
[ $rc -eq 5 ]; check "torch refusal exits 5 (FAILED_PRECONDITION)" $?
contains "$err" "FAILED_PRECONDITION"; check "torch refusal message" $?

out=$("$CTL" plan --offline --mesh A=2 --shape 8 --from 'P(sum)' --to 'P(avg)'); rc=$?
check "optimal plans P(sum)->P(avg)" $rc
contains "$out" "optimal planner"; check "optimal is the default planner" $?

out=$("$CTL" plan --offline --mesh A=2,B=2,C=2 --shape 16,16 --from 'P(sum),R,P(sum)' --to 'R,R,R' --flatten_policy any --json)
contains "$out" '"group":"A_C"'; check "flatten_policy any uses A_C" $?

out=$("$CTL" plan --offline --mesh A=2,B=2,C=2 --flatten A,C --shape 16,16 --from 'P(sum),S(0),P(sum)' --to 'R,R,R' --search_budget 1)
contains "$out" "warning [search_budget_exceeded]"; check "budget fallback warns" $?

err=$("$CTL" plan --offline --mesh A=4 --shape 64,64 --from 'S(0)' --to 'S(1)' --max_peak_bytes 100 2>&1 >/dev/null); rc=$?
[ $rc -eq 5 ]; check "max_peak_bytes infeasible exits 5 (FAILED_PRECONDITION)" $?
contains "$err" "FAILED_PRECONDITION: options.max_peak_bytes"; check "max_peak_bytes message" $?

out=$("$CTL" plan --offline --mesh A=2,B=2 --shape 64,64 --from 'S(0),S(1)' --to 'R,R' --link A=10:5 --devices_per_host 2 --cost_model alpha_beta --json)
echo "$out" | jq -e '.steps | length == 2' >/dev/null; check "link and devices_per_host accepted" $?

err=$("$CTL" plan --offline --mesh A=2 --shape 8 --from R --to R --flatten_policy sometimes 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "bad flatten policy exits 2" $?
contains "$err" "--flatten_policy: unknown policy"; check "bad flatten policy message" $?

err=$("$CTL" plan --offline --bogus 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "unknown flag exits 2" $?
contains "$err" "unknown flag --bogus"; check "unknown flag message" $?

# A cross-mesh plan (docs/DESIGN.md §9): 4x2 S(0),R on ranks 0-7 to 2x4
# R,S(1) on ranks 8-15, every destination column block from both replicas
# of every row block.
CROSS=(plan --offline --src_mesh A=4,B=2 --dst_mesh X=2,Y=4 --shape 16,16
       --from 'S(0),R' --to 'R,S(1)')
out=$("$CTL" "${CROSS[@]}" --json); check "cross-mesh json exit 0" $?
echo "$out" | jq -e '.kind == "cross_mesh" and .src_mid == "S(0),R"
  and (.transfers | length) == 32 and .bytes_by_rank.max_send == 256
  and .dst_mesh.rank_map == [8,9,10,11,12,13,14,15]
  and (.layout_digest | test("^[0-9a-f]{16}$"))
  and .sender_rule.name == "least_loaded_holder"' >/dev/null
check "cross-mesh json fields" $?
out=$("$CTL" "${CROSS[@]}"); contains "$out" "transfers, S(0),R -> R,S(1): 32 boxes"
check "cross-mesh summary" $?
err=$("$CTL" "${CROSS[@]}" --dst_ranks 8,9 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "cross-mesh short rank map exits 2" $?
contains "$err" "--dst_mesh: mesh.rank_map"; check "cross-mesh rank map message" $?
# A cross-mesh batch: two pipeline stages' weights, each from its stage's
# sub-mesh, to one tensor-parallel mesh, bucketed under 2 KiB per rank.
batch=$(mktemp)
cat > "$batch" <<'EOF'
{"name": "stage0.w", "shape": [64, 32], "dtype": "bf16", "from": "R", "to": "S(0)", "src_mesh": "D=2", "src_ranks": [0, 1]}
{"name": "stage1.w", "shape": [64, 32], "dtype": "bf16", "from": "R", "to": "S(1)", "src_mesh": "D=2", "src_ranks": [2, 3]}
{"name": "bad", "shape": [64, 32], "from": "R,R", "to": "S(5)"}
EOF
out=$("$CTL" plan --offline --src_mesh P=2,D=2 --dst_mesh X=4 --dst_ranks 4,5,6,7 \
  --batch "$batch" --bucket_bytes 2KiB --json); check "cross-mesh batch exit 0" $?
echo "$out" | jq -e '.kind == "cross_mesh_batch" and (.items | length) == 3
  and .items[1].plan.src_mesh.rank_map == [2,3]
  and (.items[2].error.message | startswith("dst[0]"))
  and ([.buckets[].max_rank_bytes] | max) <= 2048
  and ([.buckets[].members | length] | add) == 8' >/dev/null
check "cross-mesh batch json" $?
# Without --offline the service plans the batch: a bad line refuses it
# before any call, naming the line.
err=$("$CTL" plan --src_mesh P=2,D=2 --dst_mesh X=4 --dst_ranks 4,5,6,7 \
  --batch "$batch" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "cross-mesh batch with a bad line exits 2 ($rc)" $?
contains "$err" "--batch: tensors[2] (bad): dst[0]: "
check "cross-mesh batch names its bad line ($err)" $?
rm -f "$batch"

err=$("$CTL" plan --offline --src_mesh A=2 --dst_mesh X=4000000000,Y=4000000000 --shape 4 --from 'S(0)' --to R,R 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "cross-mesh huge mesh exits 2" $?
contains "$err" "--dst_mesh: more than 1048576 ranks"; check "cross-mesh huge mesh message" $?
err=$("$CTL" "${CROSS[@]}" --to 'R,P(max)' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "cross-mesh P(max) destination exits 2" $?
contains "$err" "dst[1]: P(max) cannot be a cross-mesh destination"; check "cross-mesh P(max) message" $?

# Server mode: the same plan over gRPC prints the same JSON (apart from the
# per-call fields), plus the mesh and health commands.
if [ -n "$PLANNER" ]; then
  dir=$(mktemp -d)
  "$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" 2>"$dir/log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
  export RESHARD_SERVER="127.0.0.1:$(cat "$dir/port")"
  out=$("$CTL" health); check "health over gRPC" $?
  [ "$out" = "SERVING" ]; check "health says SERVING" $?
  strip() { jq -c 'del(.planning_us, .states_expanded, .cache_hit)'; }
  ARGS_SERVER=(); for a in "${ARGS[@]}"; do [ "$a" != "--offline" ] && ARGS_SERVER+=("$a"); done
  remote=$("$CTL" "${ARGS_SERVER[@]}" --json | strip); check "plan over gRPC" $?
  local_=$("$CTL" "${ARGS[@]}" --json | strip)
  [ "$remote" = "$local_" ]; check "gRPC plan equals offline plan" $?
  CROSS_SERVER=(); for a in "${CROSS[@]}"; do [ "$a" != "--offline" ] && CROSS_SERVER+=("$a"); done
  remote=$("$CTL" "${CROSS_SERVER[@]}" --json | sed 's/"planning_us":[^,}]*//'); check "cross-mesh plan over gRPC" $?
  local_=$("$CTL" "${CROSS[@]}" --json | sed 's/"planning_us":[^,}]*//')
  [ "$remote" = "$local_" ]; check "gRPC cross-mesh plan equals offline plan" $?
  id=$("$CTL" mesh register --mesh A=2,B=2 --flatten A,B); check "mesh register" $?
  case "$id" in mesh-*) true ;; *) false ;; esac; check "mesh id is content-addressed" $?
  out=$("$CTL" mesh list); contains "$out" "$id  A=2,B=2  flattened A_B"; check "mesh list" $?
  out=$("$CTL" --server "$RESHARD_SERVER" mesh get "$id"); contains "$out" "A=2,B=2"; check "mesh get with --server" $?
  "$CTL" mesh delete "$id" >/dev/null; check "mesh delete" $?
  err=$("$CTL" mesh get "$id" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 3 ]; check "deleted mesh exits 3 (NOT_FOUND)" $?
  contains "$err" "NOT_FOUND: mesh_id: unknown mesh"; check "deleted mesh message" $?
  kill -TERM $pid; wait $pid; check "planner exits 0 on SIGTERM" $?
  err=$("$CTL" health 2>&1); rc=$?
  [ $rc -eq 4 ]; check "health without a server exits 4 (UNAVAILABLE)" $?
  contains "$err" "UNAVAILABLE"; check "health without a server says UNAVAILABLE" $?
  rm -rf "$dir"
fi

exit $fail
