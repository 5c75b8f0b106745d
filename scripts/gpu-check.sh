#!/usr/bin/env bash
# Checks the NCCL backend on a GPU machine from a bundle that
# scripts/gpu-bundle.sh made (the machine needs only its driver, CUDA
# runtime and NCCL): every NCCL test, one GPU per rank where there are
# several GPUs and several ranks on one GPU (one process each, its own
# NCCL host) where there is one, a killed rank included. Logs as it goes,
# with times, to stdout and LOG (a partial log still says what ran).
#
#   gpu-check.sh [--quick] [--bundle DIR] [--log FILE]
#
# --quick (about 2 minutes) runs the NCCL tests (a killed rank included)
# and the exec judge on 20 random plans (gpu-exec-judge.sh: reshardctl exec
# --backend nccl, every rank validated with its checksums). The full mode
# (about 8 minutes) adds the copy kernel against the host on 10,000+ copy
# programs (device_copy_gpu_test), the judge on 50 plans (not 20), a batch of
# 40 tensors bucketed and tensor by tensor, compute-sanitizer memcheck over
# the copy kernel and over a small exec, 200 small tensors bucketed against
# tensor by tensor (at least 5x), a job on 4 NCCL agents (local-cluster.sh
# --backend nccl), then device_copy_bench (local steps against cudaMemcpy)
# and runner_overhead_bench (a one-step run's all_gather against the raw
# NCCL call). Exits 0 when every test passed, 1 when one failed, 2 when no
# GPU or NCCL is usable (saying which), before running any test.
set -uo pipefail

MODE=full
BUNDLE="$(cd "$(dirname "$0")" && pwd)"
LOG=""
while (($#)); do
  case "$1" in
    --quick) MODE=quick ;;
    --bundle) BUNDLE="$2"; shift ;;
    --log) LOG="$2"; shift ;;
    *) echo "gpu-check: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
LOG="${LOG:-$BUNDLE/gpu-check.log}"
: > "$LOG"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }

# The machine's own NCCL and CUDA runtime.
find_lib() {
  find /usr /opt /usr/local -name "$1" -not -path '*/stubs/*' 2>/dev/null | head -1
}
nccl=$(find_lib 'libnccl.so.2')
cudart=$(find_lib 'libcudart.so.13')
[[ -z "$cudart" ]] && cudart=$(find_lib 'libcudart.so.12')
log "gpu-check ($MODE) bundle=$BUNDLE nccl=${nccl:-none} cudart=${cudart:-none}"
if [[ -z "$nccl" || -z "$cudart" ]]; then
  log "gpu-check: no NCCL or CUDA runtime on this machine; nothing to check"
  exit 2
fi
export LD_LIBRARY_PATH="$BUNDLE/lib:$(dirname "$nccl"):$(dirname "$cudart")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
fi

# Which NCCL and CUDA runtime the binaries load here (needs no GPU).
versions=$("$BUNDLE/bin/nccl_test" --gtest_filter='NcclVersionsTest.*' 2>&1 | grep '^versions: ')
log "loaded: ${versions#versions: }"

# The first GPU test decides whether a GPU is usable at all.
gpus=$("$BUNDLE/bin/nccl_test" --gtest_filter='NcclNoGpuTest.*' 2>&1 | tee -a "$LOG" /dev/stderr | grep -c 'a GPU is usable')
if [[ "$gpus" == 0 ]]; then
  log "gpu-check: no usable GPU (nccl_test's probe above says why); stopping before the GPU tests"
  exit 2
fi

failed=0
run() {
  local name="$1"; shift
  log "== $name"
  local start=$SECONDS
  if "$@" 2>&1 | tee -a "$LOG"; then
    log "== $name: passed in $((SECONDS - start)) s"
  else
    log "== $name: FAILED after $((SECONDS - start)) s"
    failed=1
  fi
}
CTL="$BUNDLE/bin/reshardctl"
# A batch of 40 tensors of uneven shapes and mixed dtypes moving between
# layouts on a 2x2 mesh, as a model's weights move.
batch_file() {
  local t dtypes=(f32 bf16 f16 f64 i32 i64)
  local layouts=('"from": "S(0),R", "to": "R,S(1)"'
                 '"from": "P(sum),S(0)", "to": "R,R"'
                 '"from": "S(1),S(0)", "to": "S(0),S(1)"')
  for ((t = 0; t < 40; t++)); do
    echo "{\"name\": \"w$t\", \"shape\": [$((3 + t % 7)), $((5 + t % 11))], \"dtype\": \"${dtypes[t % 6]}\", ${layouts[t % 3]}}"
  done
}

