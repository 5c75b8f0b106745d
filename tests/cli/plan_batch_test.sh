#!/usr/bin/env bash
# reshardctl plan --batch FILE (docs/DESIGN.md §8): the table, the one JSON
# object with exactly the batch format's keys, per-item errors (exit 2 after
# printing) and --all_or_nothing, bucket_bytes, file errors naming the line,
# flags that belong to the file refused; with a planner, the same JSON over
# gRPC as offline (apart from per-call fields).
set -u
CTL="$1"
PLANNER="${2:-}"
. "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/batch.jsonl" <<'LINES'
{"name": "wq", "shape": [64, 32], "dtype": "bf16", "from": "S(0),R", "to": "R,S(1)"}
{"name": "bias", "shape": [33], "dtype": "f32", "from": "S(0),R", "to": "R,R"}

{"name": "norm", "shape": [31], "from": "S(0),R", "to": "R,R"}
{"name": "grad", "shape": [16, 16], "dtype": "f32", "from": "P(sum),R", "to": "R,S(1)"}
LINES
BATCH=(plan --offline --batch "$dir/batch.jsonl" --mesh A=2,B=2)

out=$("$CTL" "${BATCH[@]}"); rc=$?
check "batch table exit 0" $rc
contains "$out" "items: 4 (4 planned, 0 errors)"; check "table counts items" $?
contains "$out" "bias                 33             float32"; check "table names items" $?
contains "$out" "     0  all_gather      A        -            3"; check "table bucket row" $?
contains "$out" "collectives: 4 tensor by tensor, 2 bucketed"; check "table totals" $?

json=$("$CTL" "${BATCH[@]}" --json); check "batch json exit 0" $?
echo "$json" | jq -e '(keys == ["buckets","collectives_after","collectives_before","peak_bytes","plans","time_us_after","time_us_before"])' >/dev/null
check "json has exactly the issue's keys" $?
echo "$json" | jq -e '.buckets[0] | keys == ["avg_divisor","bytes","group","members","op","reduce_op"]' >/dev/null
check "bucket keys" $?
echo "$json" | jq -e '.buckets[0].op == "all_gather" and .buckets[0].reduce_op == null and .buckets[0].members == [{"tensor":0,"step":1},{"tensor":1,"step":0},{"tensor":2,"step":0}]' >/dev/null
check "gather bucket members (tensor, step)" $?
echo "$json" | jq -e '.buckets[1].reduce_op == "sum" and .collectives_before == 4 and .collectives_after == 2 and .time_us_after < .time_us_before' >/dev/null
check "reduce bucket and totals" $?
echo "$json" | jq -e '.plans[0].tensor.dtype == "bfloat16" and .plans[2].tensor.dtype == "float32"' >/dev/null
check "plans are plan JSON; dtype defaults to float32" $?

small=$("$CTL" "${BATCH[@]}" --json --bucket_bytes 100); check "bucket_bytes accepted" $?
echo "$small" | jq -e '.collectives_after == 4' >/dev/null; check "small buckets split" $?
err=$("$CTL" "${BATCH[@]}" --bucket_bytes 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ]; check "bucket_bytes 0 exits 2" $?
contains "$err" "INVALID_ARGUMENT: bucket_bytes: must be >= 1, got 0"; check "bucket_bytes message" $?

echo '{"name": "bad", "shape": [8], "from": "S(3),R", "to": "R,R"}' >>"$dir/batch.jsonl"
out=$("$CTL" "${BATCH[@]}" --json 2>"$dir/err"); rc=$?
[ $rc -eq 2 ]; check "a bad item exits 2" $?
echo "$out" | jq -e '.plans[4].error.code == "INVALID_ARGUMENT" and (.plans[4].error.message | startswith("items[4].src[0]: shard dim 3")) and (.plans | length) == 5 and .collectives_after == 2' >/dev/null
check "the bad item is its own error, the rest planned" $?
contains "$(cat "$dir/err")" "INVALID_ARGUMENT: items[4].src[0]"; check "stderr names the item" $?
line=$(grep -c '' "$dir/batch.jsonl")
contains "$(cat "$dir/err")" "(item \"bad\", $dir/batch.jsonl line $line)"
check "the error says the item's name and its line in the file" $?
out=$("$CTL" "${BATCH[@]}" --all_or_nothing 2>"$dir/err"); rc=$?
[ $rc -eq 2 ] && [ -z "$out" ]; check "all_or_nothing prints nothing, exits 2" $?
contains "$(cat "$dir/err")" "items[4].src[0]"; check "all_or_nothing names the item" $?

echo '{"name": "x", "shape": [8], "from": "R,R", "to": "R,R", "dtpye": "f32"}' >"$dir/typo.jsonl"
err=$("$CTL" plan --offline --batch "$dir/typo.jsonl" --mesh A=2,B=2 2>&1); rc=$?
[ $rc -eq 2 ]; check "unknown key exits 2" $?
contains "$err" "--batch $dir/typo.jsonl line 1: unknown key \"dtpye\""; check "unknown key names the line" $?
printf '\n{"shape": [8], "from": "R,R"}\n' >"$dir/short.jsonl"
err=$("$CTL" plan --offline --batch "$dir/short.jsonl" --mesh A=2,B=2 2>&1)
contains "$err" "line 2: \"to\" is missing"; check "missing key names the line" $?
err=$("$CTL" plan --offline --batch "$dir/none.jsonl" --mesh A=2,B=2 2>&1)
contains "$err" "NOT_FOUND: --batch: cannot read"; check "missing file" $?
err=$("$CTL" "${BATCH[@]}" --shape 8 2>&1); rc=$?
[ $rc -eq 2 ]; check "--shape with --batch exits 2" $?
contains "$err" "--shape: not with --batch"; check "--shape with --batch message" $?

if [ -n "$PLANNER" ]; then
  "$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" 2>"$dir/log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
  server="127.0.0.1:$(cat "$dir/port")"
  strip() { jq -c 'del(.plans[].planning_us, .plans[].states_expanded, .plans[].cache_hit)'; }
  remote=$("$CTL" --server "$server" plan --batch "$dir/batch.jsonl" --mesh A=2,B=2 --json 2>/dev/null | strip)
  local_=$("$CTL" "${BATCH[@]}" --json 2>/dev/null | strip)
  [ -n "$remote" ] && [ "$remote" = "$local_" ]; check "gRPC batch equals offline batch (bad item included)" $?
  kill -TERM $pid; wait $pid; check "planner exits 0 on SIGTERM" $?
fi

exit $fail
