#!/usr/bin/env bash
# An fd flood does not stop the planner accepting. Started
# with a soft open-file limit of 1024 (hard 4096), the planner raises its
# soft limit to the hard one; 1100 idle connections that send only the
# HTTP/2 preface then hold more than 1024 of its files, and once they close
# a new connection is served within 5 s. (gRPC 1.51 stops accepting for good
# after an EMFILE: without the raise the flood would reach it.)
# usage: fd_flood_test.sh BUILD_DIR
set -u
BUILD="$1"
. "$(dirname "$0")/../cli/lib.sh"
PLANNER="$BUILD/server/reshard-planner"
CTL="$BUILD/client/reshardctl"
PYTHON="${RESHARD_PYTHON:-python3}"

dir=$(mktemp -d)
pids=()
trap stop_started EXIT

(ulimit -Sn 1024 && ulimit -Hn 4096 &&
  exec "$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" --drain_seconds 0 \
    2>"$dir/planner.log") &
pid=$!
pids+=($pid)
wait_for 10 test -s "$dir/port" || die "planner did not start"
port=$(cat "$dir/port")
grep -q "open files: soft limit 4096 (was 1024), hard limit 4096" "$dir/planner.log"
check "the planner raises its soft open-file limit to the hard one" $?
limits=$(grep 'open files' "/proc/$pid/limits")
grep -Eq "^Max open files +4096 +4096" <<<"$limits"
check "its limits say so ($limits)" $?

held=$(timeout 60 "$PYTHON" "$(dirname "$0")/fd_flood.py" "$port" 1100 "$pid" 1024); rc=$?
check "1100 idle connections hold more than 1024 of its files ($held)" $rc

start=$(date +%s.%N)
out=$(timeout 10 "$CTL" --server "127.0.0.1:$port" --deadline_seconds 5 health 2>&1); rc=$?
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
[ $rc -eq 0 ] && [ "$out" = SERVING ]
check "a new connection after the flood is served within 5 s ($rc: $out, ${took} s)" $?
kill -0 "$pid" 2>/dev/null; check "the planner is alive" $?
exit $fail
