#!/usr/bin/env bash
# reshardctl exec --local N --src_mesh ... --dst_mesh ... (docs/DESIGN.md §9)
# on Gloo rank processes: a disjoint move (2x2 on ranks 0-3 to 2x2 on 4-7)
# whose destination checksums equal those of the same layout reached within
# one mesh, source-only ranks reporting none; a colocated, permuted move
# from a Partial source; the errors a user meets first; and a rank killed
# mid-run.
set -u
CTL="$1"
. "$(dirname "$0")/lib.sh"

CROSS=(exec --local 8 --src_mesh dp=2,tp=2 --dst_mesh a=2,b=2 --shape 12,10
       --dtype bf16 --from 'S(0),S(1)' --to 'R,S(0)' --iters 2 --warmup 1
       --timeout_seconds 20)
json=$(timeout 120 "$CTL" "${CROSS[@]}" --json); rc=$?
check "disjoint exec --json exits 0 ($rc)" $rc
echo "$json" | jq -e '.kind == "cross_mesh" and .validated and .world_size == 8 and
  ([.ranks[] | select(.rank < 4) | .source and (.destination | not) and
     .checksum == null and .validated == null] | all) and
  ([.ranks[] | select(.rank >= 4) | .destination and .validated] | all) and
  (.rows | map(.name) == ["pre_steps", "transfers", "post_steps"]) and
  .rows[1].seconds_median > 0 and (.plan.transfers | length) > 0' >/dev/null
check "the JSON: roles, checksums on destination ranks only, rows" $?
# The same destination layout reached within one mesh has the same
# checksums, position by position (the data rule's, §6.2).
within=$(timeout 120 "$CTL" exec --local 4 --mesh a=2,b=2 --shape 12,10 \
  --dtype bf16 --from 'R,R' --to 'R,S(0)' --iters 1 --warmup 0 --json |
  jq -c '.checksums')
cross=$(echo "$json" | jq -c '[.ranks[] | select(.destination) | .checksum]')
[ -n "$within" ] && [ "$within" = "$cross" ]
check "destination checksums equal the within-mesh run's ($cross vs $within)" $?

out=$(timeout 120 "$CTL" exec --local 4 --src_mesh x=2,y=2 --dst_mesh z=4 \
  --dst_ranks 3,1,0,2 --shape 9,7 --dtype f32 --from 'P(sum),S(1)' \
  --to 'S(0)' --iters 2 --warmup 0 --timeout_seconds 20); rc=$?
[ $rc -eq 0 ] && contains "$out" "validated" && contains "$out" "transfers" &&
  ! contains "$out" "NOT VALIDATED"
check "colocated permuted move from P(sum) validates ($rc: $out)" $?

