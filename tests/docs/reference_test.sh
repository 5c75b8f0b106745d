#!/usr/bin/env bash
# The references against the binaries: docs/FLAGS.md is exactly what
# scripts/flags-doc.sh prints from every program's --help; docs/REFERENCE.md
# names exactly the metric families the sources register, and every family
# a live planner serves.
#
#   reference_test.sh SRC BUILD
set -u
SRC="$1"
BUILD="$2"
. "$SRC/tests/cli/lib.sh"
dir=$(mktemp -d)
pids=()
trap stop_started EXIT

"$SRC/scripts/flags-doc.sh" "$BUILD" >"$dir/flags.md"
cd "$SRC" || exit 1
diff -u docs/FLAGS.md "$dir/flags.md" >"$dir/flags.diff.log"
check "docs/FLAGS.md is what the binaries' --help prints (scripts/flags-doc.sh)" $?

# Documented: every backticked reshard_ name in the metrics bullets.
documented=$(grep -E '^- `' docs/REFERENCE.md |
  grep -oE '`reshard_[a-z_]*[a-z]' | tr -d '`' | sort -u)
registered=$(grep -rhoE '"reshard_[a-z_]*[a-z]"' server agent metrics |
  tr -d '"' | sort -u)
missing=$(comm -13 <(echo "$documented") <(echo "$registered") | tr '\n' ' ')
extra=$(comm -23 <(echo "$documented") <(echo "$registered") | tr '\n' ' ')
[ -z "$missing" ]; check "every registered family is documented (missing: ${missing:-none})" $?
[ -z "$extra" ]; check "every documented family is registered (not registered: ${extra:-none})" $?

"$BUILD/server/reshard-planner" --listen 127.0.0.1:0 --port_file "$dir/port" \
  --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics-port" \
  >"$dir/planner.log" 2>&1 &
pids+=($!)
wait_for 10 test -s "$dir/metrics-port" || die "the planner wrote no metrics port"
served=$(curl -sf "http://127.0.0.1:$(cat "$dir/metrics-port")/metrics" |
  sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' | grep '^reshard_' | sort -u)
[ -n "$served" ]; check "the planner serves reshard_ families ($(echo "$served" | wc -l))" $?
undocumented=$(comm -23 <(echo "$served") <(echo "$documented") | tr '\n' ' ')
[ -z "$undocumented" ]; check "every family the planner serves is documented (${undocumented:-none})" $?
exit $fail
