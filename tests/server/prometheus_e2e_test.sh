#!/usr/bin/env bash
# End to end with a real Prometheus: it scrapes a reshard-planner (metrics on
# loopback) every second while two reshard-loadgen runs send cached Plan
# calls and calls the server refuses; PromQL over Prometheus's HTTP API must
# give the request rate by code, latency quantiles from the histogram and
# the cache hit ratio, and the stored counter must equal what the load
# generator sent. Prometheus runs on 127.0.0.1 with a temporary data dir.
# Every process started here is stopped by its PID (on failure too) and
# every wait is bounded.
set -u
PLANNER="$1"
LOADGEN="$2"
PROMETHEUS="${3:-prometheus}"
PROMTOOL="${4:-promtool}"
. "$(dirname "$0")/../cli/lib.sh"

dir=$(mktemp -d /tmp/reshard-prometheus-XXXXXX)
pids=()
trap stop_started EXIT

"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" \
  --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics_port" \
  2>"$dir/planner.log" &
pids+=($!)
wait_for 10 test -s "$dir/port" || die "planner did not start"
port=$(cat "$dir/port")
metrics_port=$(cat "$dir/metrics_port")

cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: reshard
    static_configs: [{targets: ['127.0.0.1:$metrics_port']}]
EOF
"$PROMTOOL" check config "$dir/prometheus.yml" >/dev/null 2>&1
check "promtool check config" $?

start_prometheus "$PROMETHEUS" "$dir/prometheus.yml" || die "prometheus did not start"
# Our target is up (this also proves the port is our Prometheus).
target_up() {
  [ "$(query 'up{job="reshard"}' | jq -r '.data.result[0].value[1]')" = 1 ]
}
wait_for 30 target_up || die "prometheus never scraped the planner"

# Load: cached Plan calls, and calls refused for a budget over the limit.
cat >"$dir/refused.txt" <<EOF
mesh { shape: 2 shape: 2 dim_names: "A" dim_names: "B" }
tensor { shape: 8 }
src { text: "S(0),R" }
dst { text: "R,R" }
options { search_budget: 3000000 }
EOF
timeout 30 "$LOADGEN" --server "127.0.0.1:$port" --rpc plan --concurrency 2 \
  --seconds 5 >"$dir/good.json" 2>"$dir/loadgen.log" &
good_pid=$!
pids+=($good_pid)
timeout 30 "$LOADGEN" --server "127.0.0.1:$port" --rpc plan --concurrency 1 \
  --seconds 5 --request "$dir/refused.txt" >"$dir/refused.json" \
  2>>"$dir/loadgen.log" &
refused_pid=$!
pids+=($refused_pid)
wait "$good_pid" && wait "$refused_pid"
check "load generators ran" $?
calls=$(jq -r '.calls' "$dir/good.json")
errors=$(jq -r '.errors' "$dir/good.json")
refused=$(jq -r '.errors' "$dir/refused.json")
echo "loadgen: $(cat "$dir/good.json")"
[ "$errors" = 0 ] && [ "$refused" -gt 0 ]
check "good calls succeed, refused calls fail" $?

# The stored counter equals what the load generator sent, once scraped.
stored_ok() {
  [ "$(query 'reshard_rpc_requests_total{method="Plan",code="OK"}' |
    jq -r '.data.result[0].value[1]')" = "$calls" ]
}
wait_for 10 stored_ok
check "Prometheus stored $calls OK Plan calls" $?

W='[15s]'
rates=$(query "sum by (code) (rate(reshard_rpc_requests_total{method=\"Plan\"}$W))" |
  jq -r '.data.result[] | "\(.metric.code) \(.value[1])"')
echo "Plan calls per second by code: $(echo "$rates" | tr '\n' ' ')"
echo "$rates" | awk '$1 == "OK" && $2 > 0 {ok = 1} END {exit !ok}'
check "rate by code: OK" $?
echo "$rates" | awk '$1 == "INVALID_ARGUMENT" && $2 > 0 {ok = 1} END {exit !ok}'
check "rate by code: INVALID_ARGUMENT" $?
refusals=$(query "sum(rate(reshard_plan_requests_total{planner=\"optimal\",code=\"INVALID_ARGUMENT\"}$W))" |
  jq -r '.data.result[0].value[1]')
awk -v r="$refusals" 'BEGIN {exit !(r > 0)}'
check "plan requests refused by code: $refusals/s" $?

for q in 0.5 0.99; do
  latency=$(query "histogram_quantile($q, sum by (le) (rate(reshard_rpc_duration_seconds_bucket{method=\"Plan\"}$W)))" |
    jq -r '.data.result[0].value[1]')
  awk -v l="$latency" 'BEGIN {exit !(l > 0 && l < 10)}'
  check "Plan latency quantile $q from the histogram: $latency s" $?
done

hits="sum(rate(reshard_plan_cache_hits_total$W))"
misses="sum(rate(reshard_plan_cache_misses_total$W))"
ratio=$(query "$hits / ($hits + $misses)" | jq -r '.data.result[0].value[1]')
awk -v r="$ratio" 'BEGIN {exit !(r > 0.9 && r <= 1)}'
check "cache hit ratio: $ratio" $?
exit $fail
