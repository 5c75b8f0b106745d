#!/usr/bin/env bash
# Cold planning speed of this build against another commit's, in one run
# (docs/PERFORMANCE.md): builds REV's optimal_bench and torch_speed in a
# temporary worktree, then runs each benchmark ROUNDS times, the two builds
# alternating, so that drift in this shared machine's speed hits both alike.
#   bench/planning_ab.sh REV [BUILD] [ROUNDS] [RECORD]
# RECORD: a torch_planner_record.py record for torch_speed (default: none,
# torch_speed skipped). Prints each run's lines prefixed by `before`/`after`.
set -euo pipefail
rev="${1:?usage: bench/planning_ab.sh REV [BUILD] [ROUNDS] [RECORD]}"
build="${2:-build}"
rounds="${3:-2}"
record="${4:-}"
here="$(cd "$(dirname "$0")/.." && pwd)"
base="$(mktemp -d /tmp/reshard-planning-ab-XXXXXX)"
cleanup() {
  git -C "$here" worktree remove --force "$base/tree" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT

git -C "$here" worktree add --detach "$base/tree" "$rev" >/dev/null
CCACHE_BASEDIR="$base/tree" CCACHE_NOHASHDIR=1 \
  cmake -S "$base/tree" -B "$base/tree/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$base/configure.log"
CCACHE_BASEDIR="$base/tree" CCACHE_NOHASHDIR=1 \
  cmake --build "$base/tree/build" -j2 --target optimal_bench torch_speed \
  >"$base/build.log"

# side NAME DIR: one run of each benchmark of the build in DIR.
side() {
  local name="$1" dir="$2"
  "$dir/bench/optimal_bench" --benchmark_filter='BM_OptimalRandom/existing' \
    2>/dev/null | grep BM_ | sed "s/^/$name /"
  if [ -n "$record" ]; then
    "$dir/bench/torch_speed" "$record" 5 | grep optimal | sed "s/^/$name /"
  fi
}

for _ in $(seq "$rounds"); do
  side before "$base/tree/build"
  side after "$build"
done
