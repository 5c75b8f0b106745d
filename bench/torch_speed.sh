#!/usr/bin/env bash
# PyTorch's own planners against Reshard's torch modes and optimal on the same
# random requests, in the same run (docs/PERFORMANCE.md, headline):
#   bench/torch_speed.sh [BUILD] [COUNT] [SEED]
# Records COUNT (default 2000) requests with the installed PyTorch
# (tests/python/torch_planner_record.py), then times Reshard on each.
set -euo pipefail
build="${1:-build}"
count="${2:-2000}"
seed="${3:-20261202}"
here="$(cd "$(dirname "$0")/.." && pwd)"
python="${RESHARD_TOOLS:-/opt/reshard}/venv/bin/python"
record="$(mktemp --suffix=.jsonl)"
trap 'rm -f "$record"' EXIT
"$python" "$here/tests/python/torch_planner_record.py" --seed "$seed" \
  --count "$count" --out "$record"
"$build/bench/torch_speed" "$record" 5
