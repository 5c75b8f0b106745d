#!/usr/bin/env bash
# Health and a small Plan while heavy searches keep the planning pool busy. One
# reshard-planner (plan cache off, so every heavy request searches; 2 workers;
# --max_search_bytes 512 MiB) gets four loops of heavy Plans (mesh [2]*8, tensor
# [16]*8, S(0..7) -> S(7..0), the largest budget), each under its own job token;
# meanwhile reshard-loadgen measures health and then the small default Plan at
# concurrency 1. Prints one JSON line: health and small-Plan p99 (targets 100 ms
# and 200 ms), the planner's RSS before, at its peak (VmHWM) and after the load.
#
#   bench/planning_load.sh [BUILD_DIR] [SECONDS]
set -u
BUILD="${1:-build}"
SECONDS_PER_RUN="${2:-10}"
PLANNER="$BUILD/server/reshard-planner"
CTL="$BUILD/client/reshardctl"
LOADGEN="$BUILD/reshard-loadgen"
dir=$(mktemp -d /tmp/reshard-planning-load-XXXXXX)
pids=()
loops=()
cleanup() {
  touch "$dir/stop"
  for p in "${loops[@]}"; do wait "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
rss() { awk -v k="$2:" '$1 == k {print $2 * 1024}' "/proc/$1/status"; }

# Each loop is a credential of its own: a job token issued for it.
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/admin"
"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" --cache_entries 0 \
  --planning_workers 2 --max_search_bytes 536870912 --admin_token_file "$dir/admin" \
  2>"$dir/planner.log" &
planner=$!
pids+=($planner)
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
[ -s "$dir/port" ] || { echo "the planner did not start" >&2; exit 1; }
S="127.0.0.1:$(cat "$dir/port")"
before=$(rss "$planner" VmRSS)

heavy=(plan --mesh A=2,B=2,C=2,D=2,E=2,F=2,G=2,H=2 --shape 16,16,16,16,16,16,16,16
  --from 'S(0),S(1),S(2),S(3),S(4),S(5),S(6),S(7)'
  --to 'S(7),S(6),S(5),S(4),S(3),S(2),S(1),S(0)' --search_budget 2000000)
for i in 1 2 3 4; do
  token=$("$CTL" --admin_token_file "$dir/admin" job token "heavy-$i")
  (while [ ! -e "$dir/stop" ]; do RESHARD_JOB_TOKEN="$token" "$CTL" --server "$S" \
    --deadline_seconds 120 "${heavy[@]}" >/dev/null 2>&1; done) &
  loops+=($!)
done
sleep 1  # let the searches start: the figures are under load
health=$("$LOADGEN" --server "$S" --rpc health --concurrency 1 --seconds "$SECONDS_PER_RUN")
small=$("$LOADGEN" --server "$S" --rpc plan --concurrency 1 --seconds "$SECONDS_PER_RUN")
peak=$(rss "$planner" VmHWM)
touch "$dir/stop"  # each loop ends after its search in flight
for p in "${loops[@]}"; do wait "$p"; done
loops=()
after=$(rss "$planner" VmRSS)
p99() { sed -E 's/.*"p99_us":([0-9.]+).*/\1/' <<<"$1"; }
printf '{"health_p99_ms":%.1f,"small_plan_p99_ms":%.1f,"rss_before_mb":%d,"rss_peak_mb":%d,"rss_after_mb":%d,"health":%s,"small_plan":%s}\n' \
  "$(awk -v u="$(p99 "$health")" 'BEGIN {print u / 1000}')" \
  "$(awk -v u="$(p99 "$small")" 'BEGIN {print u / 1000}')" \
  $((before >> 20)) $((peak >> 20)) $((after >> 20)) "$health" "$small"