# A batch's median seconds per run, from exec --json (the top-level figure,
# after the buckets' own).
median_of() {
  "$@" | grep -o '"seconds_median": [^,]*, "tensors"' |
    sed 's/"seconds_median": //; s/, "tensors"//'
}
# Bucketed against tensor by tensor on 200 small tensors: bucketing must be
# at least 5x faster (BACKEND: nccl; gloo to try the check without a GPU).
bucketing_speedup() {
  local file="$BUNDLE/small.jsonl" t bucketed each
  local flags=(exec --local 4 --backend "${BACKEND:-nccl}" --offline --batch
               "$file" --mesh A=2,B=2 --iters 10 --json)
  for ((t = 0; t < 200; t++)); do
    echo "{\"name\": \"s$t\", \"shape\": [8, $((16 + t % 5))], \"dtype\": \"bf16\", \"from\": \"S(0),R\", \"to\": \"R,R\"}"
  done > "$file"
  bucketed=$(median_of "$CTL" "${flags[@]}") || return 1
  each=$(median_of "$CTL" "${flags[@]}" --no-bucketing) || return 1
  awk -v b="$bucketed" -v e="$each" 'BEGIN {
    if (b <= 0 || e <= 0) { print "no times read"; exit 1 }
    printf "bucketed %.1f us, tensor by tensor %.1f us per run: %.1fx (at least 5x wanted)\n",
      b * 1e6, e * 1e6, e / b
    exit !(e / b >= 5) }'
}

# A job on 4 NCCL agents under a local planner (local-cluster.sh): a plan
# with a flattened group, the same plan again (communicators reused), a
# batch; every run validated. The cluster is stopped whatever happens.
nccl_job() {
  local dir="$BUNDLE/cluster" server rc=0
  export RESHARD_BIN="$BUNDLE/bin" RESHARD_CLUSTER_DIR="$dir"
  server=$(bash "$BUNDLE/local-cluster.sh" start 4 --backend nccl --job g) ||
    { cat "$dir"/*.log 2>/dev/null | tail -n 20; return 1; }
  local job=("$CTL" --server "$server" --job_token_file "$dir/job-token" job run g)
  local plan=(--mesh A=2,B=2 --flatten A,B --from 'P(sum),S(0)' --to 'S(1),R'
              --iters 3 --warmup 1)
  "${job[@]}" "${plan[@]}" --shape 9,5 --dtype bf16 || rc=1
  "${job[@]}" "${plan[@]}" --shape 1000,37 --dtype f32 || rc=1
  "${job[@]}" --batch "$BUNDLE/batch.jsonl" --mesh A=2,B=2 --iters 2 || rc=1
  [[ $rc == 0 ]] || tail -n 20 "$dir"/agent-0.log
  bash "$BUNDLE/local-cluster.sh" stop || rc=1
  return $rc
}

run "nccl_logic_test" "$BUNDLE/bin/nccl_logic_test"
run "nccl_test" "$BUNDLE/bin/nccl_test"
run "nccl_process_test" "$BUNDLE/bin/nccl_process_test"
if [[ "$MODE" == quick ]]; then
  run "exec judge (20 plans)" bash "$BUNDLE/gpu-exec-judge.sh" \
    --reshardctl "$CTL" --cases 20 --seed 1
else
  run "device_copy_table_test" "$BUNDLE/bin/device_copy_table_test"
  run "device_copy_gpu_test" "$BUNDLE/bin/device_copy_gpu_test"
  run "exec judge (50 plans)" bash "$BUNDLE/gpu-exec-judge.sh" \
    --reshardctl "$CTL" --cases 50 --seed 2
  batch_file > "$BUNDLE/batch.jsonl"
  run "batch of 40 tensors, bucketed" "$CTL" exec --local 4 --backend nccl \
    --offline --batch "$BUNDLE/batch.jsonl" --mesh A=2,B=2 --iters 5
  run "batch of 40 tensors, tensor by tensor" "$CTL" exec --local 4 \
    --backend nccl --offline --batch "$BUNDLE/batch.jsonl" --mesh A=2,B=2 \
    --no-bucketing --iters 5
  if command -v compute-sanitizer >/dev/null; then
    run "device_copy_gpu_test under compute-sanitizer memcheck" \
      env RESHARD_DEVICE_COPY_PROGRAMS=300 compute-sanitizer --tool memcheck \
      --error-exitcode 1 "$BUNDLE/bin/device_copy_gpu_test"
    # NCCL's own CUDA calls fail inside it as it probes (error 209 from
    # cudaFuncGetAttributes, seen on an H200 with the machine's NCCL 2.28):
    # API errors stay out, so memory errors alone fail this check.
    run "a small exec under compute-sanitizer memcheck" \
      compute-sanitizer --tool memcheck --target-processes all \
      --report-api-errors no --error-exitcode 1 "$CTL" exec --local 2 --backend nccl --offline \
      --mesh A=2 --shape 9,13 --dtype bf16 --from 'S(0)' --to 'S(1)' \
      --iters 2 --warmup 0
  else
    log "compute-sanitizer not found: memcheck skipped"
  fi
  run "200 small tensors: bucketed vs tensor by tensor" bucketing_speedup
  run "job runs on 4 NCCL agents (reshard-agent --backend nccl)" nccl_job
  if [[ -x "$BUNDLE/bin/device_copy_bench" ]]; then
    run "device_copy_bench (local steps vs cudaMemcpy)" \
      "$BUNDLE/bin/device_copy_bench" --iters 20
  else
    log "device_copy_bench not in the bundle (a build without benches): skipped"
  fi
  if [[ -x "$BUNDLE/bin/runner_overhead_bench" ]]; then
    run "runner_overhead_bench (a run's all_gather vs the raw call)" \
      "$BUNDLE/bin/runner_overhead_bench" --iters 200
  else
    log "runner_overhead_bench not in the bundle: skipped"
  fi
fi
log "gpu-check ($MODE): $([[ $failed == 0 ]] && echo 'all passed' || echo 'FAILED')"
exit "$failed"