err=$("$CTL" exec --local 6 --src_mesh dp=2,tp=2 --dst_mesh a=2,b=2 --shape 12,10 --from "S(0),S(1)" --to "R,S(0)" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "--local: 6 ranks given but the two meshes' rank maps hold 8"
check "a wrong --local is refused naming both counts ($rc: $err)" $?
err=$("$CTL" exec --local 6 --src_mesh x=2 --dst_mesh y=2 --dst_ranks 4,5 \
  --shape 4 --from 'S(0)' --to R 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "a local run's ranks are 0..N-1"
check "rank maps with a gap are refused ($rc: $err)" $?
err=$("$CTL" exec --local 4 --src_mesh x=2 --dst_mesh y=2 --plan /dev/null \
  2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "--plan: cannot be combined with --src_mesh"
check "--plan beside --src_mesh is refused ($rc: $err)" $?

# A batch: two pipeline stages' tensors, each from its own source mesh,
# and two on the batch's, every tensor validated on every destination
# rank; in one exchange and in one per tensor (--bucket_bytes 1) alike; a
# tensor moved in the batch ends with the checksums it has moved alone.
tmpb=$(mktemp -d)
cat >"$tmpb/batch.jsonl" <<'LINES'
{"name": "stage0.w", "shape": [64, 32], "dtype": "bf16", "from": "R", "to": "S(0),R", "src_mesh": "D=2", "src_ranks": [0, 1]}
{"name": "stage1.w", "shape": [64, 33], "dtype": "bf16", "from": "S(1)", "to": "S(1),S(0)", "src_mesh": "D=2", "src_ranks": [2, 3]}
{"name": "norm", "shape": [31], "dtype": "f32", "from": "R,R", "to": "R,R"}
{"name": "grad", "shape": [16, 15], "dtype": "f32", "from": "P(sum),S(0)", "to": "R,S(1)"}
LINES
BATCH=(exec --local 8 --offline --src_mesh pp=2,dp=2 --dst_mesh a=2,b=2
       --batch "$tmpb/batch.jsonl" --iters 2 --warmup 1 --timeout_seconds 20)
for bound in 25MiB 1; do
  json=$(timeout 120 "$CTL" "${BATCH[@]}" --bucket_bytes $bound --json); rc=$?
  check "a cross-mesh batch runs (--bucket_bytes $bound, exit $rc)" $rc
  echo "$json" | jq -e '.kind == "cross_mesh_batch" and .validated and
    .world_size == 8 and (.tensors | map(.name)) ==
      ["stage0.w", "stage1.w", "norm", "grad"] and
    ([.tensors[] | .validated and (.checksums | map(.rank)) == [4, 5, 6, 7]]
     | all) and .rows[1].seconds_median > 0 and
    (.plan.items | length) == 4' >/dev/null
  check "every tensor validated on every destination rank ($bound)" $?
done
alone=$(timeout 120 "$CTL" exec --local 8 --src_mesh pp=2,dp=2 \
  --dst_mesh a=2,b=2 --shape 16,15 --dtype f32 --from 'P(sum),S(0)' \
  --to 'R,S(1)' --json | jq -c '[.ranks[] | select(.destination) | .checksum]')
batched=$(echo "$json" | jq -c '[.tensors[3].checksums[].checksum]')
[ -n "$alone" ] && [ "$alone" = "$batched" ]
check "a batched tensor's checksums equal its own run's ($batched vs $alone)" $?
echo '{"name": "bad", "shape": [4], "from": "S(3),R", "to": "R,R"}' \
  >>"$tmpb/batch.jsonl"
err=$("$CTL" "${BATCH[@]}" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && contains "$err" "--batch: tensors[4] (bad): "
check "a tensor that cannot be planned is refused by name ($rc: $err)" $?
err=$("$CTL" exec --local 8 --src_mesh pp=2,dp=2 --dst_mesh a=2,b=2 \
  --batch "$tmpb/batch.jsonl" 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && contains "$err" "plans cross-mesh batches in-process; add --offline"
check "a batch without --offline says how to plan it ($rc: $err)" $?
rm -rf "$tmpb"

# A rank killed as the ranks connect or run: the others fail or are stopped
# soon after, exec says which rank died, exits non-zero, and no rank
# process outlives it.
tmpk=$(mktemp -d)
setsid "$CTL" exec --local 8 --src_mesh dp=2,tp=2 --dst_mesh a=2,b=2 --shape 256,256 \
  --from 'S(0),S(1)' --to 'R,S(0)' --iters 100000 --timeout_seconds 3 \
  >"$tmpk/out" 2>"$tmpk/err" &
exec_pid=$!
for _ in $(seq 200); do
  [ "$(pgrep -g "$exec_pid" | wc -l)" -ge 9 ] && break
  sleep 0.05
done
victim=$(pgrep -g "$exec_pid" | grep -vx "$exec_pid" | sort -n | sed -n 3p)
start=$SECONDS
kill -9 "$victim"
wait "$exec_pid"; rc=$?
err=$(cat "$tmpk/err")
[ $rc -ne 0 ] && contains "$err" "died of signal 9" && ! contains "$err" "may require TLS"
check "a killed rank fails the run, named, no server hint (exit $rc: $(head -c 400 "$tmpk/err"))" $?
[ $((SECONDS - start)) -lt 30 ]; check "every rank stopped within 30 s ($((SECONDS - start)) s)" $?
[ -z "$(pgrep -g "$exec_pid")" ]; check "no rank process outlives it" $?
rm -rf "$tmpk"

exit $fail
