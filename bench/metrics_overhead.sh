#!/usr/bin/env bash
# Cached Plan QPS with metrics off vs on, in the same run: two
# reshard-planner processes (one without --metrics_listen, one with it and
# scraped every second, as Prometheus would), loaded in turn by
# reshard-loadgen (the docs/DESIGN.md §4 example, served from the plan cache after
# the first call). The order alternates each round (off/on, on/off, ...) so
# drift in this shared machine's speed hits both sides alike. Prints one row
# per run, the medians and their ratio (on / off), and the median of the
# rounds' own ratios.
#
#   bench/metrics_overhead.sh [BUILD_DIR] [ROUNDS] [SECONDS] [CONCURRENCY]
set -u
BUILD="${1:-build}"
ROUNDS="${2:-6}"
SECONDS_PER_RUN="${3:-3}"
CONCURRENCY="${4:-8}"

dir=$(mktemp -d /tmp/reshard-metrics-bench-XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT

# start NAME FLAGS...: a planner on a free port, its port in $dir/NAME.port.
start() {
  local name="$1"
  shift
  "$BUILD/server/reshard-planner" --listen 127.0.0.1:0 \
    --port_file "$dir/$name.port" "$@" 2>"$dir/$name.log" &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$dir/$name.port" ] && return 0
    sleep 0.1
  done
  echo "metrics_overhead: $name planner did not start" >&2
  cat "$dir/$name.log" >&2
  exit 1
}
start off
start on --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics.port"
metrics_port=$(cat "$dir/metrics.port")
while true; do
  curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$metrics_port/metrics"
  sleep 1
done &
pids+=($!)

# run SIDE: one loadgen run against SIDE's planner; prints its QPS.
run() {
  "$BUILD/reshard-loadgen" --server "127.0.0.1:$(cat "$dir/$1.port")" \
    --rpc plan --concurrency "$CONCURRENCY" --seconds "$SECONDS_PER_RUN" \
    >"$dir/run.json" || exit 1
  local qps p50 p99
  qps=$(sed -E 's/.*"qps":([0-9.]+).*/\1/' "$dir/run.json")
  p50=$(sed -E 's/.*"p50_us":([0-9.]+).*/\1/' "$dir/run.json")
  p99=$(sed -E 's/.*"p99_us":([0-9.]+).*/\1/' "$dir/run.json")
  printf '| %s | %s | %s | %s | %s |\n' "$round" "$1" "$qps" "$p50" "$p99"
  echo "$qps" >>"$dir/$1.qps"
}

# Warm both caches (the first call plans).
round=0
run off >/dev/null
run on >/dev/null
: >"$dir/off.qps"
: >"$dir/on.qps"

echo "| round | metrics | QPS | p50 µs | p99 µs |"
echo "|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then run off; run on; else run on; run off; fi
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
off=$(median "$dir/off.qps")
on=$(median "$dir/on.qps")
paste "$dir/off.qps" "$dir/on.qps" | awk '{print $2 / $1}' >"$dir/ratios"
awk -v on="$on" -v off="$off" -v r="$(median "$dir/ratios")" 'BEGIN {
  printf "median QPS: off %.1f, on %.1f; on/off = %.3f ", off, on, on / off
  printf "(median of the rounds'"'"' on/off: %.3f)\n", r }'
