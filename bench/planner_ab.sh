# Sourced by the A/B benchmarks of reshard-planner (metrics_overhead.sh,
# tls_overhead.sh): two planners started side by side, loaded in turn by
# reshard-loadgen with the order alternating each round (so drift in this
# shared machine's speed hits both sides alike), one table row per run,
# and the medians with their ratio. The caller sets BUILD, ROUNDS,
# SECONDS_PER_RUN, CONCURRENCY and NAME (its name in messages).
dir=$(mktemp -d /tmp/reshard-ab-bench-XXXXXX)
pids=()
declare -A client_flags
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT

# start SIDE FLAGS...: a planner on a free port, its port in $dir/SIDE.port.
# client_flags[SIDE] are reshard-loadgen's extra flags for it (TLS files).
start() {
  local side="$1"
  shift
  "$BUILD/server/reshard-planner" --listen 127.0.0.1:0 \
    --port_file "$dir/$side.port" "$@" 2>"$dir/$side.log" &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$dir/$side.port" ] && return 0
    sleep 0.1
  done
  echo "$NAME: $side planner did not start" >&2
  cat "$dir/$side.log" >&2
  exit 1
}

# run SIDE: one loadgen run against SIDE's planner; prints its table row.
run() {
  # shellcheck disable=SC2086  # the flags are words
  "$BUILD/reshard-loadgen" --server "127.0.0.1:$(cat "$dir/$1.port")" \
    --rpc plan --concurrency "$CONCURRENCY" --seconds "$SECONDS_PER_RUN" \
    ${client_flags[$1]:-} >"$dir/run.json" || exit 1
  local qps p50 p99
  qps=$(sed -E 's/.*"qps":([0-9.]+).*/\1/' "$dir/run.json")
  p50=$(sed -E 's/.*"p50_us":([0-9.]+).*/\1/' "$dir/run.json")
  p99=$(sed -E 's/.*"p99_us":([0-9.]+).*/\1/' "$dir/run.json")
  printf '| %s | %s | %s | %s | %s |\n' "$round" "$1" "$qps" "$p50" "$p99"
  echo "$qps" >>"$dir/$1.qps"
}

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# compare A B: warms both (the first call plans), runs ROUNDS rounds
# alternating the order, and prints the medians and B/A.
compare() {
  local a=$1 b=$2
  round=0
  run "$a" >/dev/null
  run "$b" >/dev/null
  : >"$dir/$a.qps"
  : >"$dir/$b.qps"
  echo "| round | side | QPS | p50 µs | p99 µs |"
  echo "|---|---|---|---|---|"
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then run "$a"; run "$b"; else run "$b"; run "$a"; fi
  done
  local ma mb
  ma=$(median "$dir/$a.qps")
  mb=$(median "$dir/$b.qps")
  paste "$dir/$a.qps" "$dir/$b.qps" | awk '{print $2 / $1}' >"$dir/ratios"
  awk -v a="$a" -v b="$b" -v ma="$ma" -v mb="$mb" -v r="$(median "$dir/ratios")" 'BEGIN {
    printf "median QPS: %s %.1f, %s %.1f; %s/%s = %.3f ", a, ma, b, mb, b, a, mb / ma
    printf "(median of the rounds'"'"' %s/%s: %.3f)\n", b, a, r }'
}
