#!/usr/bin/env bash
# A service killed by a fatal signal says so on stderr, with the stack where
# it died (common/crash_report.h), and still ends by that signal: SIGABRT,
# as the abort after an exception nothing caught would send.
set -u
PLANNER="$1"
. "$(dirname "$0")/../cli/lib.sh"
dir=$(mktemp -d)
pids=()
trap stop_started EXIT

"$PLANNER" --listen 127.0.0.1:0 --port_file "$dir/port" 2>"$dir/planner.log" &
pid=$!
pids+=("$pid")
wait_for 20 test -s "$dir/port" || die "the planner wrote no port file"
kill -ABRT "$pid"
wait "$pid"; rc=$?
[ "$rc" -eq $((128 + 6)) ]; check "the planner ends by SIGABRT (status $rc)" $?
log=$(cat "$dir/planner.log")
contains "$log" "*** SIGABRT received at time="; check "stderr names the signal" $?
contains "$log" "PC: @ "; check "stderr has the stack" $?
exit $fail
