#!/usr/bin/env bash
# SIGTERM stops an agent with no run in flight within a second, whatever it
# is waiting on: a Coordinator that never answered its first Join, or one
# that went away (the agent rejoining, its Join waiting for the server up
# to --timeout_seconds=30). It exits 0 and says it stopped. Every process
# started here is stopped by its PID (on failure too).
# usage: agent_stop_test.sh PLANNER AGENT
set -u
PLANNER="$1"
AGENT="$2"
. "$(dirname "$0")/../cli/lib.sh" || { echo "FAIL: tests/cli/lib.sh not found"; exit 1; }

dir=$(mktemp -d /tmp/reshard-agent-stop-XXXXXX)
pids=()
trap stop_started EXIT

start_planner() {
  rm -f "$dir/port"
  "$PLANNER" --listen "127.0.0.1:${1:-0}" --port_file "$dir/port" \
    2>>"$dir/planner.log" &
  planner=$!
  pids+=($planner)
  wait_for 15 test -s "$dir/port" || die "planner did not start"
  port=$(cat "$dir/port")
}
# start_agent NAME: rank 0 of 2 of job js on $port, its log $dir/NAME.log.
start_agent() {
  "$AGENT" --server "127.0.0.1:$port" --job js --rank 0 --world_size 2 \
    --timeout_seconds 30 --reconnect_seconds 60 2>>"$dir/$1.log" &
  agent=$!
  pids+=($agent)
}
# stops_within_1s WHAT: SIGTERM to $agent; it exits 0 within 1 s.
stops_within_1s() {
  local start took rc
  start=$(date +%s.%N)
  kill -TERM "$agent"
  wait_for 5 sh -c "! kill -0 $agent 2>/dev/null"
  took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  wait "$agent"; rc=$?
  [ $rc -eq 0 ] && awk -v t="$took" 'BEGIN { exit !(t < 1) }'
  check "$1: SIGTERM stops the agent within 1 s (exit $rc, ${took} s)" $?
}

# A Coordinator that is not there: the port of a planner SIGKILLed.
start_planner
kill -KILL "$planner"
wait "$planner" 2>/dev/null
start_agent never
wait_for 10 grep -q "does not answer yet" "$dir/never.log"
check "the agent waits for a Coordinator that does not answer" $?
stops_within_1s "never joined"
grep -q "stopped before joining" "$dir/never.log"
check "it says it stopped before joining" $?

# A Coordinator that went away after the agent joined.
start_planner
start_agent rejoin
wait_for 10 grep -q "joined job js as rank 0" "$dir/rejoin.log"
check "the agent joins" $?
kill -KILL "$planner"
wait "$planner" 2>/dev/null
wait_for 10 grep -q "does not answer yet" "$dir/rejoin.log"
check "it rejoins and waits for the Coordinator" $?
stops_within_1s "rejoining"
grep -q "stopped" "$dir/rejoin.log"
check "it says it stopped" $?
exit $fail
