#!/usr/bin/env bash
# reshardctl exec end to end: the README example on 8 Gloo rank processes
# (table and JSON), checksums as docs/DESIGN.md §6.2 defines them, the threads mode,
# and the errors a user meets first (wrong rank count, no NCCL, bad flags).
set -u
CTL="$1"
PLANNER="${2:-}"
. "$(dirname "$0")/lib.sh"

EX=(exec --local 8 --mesh A=2,B=2,C=2 --flatten A,C --shape 16,16
    --from 'P(sum),R,P(sum)' --to 'R,R,R' --iters 3 --warmup 1 --timeout_seconds 20)
out=$(timeout 120 "$CTL" "${EX[@]}"); rc=$?
check "exec exits 0" $rc
contains "$out" "all_reduce"; check "table row for the merged all_reduce" $?
contains "$out" "A_C"; check "table names the flattened group" $?
contains "$out" "validated: yes"; check "table says validated" $?
contains "$out" "plan per run: min "; check "the table says what a run of the plan takes" $?
# Without the flattened group the plan warns, and exec says so as plan does.
out=$(timeout 120 "$CTL" exec --local 8 --mesh A=2,B=2,C=2 --shape 16,16 \
  --from 'P(sum),R,P(sum)' --to 'R,R,R' --iters 1 --warmup 0 --timeout_seconds 20); rc=$?
[ $rc -eq 0 ] && contains "$out" 'warning [missing_flattened_group]: ' &&
  contains "$out" 'mesh["A", "C"]._flatten()'
check "exec prints the plan's warnings ($rc)" $?
# What a run pays (the per-execution slowest rank's median) beside the
# slowest rank's median, never below it.
echo "$out" | awk '/slowest_us/ {head = 1; next}
  head && $2 == "all_reduce" {found = 1; below = $7 + 0 < $6 + 0}
  END {exit !found || below}'
check "the table's slowest_us is at least its median_us" $?

# exec plans in-process whatever $RESHARD_SERVER says (the help says so).
out=$(RESHARD_SERVER=127.0.0.1:1 timeout 60 "$CTL" exec --local 2 --mesh A=2 \
  --shape 4 --from R --to 'S(0)' --iters 1 --warmup 0 2>&1); rc=$?
[ $rc -eq 0 ] && contains "$out" "validated: yes"
check "exec ignores \$RESHARD_SERVER ($out)" $?
contains "$("$CTL" --help 2>&1)" "exec alone ignores \$RESHARD_SERVER"
check "the help says exec ignores \$RESHARD_SERVER" $?

json=$(timeout 120 "$CTL" "${EX[@]}" --json); rc=$?
check "exec --json exits 0" $rc
# 16x16 replicated: every rank holds g(0..255); checksum = sum (k+1)*g(k).
sum=0; for ((k = 0; k < 256; ++k)); do sum=$((sum + (k + 1) * (k % 31 - 15))); done
p=$(( (1 << 61) - 1 )); expected=$(( (sum % p + p) % p ))
echo "$json" | jq -e '
  .validated == true and .world_size == 8 and .iters == 3 and .warmup == 1 and
  (.steps | length) == 1 and .steps[0].op == "all_reduce" and
  .steps[0].group == "A_C" and .steps[0].bytes == 1024 and
  .steps[0].seconds_min > 0 and .steps[0].seconds_median >= .steps[0].seconds_min and
  .steps[0].slowest_median_seconds >= .steps[0].seconds_median and
  .seconds_min > 0 and .seconds_median >= .seconds_min and
  .seconds_median >= .steps[0].seconds_median and
  .local_seconds_median >= 0 and .local_seconds_median < .seconds_median and
  (.steps[0].busbw_gbps - .steps[0].algbw_gbps * 1.5 | fabs) < 1e-9 and
  (.checksums | length) == 8 and
  .plan.trace == "P(sum)RP(sum)-->RRR" and .peak_bytes_measured == 2048 and
  .peak_bytes_planned == 2048 and .plan.peak_bytes == 2048' >/dev/null
check "json fields and busbw factor" $?
# Beside each measured time, the cost model's (the plan step's time_us).
echo "$json" | jq -e '.steps[0].model_seconds > 0 and
  (.steps[0].model_seconds - .plan.steps[0].time_us * 1e-6 | fabs) < 1e-12' >/dev/null
check "each row has the model's time (model_seconds = the step's time_us)" $?
contains "$out" "model_us"; check "the table has a model_us column" $?
# Checksums compared as text: jq reads numbers as doubles (2^61 > 2^53).
list="$expected"; for _ in 1 2 3 4 5 6 7; do list="$list, $expected"; done
contains "$json" "\"checksums\": [$list]"; check "checksums as docs/DESIGN.md §6.2 defines them" $?

thr=$(timeout 120 "$CTL" exec --local 4 --threads --mesh A=4 --shape 13,3 --dtype bf16 \
      --from 'P(avg)' --to 'S(0)' --iters 2 --json); rc=$?
