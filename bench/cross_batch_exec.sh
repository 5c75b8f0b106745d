#!/usr/bin/env bash
# A transformer-shaped model moved between meshes by `reshardctl exec
# --local 8 --offline --batch` (CrossRunner on Gloo rank processes,
# loopback, generated data, every tensor validated): the batch in 25 MiB
# exchanges and buckets, against the same runner tensor by tensor
# (--bucket_bytes 1: one exchange per tensor, one collective per tensor
# and step). The model and scenarios are bench/torch_cross_move_bench.py's:
# LAYERS layers of qkv, o, up, down (hidden H, 4H MLP) and two norms, f32;
# disjoint (2x2 DDP x TP on ranks 0-3 to 2x2 on 4-7, every weight sharded
# 4 ways) and colocated (2x4 FSDP x TP on 0-7 to 4x2 on the same ranks
# permuted, 4 replicas of TP = 2). Each run's time is its slowest rank's
# median of ITERS (after one warm-up); ROUNDS rounds alternate the order;
# prints each run, the medians of the rounds and their ratio.
#
#   bench/cross_batch_exec.sh [BUILD_DIR] [HIDDEN] [LAYERS] [ROUNDS] [ITERS]
set -u
BUILD="${1:-build}"
HIDDEN="${2:-512}"
LAYERS="${3:-33}"
ROUNDS="${4:-3}"
ITERS="${5:-3}"
CTL="$BUILD/client/reshardctl"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# model SCENARIO: the batch file (one line per tensor).
model() {
  local col row norm h=$HIDDEN
  case "$1" in
    disjoint) col='"from": "R,S(0)", "to": "S(0),S(0)"'
              row='"from": "R,S(1)", "to": "S(1),S(1)"'
              norm='"from": "R,R", "to": "R,R"' ;;
    colocated) col='"from": "S(1),S(0)", "to": "R,S(0)"'
               row='"from": "S(0),S(1)", "to": "R,S(1)"'
               norm='"from": "S(0),R", "to": "R,R"' ;;
  esac
  for ((i = 0; i < LAYERS; i++)); do
    printf '{"name": "layers.%d.qkv", "shape": [%d, %d], %s}\n' $i $((3 * h)) $h "$col"
    printf '{"name": "layers.%d.o", "shape": [%d, %d], %s}\n' $i $h $h "$row"
    printf '{"name": "layers.%d.up", "shape": [%d, %d], %s}\n' $i $((4 * h)) $h "$col"
    printf '{"name": "layers.%d.down", "shape": [%d, %d], %s}\n' $i $h $((4 * h)) "$row"
    printf '{"name": "layers.%d.norm1", "shape": [128, %d], %s}\n' $i $h "$norm"
    printf '{"name": "layers.%d.norm2", "shape": [128, %d], %s}\n' $i $h "$norm"
  done
}

declare -A MESHES=(
  [disjoint]="--src_mesh dp=2,tp=2 --dst_mesh a=2,b=2 --dst_ranks 4,5,6,7"
  [colocated]="--src_mesh fsdp=2,tp=4 --dst_mesh a=4,b=2 --dst_ranks 7,5,3,1,6,4,2,0"
)

# run SCENARIO BOUND: the slowest rank's median seconds of one exec.
run() {
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$CTL" exec --local 8 --offline ${MESHES[$1]} \
    --batch "$dir/$1.jsonl" --bucket_bytes "$2" --iters "$ITERS" --warmup 1 \
    --timeout_seconds 120 --json |
    jq -e -r 'if .validated then .seconds_median else error("not validated") end'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for scenario in disjoint colocated; do
  model "$scenario" >"$dir/$scenario.jsonl"
  : >"$dir/batched" && : >"$dir/alone"
  for ((r = 0; r < ROUNDS; r++)); do
    order=(batched alone)
    ((r % 2)) && order=(alone batched)
    for kind in "${order[@]}"; do
      bound=25MiB
      [ "$kind" = alone ] && bound=1
      s=$(run "$scenario" "$bound") || { echo "$scenario $kind: failed" >&2; exit 1; }
      echo "$scenario round $r $kind: $s s"
      echo "$s" >>"$dir/$kind"
    done
  done
  b=$(median <"$dir/batched")
  a=$(median <"$dir/alone")
  printf '%s: batched %.1f ms, tensor by tensor %.1f ms (%.2fx)\n' \
    "$scenario" "$(echo "$b * 1000" | bc -l)" "$(echo "$a * 1000" | bc -l)" \
    "$(echo "$a / $b" | bc -l)"
done
