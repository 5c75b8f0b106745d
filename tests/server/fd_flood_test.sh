#!/usr/bin/env bash
# Connection floods do not stop the planner accepting, and the caps on
# connections hold.
# 1. Started with a soft open-file limit of 1024 (hard 4096), the planner
#    raises its soft limit to the hard one; 1100 idle connections that
#    send only the HTTP/2 preface then hold more than 1024 of its files,
#    and once they close a new connection is served within 5 s.
# 2. At soft = hard = 1024, 1500 such connections run it out of files: its
#    accept loop closes those it has no file for (gRPC 1.51's own would
#    stop accepting for good), and once the flood closes a new connection
#    is served within 5 s.
# 3. Past --max_connections_per_peer=100, connections from 127.0.0.1 are
#    closed at once while one from 127.0.0.2 is still served.
# 4. On the defaults under soft = hard = 1024 (768 connections in all), one
#    address holds at most half of them: a flood of 800 from 127.0.0.1
#    leaves a client from 127.0.0.2 served. A per-peer cap that lets one
#    address hold every slot is warned about at start.
# usage: fd_flood_test.sh BUILD_DIR [SANITIZED]
# With SANITIZED=1 (an ASan/UBSan build) step 2 is skipped: the sanitizer
# runtime opens a pipe for each of its vptr checks, which a process out of
# files cannot, and reports a false error (the plain build runs step 2).
set -u
BUILD="$1"
SANITIZED="${2:-0}"
. "$(dirname "$0")/../cli/lib.sh"
PLANNER="$BUILD/server/reshard-planner"
CTL="$BUILD/client/reshardctl"
PYTHON="${RESHARD_PYTHON:-python3}"
FLOOD="$(dirname "$0")/fd_flood.py"

dir=$(mktemp -d)
pids=()
trap stop_started EXIT

# start NAME SOFT HARD FLAGS...: a planner under those open-file limits;
# sets pid and port.
start() {
  local name=$1 soft=$2 hard=$3
  shift 3
  (ulimit -Sn "$soft" && ulimit -Hn "$hard" &&
    exec "$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/$name.port" \
      --drain_seconds 0 "$@" 2>"$dir/$name.log") &
  pid=$!
  pids+=($pid)
  wait_for 10 test -s "$dir/$name.port" || die "planner $name did not start"
  port=$(cat "$dir/$name.port")
}

# served_within_5s WHAT: within 5 s a new connection's health call says
# SERVING (retried as a client would: the flood's connections may not all
# be closed on the planner's side yet).
served_within_5s() {
  local start out rc took end=$((SECONDS + 5))
  start=$(date +%s.%N)
  while :; do
    out=$(timeout 10 "$CTL" --server "127.0.0.1:$port" --deadline_seconds 5 health 2>&1)
    rc=$?
    { [ $rc -eq 0 ] || [ $SECONDS -ge $end ]; } && break
    sleep 0.2
  done
  took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  [ $rc -eq 0 ] && [ "$out" = SERVING ] && awk -v t="$took" 'BEGIN { exit !(t < 5) }'
  check "$1: a new connection is served within 5 s ($rc: $out, ${took} s)" $?
  kill -0 "$pid" 2>/dev/null
  check "$1: the planner is alive" $?
}

start raise 1024 4096 --max_connections_per_peer=0
grep -q "connections: one address can hold every connection slot (--max_connections_per_peer=0, 3840 in all)" "$dir/raise.log"
check "the planner warns that one address can take every slot" $?
grep -q "open files: soft limit 4096 (was 1024), hard limit 4096" "$dir/raise.log"
check "the planner raises its soft open-file limit to the hard one" $?
limits=$(grep 'open files' "/proc/$pid/limits")
grep -Eq "^Max open files +4096 +4096" <<<"$limits"
check "its limits say so ($limits)" $?
held=$(timeout 60 "$PYTHON" "$FLOOD" hold "$port" 1100 "$pid" 1024)
check "1100 idle connections hold more than 1024 of its files ($held)" $?
served_within_5s "after 1100"

if [ "$SANITIZED" = 1 ]; then
  echo "skip: 1500 connections past the hard limit (a sanitizer build cannot run out of files)"
else
  start hard 1024 1024 --max_connections=100000 --max_connections_per_peer=0
  read -r served closed silent < <(timeout 60 "$PYTHON" "$FLOOD" sort "$port" 1500)
  [ "${served:-0}" -gt 900 ] && [ "${closed:-0}" -ge 400 ] && [ "${silent:-1}" -eq 0 ]
  check "at 1024 files, of 1500 connections ${served:-?} are served and ${closed:-?} closed (${silent:-?} silent)" $?
  grep -q "connections: out of open files" "$dir/hard.log"
  check "the planner says it ran out of open files" $?
  served_within_5s "after 1500 past the hard limit"
fi

start peer 4096 4096 --max_connections_per_peer=100
read -r served closed silent other < <(timeout 60 "$PYTHON" "$FLOOD" sort "$port" 150 127.0.0.2)
[ "${served:-0}" -eq 100 ] && [ "${closed:-0}" -eq 50 ] && [ "${other:-}" = 127.0.0.2-served ]
check "past 100 per peer: ${served:-?} served, ${closed:-?} closed, then ${other:-?}" $?
grep -q "connections: 100 open from 127.0.0.1, --max_connections_per_peer=100: a new one is closed" "$dir/peer.log"
check "the planner names the peer and the flag" $?
served_within_5s "after the peer's connections closed"

start defaults 1024 1024
grep -q "connections: at most 768 open, 384 per peer address" "$dir/defaults.log"
check "on the defaults one address may hold half of the 768 slots" $?
! grep -q "one address can hold every connection slot" "$dir/defaults.log"
check "and no warning says one address can take them all" $?
read -r served closed silent other < <(timeout 60 "$PYTHON" "$FLOOD" sort "$port" 800 127.0.0.2)
[ "${served:-0}" -eq 384 ] && [ "${other:-}" = 127.0.0.2-served ]
check "a flood of 800 from 127.0.0.1: ${served:-?} served, ${closed:-?} closed, then ${other:-?}" $?
exit $fail
