#!/usr/bin/env bash
# reshardctl exec --local N --batch FILE (docs/DESIGN.md §8): a batch runs
# bucketed and with --no-bucketing on real Gloo ranks, every tensor
# validates in both, each tensor's checksums equal those of `exec` running
# its plan alone, the JSON is exec's object with "buckets" and "tensors";
# errors (a bad item, a wrong --local) exit 2 naming why, and --backend nccl
# exits 5 as it does for a plan.
set -u
CTL="$1"
. "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/batch.jsonl" <<'LINES'
{"name": "wq", "shape": [64, 32], "dtype": "bf16", "from": "S(0),R", "to": "R,S(1)"}
{"name": "bias", "shape": [33], "dtype": "f32", "from": "S(0),R", "to": "R,R"}
{"name": "norm", "shape": [31], "dtype": "bf16", "from": "S(0),R", "to": "R,R"}
{"name": "grad", "shape": [16, 16], "dtype": "f32", "from": "P(sum),R", "to": "R,S(1)"}
{"name": "avg", "shape": [7, 5], "dtype": "f64", "from": "P(avg),P(sum)", "to": "S(0),R"}
LINES
RUN=(exec --local 4 --batch "$dir/batch.jsonl" --mesh A=2,B=2 --iters 2 --warmup 1 --timeout_seconds 20)

out=$("$CTL" "${RUN[@]}"); rc=$?
check "bucketed batch exit 0" $rc
contains "$out" "bucketed, 2 iters after 1 warm-up"; check "table header" $?
contains "$out" "     0  all_gather      A              3"; check "bucket row with 3 members" $?
contains "$out" "bias                 validated checksums: 1538 1538 1538 1538"; check "tensor row" $?
contains "$out" "validated: yes"; check "verdict" $?

json=$("$CTL" "${RUN[@]}" --json); check "bucketed json exit 0" $?
echo "$json" | jq -e 'keys == ["backend","bucketing","buckets","iters","local_seconds_median","peak_bytes_measured","peak_bytes_planned","plan","seconds_median","seconds_min","tensors","validated","wall_seconds","warmup","world_size"]' >/dev/null
check "json keys" $?
echo "$json" | jq -e '.bucketing and .validated and (.tensors | length) == 5 and all(.tensors[]; .validated and (.checksums | length) == 4) and (.buckets | length) == .plan.collectives_after' >/dev/null
check "json: every tensor validated on every rank, one row per bucket" $?
echo "$json" | jq -e '.peak_bytes_planned == .plan.peak_bytes and .peak_bytes_measured > 0 and
  .peak_bytes_measured <= .peak_bytes_planned and .peak_bytes_planned <= .peak_bytes_measured * 1.25' >/dev/null
check "the batch's planned peak is what the ranks held" $?
echo "$json" | jq -e '.buckets[0] | keys == ["algbw_gbps","busbw_gbps","bytes","group","index","members","model_seconds","op","seconds_median","seconds_min","slowest_median_seconds"]' >/dev/null
check "bucket row keys" $?
echo "$json" | jq -e 'all(.buckets[]; .model_seconds > 0) and
  (([.buckets[].model_seconds] | add) - .plan.time_us_after * 1e-6 | fabs) < .plan.time_us_after * 1e-8' >/dev/null
check "each bucket has the model's time; together the schedule's (local steps aside)" $?

plain=$("$CTL" "${RUN[@]}" --json --no-bucketing); check "tensor by tensor exit 0" $?
echo "$plain" | jq -e '(.bucketing | not) and .validated and (.buckets | length) == .plan.collectives_before and all(.buckets[]; .members == 1)' >/dev/null
check "tensor by tensor: one row per communicating step" $?
a=$(echo "$json" | jq -c '[.tensors[].checksums]')
b=$(echo "$plain" | jq -c '[.tensors[].checksums]')
[ "$a" = "$b" ]; check "both modes give every tensor the same checksums" $?
alone=$("$CTL" exec --local 4 --mesh A=2,B=2 --shape 16,16 --dtype f32 --from 'P(sum),R' --to 'R,S(1)' --iters 1 --warmup 0 --json | jq -c '.checksums')
grad=$(echo "$json" | jq -c '.tensors[3].checksums')
[ "$alone" = "$grad" ]; check "a tensor's checksums equal exec of its plan alone" $?

thr=$("$CTL" "${RUN[@]}" --threads --bucket_bytes 64 --json); check "threads, small buckets exit 0" $?
echo "$thr" | jq -e '.validated and .plan.collectives_after > 2' >/dev/null; check "small buckets split and validate" $?

echo '{"name": "bad", "shape": [8], "from": "S(3),R", "to": "R,R"}' >>"$dir/batch.jsonl"
err=$("$CTL" "${RUN[@]}" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "a bad item exits 2" $?
contains "$err" "INVALID_ARGUMENT: --batch: items[5].src[0]: shard dim 3"; check "bad item message" $?
err=$("$CTL" exec --local 2 --batch "$dir/batch.jsonl" --mesh A=2,B=2 2>&1 >/dev/null)
contains "$err" "items[5].src[0]"; check "items are planned before the world size is checked" $?
head -5 "$dir/batch.jsonl" >"$dir/ok.jsonl"
err=$("$CTL" exec --local 2 --batch "$dir/ok.jsonl" --mesh A=2,B=2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "wrong --local exits 2" $?
contains "$err" "--local: 2 ranks given but the mesh has 4"; check "wrong --local message" $?
err=$("$CTL" exec --local 4 --batch "$dir/ok.jsonl" --mesh A=2,B=2 --backend nccl 2>&1 >/dev/null); rc=$?
# One run path: a batch is refused NCCL exactly as a plan is.
[ $rc -eq 5 ]; check "nccl refused as FAILED_PRECONDITION (exit 5)" $?
contains "$err" "--backend nccl: "; check "nccl refused, naming the flag" $?

exit $fail
