#!/usr/bin/env bash
# The layers the build enforces (docs/ARCHITECTURE.md): cmake/ForbidLink.cmake
# fails configure when a target reaches a forbidden library through its
# links (a probe project, once clean and once in violation), and no file of
# the core (common/, planner/, executor/, coordinator/) includes a wire header.
set -u
SRC="$1"
. "$SRC/tests/cli/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cmake -S "$SRC/tests/cmake/forbid_link" -B "$dir/clean" \
  -DRESHARD_SOURCE_DIR="$SRC" >"$dir/clean.log" 2>&1
check "a probe within its layers configures" $?

out=$(cmake -S "$SRC/tests/cmake/forbid_link" -B "$dir/bad" \
  -DRESHARD_SOURCE_DIR="$SRC" -DRESHARD_PROBE_VIOLATE=ON 2>&1); rc=$?
[ $rc -ne 0 ]; check "a probe that reaches the wire fails configure" $?
contains "$out" "core links wire: the probe's core must not reach the wire"
check "the failure names the target, the library and why" $?

hits=$(cd "$SRC" && grep -rlE '#include "(reshard/v1/|grpc|google/protobuf)' \
  common planner executor coordinator || true)
[ -z "$hits" ]; check "no core file includes a wire header (${hits:-none})" $?

exit $fail
