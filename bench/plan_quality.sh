#!/usr/bin/env bash
# Measured plan quality on an emulated two-tier cluster (docs/notes/2026-11-27-plan-quality.md,
# "Measured plan quality"): 8 Gloo agents on 2 emulated hosts of 4 ranks
# (scripts/local-cluster.sh --hosts 2, --inter_mbit between them); each
# corpus mesh calibrated by `reshardctl job calibrate` (its fit, and its
# error per op on sizes the fit did not see); then plan_quality_bench runs
# the committed corpus (bench/data/plan_quality_corpus.tsv) with the
# calibrated links. Needs CAP_NET_ADMIN and a build (RESHARD_BUILD, default
# build/). Everything goes to OUT_DIR (default /tmp/plan-quality):
# calibrate-MESH.json, links-MESH, plan_quality.md.
#   bench/plan_quality.sh [--inter_mbit 800] [--rounds 10] [--min_ms 1000]
#                         [--max_bytes B]
#                         [--out DIR] [--calibrate_only | --links_from DIR]
#                         [--only ID,ID...]
# --links_from DIR reuses an earlier run's links-MESH files (same cluster
# settings) instead of calibrating again. --only runs just those requests
# of the corpus (a re-measurement; OUT/corpus.tsv holds them). --min_ms:
# a plan runs more than --rounds rounds (up to 60) until its rounds add up
# to this many ms, so that short plans' medians hold too.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${RESHARD_BUILD:-$ROOT/build}"
export RESHARD_BUILD="$BUILD"
CLUSTER="$ROOT/scripts/local-cluster.sh"
CTL="$BUILD/client/reshardctl"
BENCH="$BUILD/bench/plan_quality_bench"
MBIT=800
ROUNDS=10
MIN_MS=1000
MAX_BYTES=$((64 << 20))
OUT=/tmp/plan-quality
CALIBRATE_ONLY=0
LINKS_FROM=""
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --inter_mbit) MBIT="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --min_ms) MIN_MS="$2"; shift 2 ;;
    --max_bytes) MAX_BYTES="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --calibrate_only) CALIBRATE_ONLY=1; shift ;;
    --links_from) LINKS_FROM="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    *) echo "plan_quality: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
export RESHARD_CLUSTER_DIR="$OUT/cluster"
trap '"$CLUSTER" stop >/dev/null 2>&1' EXIT

server=$("$CLUSTER" start 8 --hosts 2 --inter_mbit "$MBIT" --job pq) || exit 1
in_cluster() { "$CLUSTER" exec -- "$@"; }

# calibrate MESH FLAGS...: the mesh's links, and its held-out errors.
calibrate() {
  local mesh="$1"
  shift
  in_cluster "$CTL" --server "$server" --deadline_seconds 600 job calibrate pq \
    "$@" --max_bytes "$MAX_BYTES" --links_file "$OUT/links-$mesh" --json \
    > "$OUT/calibrate-$mesh.json" 2> "$OUT/calibrate-$mesh.log" || {
    tail -3 "$OUT/calibrate-$mesh.log" >&2
    exit 1
  }
  echo "== $mesh: links $(tr '\n' ' ' < "$OUT/links-$mesh")"
  jq -r '.groups[] | "\(.group): \(.bandwidth_gbps) GB/s, \(.latency_us) us/round, fit err \(.median_abs_error * 100 | floor)%, held-out err by op \(.held_out_error | to_entries | map("\(.key) \(if .value == null then "-" else (.value * 100 | floor | tostring) + "%" end)") | join(", ")), dims err \(.dims_error * 100 | floor)%"' \
    "$OUT/calibrate-$mesh.json"
}
if [ -n "$LINKS_FROM" ]; then
  cp "$LINKS_FROM"/links-dp_tp "$LINKS_FROM"/links-hsdp_tp "$OUT/" || exit 1
else
  calibrate dp_tp --mesh dp=2,tp=4 --flatten dp,tp
  calibrate hsdp_tp --mesh dpr=2,dps=2,tp=2 --flatten dpr,dps --flatten dps,tp
fi
[ "$CALIBRATE_ONLY" -eq 1 ] && exit 0

CORPUS="$ROOT/bench/data/plan_quality_corpus.tsv"
if [ -n "$ONLY" ]; then
  awk -v only=",$ONLY," '/^#/ || index(only, "," $1 ",")' "$CORPUS" \
    > "$OUT/corpus.tsv"
  CORPUS="$OUT/corpus.tsv"
fi
in_cluster "$BENCH" --server "$server" --job pq --corpus "$CORPUS" \
  --links "dp_tp=$OUT/links-dp_tp" --links "hsdp_tp=$OUT/links-hsdp_tp" \
  --rounds "$ROUNDS" --min_ms "$MIN_MS" --iters 1 --warmup 1 | tee "$OUT/plan_quality.md"
