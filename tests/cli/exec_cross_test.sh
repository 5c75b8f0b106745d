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
err=$("$CTL" exec --local 4 --src_mesh x=2 --dst_mesh y=2 --batch /dev/null \
  2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && contains "$err" "cross-mesh batches do not run yet"
check "a cross-mesh batch says it does not run yet ($rc: $err)" $?

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
