#!/usr/bin/env bash
# Cached Plan QPS with metrics off vs on, in the same run: two
# reshard-planner processes (one without --metrics_listen, one with it and
# scraped every second, as Prometheus would), loaded in turn by
# reshard-loadgen (the docs/DESIGN.md §4 example, served from the plan cache after
# the first call), alternating the order each round (bench/planner_ab.sh).
# Prints one row per run, the medians and their ratio (on / off), and the
# median of the rounds' own ratios.
#
#   bench/metrics_overhead.sh [BUILD_DIR] [ROUNDS] [SECONDS] [CONCURRENCY]
set -u
BUILD="${1:-build}"
ROUNDS="${2:-6}"
SECONDS_PER_RUN="${3:-3}"
CONCURRENCY="${4:-8}"
NAME=metrics_overhead
. "$(dirname "$0")/planner_ab.sh"

start off
start on --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics.port"
metrics_port=$(cat "$dir/metrics.port")
while true; do
  curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$metrics_port/metrics"
  sleep 1
done &
pids+=($!)
compare off on
