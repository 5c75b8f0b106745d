#!/usr/bin/env bash
# Prices a repeated cross-mesh move against the first by callgrind
# instructions (bench/cross_repeat_bench.cc says what each part runs), for
# a source rank and a destination rank of the disjoint scenario and a rank
# of the colocated one. Per part: all instructions, those of the bytes'
# copies (libc memcpy and memmove, and the box walks that call them per
# contiguous run, executor/run/box_copy.h's PackBox and UnpackBox: packing,
# unpacking, local copies), and the rest, the work outside the transfers. The first move is BenchPrepare
# (planning, compiling, staging) plus BenchFirstRun; the ratio is the
# repeated run's rest over the first move's rest.
#
#   bench/cross_repeat_callgrind.sh [BUILD_DIR] [HIDDEN] [LAYERS]
set -eu
BUILD="${1:-build}"
HIDDEN="${2:-64}"
LAYERS="${3:-33}"
BENCH="$BUILD/bench/cross_repeat_bench"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# counts OUT: "ALL COPIES" instructions of a callgrind output file.
counts() {
  callgrind_annotate --auto=no --threshold=100 "$1" | awk '
    /PROGRAM TOTALS/ { gsub(",", "", $1); all = $1 }
    /:__mem(cpy|move)|executor::(Pack|Unpack)Box\(/ { gsub(",", "", $1); copies += $1 }
    END { printf "%d %d\n", all, copies }'
}

# measure NAME ARGS...: one row of the table.
measure() {
  local name=$1 first repeated
  shift
  valgrind --tool=callgrind --callgrind-out-file="$dir/first" \
    --toggle-collect='*BenchPrepare*' --toggle-collect='*BenchFirstRun*' \
    "$BENCH" "$@" --hidden "$HIDDEN" --layers "$LAYERS" --reps 1 \
    2>/dev/null >"$dir/line"
  valgrind --tool=callgrind --callgrind-out-file="$dir/repeated" \
    --toggle-collect='*BenchRepeatedRun*' \
    "$BENCH" "$@" --hidden "$HIDDEN" --layers "$LAYERS" --reps 1 \
    2>/dev/null >/dev/null
  first=$(counts "$dir/first")
  repeated=$(counts "$dir/repeated")
  # shellcheck disable=SC2086
  set -- $first $repeated
  awk -v name="$name" -v fa="$1" -v fc="$2" -v ra="$3" -v rc="$4" 'BEGIN {
    printf "%-22s %14d %14d %14d | %12d %12d %10d | %7.3f%%\n", name, fa, fc,
      fa - fc, ra, rc, ra - rc, 100 * (ra - rc) / (fa - fc) }'
}

echo "cross_repeat_callgrind: $((LAYERS * 6)) f32 tensors, hidden $HIDDEN"
printf "%-22s %14s %14s %14s | %12s %12s %10s | %8s\n" scenario \
  "first: all" copies rest "repeated" copies rest "rest/rest"
measure "disjoint, rank 0 (src)" --scenario disjoint --rank 0
measure "disjoint, rank 4 (dst)" --scenario disjoint --rank 4
measure "colocated, rank 0" --scenario colocated --rank 0