check "threads mode, bf16 avg reduce_scatter on an uneven shape" $rc
echo "$thr" | jq -e '.validated and .steps[0].op == "reduce_scatter"' >/dev/null
check "reduce_scatter validated" $?

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$CTL" plan --offline --mesh A=2,B=2,C=2 --flatten A,C --shape 9,5 --dtype i64 \
  --from 'S(0),P(avg),S(0)' --to 'S(1),R,R' --json > "$tmp/plan.json"
sed 's/"time_us":[0-9.e+-]*/"time_us":null/g' "$tmp/plan.json" > "$tmp/nulls.json"
fromfile=$(timeout 120 "$CTL" exec --local 8 --plan "$tmp/nulls.json" --iters 2 --json); rc=$?
check "exec --plan FILE (nulls accepted) exits 0" $rc
echo "$fromfile" | jq -e '.validated and (.checksums|length) == 8' >/dev/null
check "plan from a file validated" $?
err=$("$CTL" exec --local 8 --plan "$tmp/missing.json" 2>&1); rc=$?
[ $rc -eq 3 ]; check "missing plan file exits 3 (NOT_FOUND)" $?
contains "$err" "NOT_FOUND: --plan: cannot read"; check "missing plan file named" $?

err=$("$CTL" exec --local 4 --mesh A=2,B=2,C=2 --shape 4 --from R,R,R --to R,R,R 2>&1); rc=$?
[ $rc -eq 2 ]; check "wrong rank count exits 2" $?
contains "$err" "INVALID_ARGUMENT: --local: 4 ranks given but the mesh has 8"; check "wrong rank count message" $?

err=$("$CTL" exec --local 2 --backend nccl --mesh A=2 --shape 4 --from R --to R 2>&1); rc=$?
[ $rc -eq 5 ]; check "nccl without a GPU exits 5 (FAILED_PRECONDITION)" $?
contains "$err" "FAILED_PRECONDITION: --backend nccl"; check "nccl message" $?

err=$("$CTL" exec --local 2 --iters 0 --mesh A=2 --shape 4 --from R --to R 2>&1); rc=$?
contains "$err" '--iters: "0" is not an integer >= 1'; check "bad --iters named" $?

if [ -n "$PLANNER" ]; then
  # --server: the service plans, the ranks run (fork after gRPC was used).
  "$PLANNER" --listen 127.0.0.1:0 --port_file "$tmp/port" >"$tmp/planner.log" 2>&1 &
  planner_pid=$!
  trap 'kill "$planner_pid" 2>/dev/null; wait "$planner_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  remote=$(timeout 120 "$CTL" --server "127.0.0.1:$(cat "$tmp/port")" exec --local 4 \
           --mesh A=2,B=2 --shape 8,8 --from 'S(0),S(1)' --to 'S(1),S(0)' --iters 2 --json); rc=$?
  check "exec --server plans remotely and runs" $rc
  echo "$remote" | jq -e '.validated and (.checksums|length) == 4' >/dev/null
  check "remote plan validated" $?
fi

# Ctrl-C: the terminal signals the whole process group; every rank stops
# before its next execution, exec prints what the finished executions
# measured, says interrupted and exits 130.
tmpi=$(mktemp -d)
setsid "$CTL" exec --local 4 --mesh A=2,B=2 --shape 256,256 --from 'S(0),S(1)' --to R,R \
  --iters 100000 --timeout_seconds 20 --json >"$tmpi/out" 2>"$tmpi/err" &
exec_pid=$!
# Ranks run once the leader has its 4 children (pgrep lists a group's PIDs).
for _ in $(seq 200); do
  [ "$(pgrep -g "$exec_pid" | wc -l)" -ge 5 ] && break
  sleep 0.05
done
start=$SECONDS
kill -INT -- "-$exec_pid"
wait "$exec_pid"; rc=$?
[ $rc -eq 130 ] && [ -s "$tmpi/out" ] && jq -e '.interrupted and (.validated | not) and (.checksums == []) and
  .executions_completed >= 0 and .executions_completed < 100002' "$tmpi/out" >/dev/null
check "Ctrl-C on exec: exit 130, interrupted, nothing validated (exit $rc: $(head -c 300 "$tmpi/out"))" $?
contains "$(cat "$tmpi/err")" "CANCELLED: interrupted after "
check "it says after how many executions ($(cat "$tmpi/err"))" $?
[ $((SECONDS - start)) -lt 20 ]; check "every rank stopped within 20 s ($((SECONDS - start)) s)" $?
[ -z "$(pgrep -g "$exec_pid")" ]; check "no rank process outlives it" $?
rm -rf "$tmpi"

help=$("$CTL" exec --help); rc=$?
check "exec --help exits 0" $rc
contains "$help" "busbw"; check "exec --help explains the columns" $?

exit $fail
