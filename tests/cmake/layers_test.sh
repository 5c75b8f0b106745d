#!/usr/bin/env bash
# The layers the build enforces (docs/ARCHITECTURE.md): every rule of
# cmake/Layers.cmake fails configure when a target reaches its forbidden
# library through its links (a probe project holding the rules' targets,
# once clean and once per rule in violation), and no file of the core
# includes a wire header.
set -u
SRC="$1"
. "$SRC/tests/cli/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cmake -S "$SRC/tests/cmake/forbid_link" -B "$dir/clean" \
  -DRESHARD_SOURCE_DIR="$SRC" -DRESHARD_PROBE_LIST=ON >"$dir/clean.log" 2>&1
check "the probe within its layers configures" $?
rules=$(sed -n 's/^-- rule //p' "$dir/clean.log")
[ "$(echo "$rules" | grep -c .)" -ge 10 ]
check "the probe lists every rule ($(echo "$rules" | grep -c .))" $?

# Each rule, broken on purpose, fails configure naming the target, the
# library it reached and why.
while IFS='|' read -r name target forbidden; do
  out=$(cmake -S "$SRC/tests/cmake/forbid_link" -B "$dir/bad-${name//[:+]/_}" \
    -DRESHARD_SOURCE_DIR="$SRC" "-DRESHARD_PROBE_VIOLATE=$name" 2>&1); rc=$?
  [ $rc -ne 0 ] && contains "$out" "$target links $forbidden: "
  check "rule $name: $target reaching $forbidden fails configure" $?
done <<<"$rules"

hits=$(cd "$SRC" && grep -rlE '#include "(reshard/v1/|grpc|google/protobuf)' \
  common planner run_values executor coordinator reference || true)
[ -z "$hits" ]; check "no core file includes a wire header (${hits:-none})" $?

hits=$(cd "$SRC" && grep -rlE '#include "executor/judge/' executor/run executor/memory \
  executor/backends || true)
[ -z "$hits" ]; check "no runner, memory or backend file includes the judge (${hits:-none})" $?

exit $fail
