#!/usr/bin/env bash
# The exec judge: random plans from every planner run end to end by
# `reshardctl exec` on real ranks, each validated by exec itself (every
# rank's result against the data rule, and its checksums: docs/DESIGN.md
# §6.2; exit 0 only when every rank validated). Cases: meshes of 2 to 8
# ranks (flattened groups on some), uneven 1-D to 3-D shapes, every dtype,
# source and destination placements drawn at random (Partial sum, avg and
# max included), planners in turn. A draw the planner refuses is drawn
# again; a run that fails or does not validate is a failure, printed with
# the command that reproduces it. gpu-check.sh runs it on NCCL; the tests
# run a few cases on Gloo so the judge itself is checked on every machine.
#
#   gpu-exec-judge.sh --reshardctl PATH [--backend nccl|gloo] [--cases N]
#                     [--seed S]
# Exits 0 when every case validated, 1 when one did not, 2 on bad flags.
set -uo pipefail

CTL=""
BACKEND=nccl
CASES=50
SEED=26
while (($#)); do
  case "$1" in
    --reshardctl) CTL="$2"; shift ;;
    --backend) BACKEND="$2"; shift ;;
    --cases) CASES="$2"; shift ;;
    --seed) SEED="$2"; shift ;;
    *) echo "gpu-exec-judge: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ ! -x "$CTL" ]]; then
  echo "gpu-exec-judge: --reshardctl must name the reshardctl binary" >&2
  exit 2
fi

RANDOM=$SEED
MESHES=("A=2" "A=3" "A=4" "A=2,B=2" "A=2,B=3" "A=3,B=2" "A=8" "A=2,B=4"
        "A=2,B=2,C=2" "A=4,B=2")
DTYPES=(f32 f64 bf16 f16 i32 i64)
PLANNERS=(optimal torch_graph torch_greedy)
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }

# One placement per mesh dim; tensor dims 0..rank-1.
placements() {
  local dims=$1 rank=$2 partial=$3 out=() d
  for ((d = 0; d < dims; d++)); do
    case $((RANDOM % 4)) in
      0) out+=("R") ;;
      1|2) out+=("S($((RANDOM % rank)))") ;;
      3) out+=("$partial") ;;
    esac
  done
  local IFS=,
  echo "${out[*]}"
}

draw() {
  mesh=$(pick "${MESHES[@]}")
  local dims
  dims=$(tr -cd '=' <<< "$mesh" | wc -c)
  local rank=$((1 + RANDOM % 3)) sizes=() d
  for ((d = 0; d < rank; d++)); do sizes+=($((1 + RANDOM % 13))); done
  shape=$(IFS=,; echo "${sizes[*]}")
  dtype=$(pick "${DTYPES[@]}")
  local partial
  partial=$(pick "P(sum)" "P(sum)" "P(avg)" "P(max)")
  from=$(placements "$dims" "$rank" "$partial")
  to=$(placements "$dims" "$rank" "$partial")
  ranks=1
  for d in $(tr ',' ' ' <<< "$mesh"); do ranks=$((ranks * ${d#*=})); done
  extra=()
  if ((dims > 1 && RANDOM % 2)); then
    extra=(--flatten "$(cut -d, -f1-2 <<< "$mesh" | sed 's/=[0-9]*//g')")
  fi
}

passed=0
failed=0
draws=0
for ((c = 0; c < CASES; c++)); do
  planner=${PLANNERS[c % ${#PLANNERS[@]}]}
  while :; do
    draw
    draws=$((draws + 1))
    if ((draws > 40 * CASES)); then
      echo "gpu-exec-judge: the planners refused $draws draws; giving up" >&2
      exit 1
    fi
    flags=(--offline --mesh "$mesh" "${extra[@]}" --shape "$shape"
           --dtype "$dtype" --from "$from" --to "$to" --planner "$planner")
    "$CTL" plan "${flags[@]}" > /dev/null 2>&1 && break
  done
  cmd=("$CTL" exec --local "$ranks" --backend "$BACKEND" --iters 1
       --warmup 0 --timeout_seconds 60 "${flags[@]}")
  start=$SECONDS
  if out=$("${cmd[@]}" 2>&1); then
    passed=$((passed + 1))
    echo "case $c ($planner, $ranks ranks, $dtype $shape, $from -> $to): validated in $((SECONDS - start)) s"
  else
    failed=$((failed + 1))
    echo "case $c FAILED: $(printf '%q ' "${cmd[@]}")"
    echo "$out" | tail -5
  fi
done
echo "gpu-exec-judge ($BACKEND): $passed of $CASES validated, $failed failed"
((failed == 0))
