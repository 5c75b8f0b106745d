#!/usr/bin/env bash
# scripts/gpu-bundle.sh and scripts/gpu-check.sh on a machine without a
# usable GPU: the bundle is at most 64 MiB and its binaries resolve every
# library from the bundle, the system's C/C++ runtime or CUDA/NCCL only;
# gpu-check.sh --quick runs up to its first GPU test and stops there with
# exit status 2 and a clear message; the bundle's cluster of NCCL agents
# does not start, saying why. The exec judge (gpu-exec-judge.sh)
# validates random plans on Gloo here, and reports a run that fails.
#   gpu_scripts_test.sh REPO_DIR BUILD_DIR
set -u
. "$(dirname "$0")/lib.sh"
repo="$1"
build="$2"
dir=$(mktemp -d)
pids=()
trap stop_started EXIT

out=$(RESHARD_BUILD="$build" bash "$repo/scripts/gpu-bundle.sh" "$dir/bundle" 2>&1)
check "gpu-bundle.sh succeeds ($out)" $?
bytes=$(du -sb "$dir/bundle" | cut -f1)
[ "$bytes" -le $((64 * 1024 * 1024)) ]
check "bundle within 64 MiB ($bytes bytes)" $?
for b in "$dir"/bundle/bin/*; do
  stray=$(LD_LIBRARY_PATH="$dir/bundle/lib" ldd "$b" | awk '$2 == "=>" {print $1, $3}' |
    grep -v -E "^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl|libasan|libubsan)\." |
    grep -v " $dir/bundle/lib/")
  [ -z "$stray" ]
  check "$(basename "$b") needs nothing outside the bundle, libc/libstdc++ and CUDA/NCCL ($stray)" $?
done

out=$(bash "$dir/bundle/gpu-check.sh" --quick --log "$dir/check.log" 2>&1)
status=$?
[ "$status" -eq 2 ]
check "gpu-check.sh --quick without a GPU exits 2 (got $status)" $?
contains "$out" "no usable GPU"
check "gpu-check.sh says there is no usable GPU" $?
contains "$out" "loaded: NCCL 2." && contains "$out" "CUDA runtime 13."
check "gpu-check.sh prints the NCCL and CUDA runtime it loaded ($out)" $?
contains "$(cat "$dir/check.log")" "stopping before the GPU tests"
check "the log says where it stopped" $?
! contains "$out" "== nccl_process_test"
check "no GPU test ran" $?
# The bundle's cluster of NCCL agents (gpu-check.sh's job check) refuses
# to start without a GPU, showing the agents' reason, and leaves nothing.
out=$(RESHARD_BIN="$dir/bundle/bin" LD_LIBRARY_PATH="$dir/bundle/lib" \
  RESHARD_CLUSTER_DIR="$dir/cluster" RESHARD_CLUSTER_STOP_SECONDS=5 \
  bash "$dir/bundle/local-cluster.sh" start 2 --backend nccl 2>&1)
status=$?
[ "$status" -eq 1 ] && contains "$out" "an agent exited" &&
  contains "$out" "--backend nccl: no usable GPU"
check "NCCL agents without a GPU: the cluster does not start, saying why (exit $status: $out)" $?
[ ! -f "$dir/cluster/pids" ]
check "the failed cluster left no processes on record" $?
judge="$dir/bundle/gpu-exec-judge.sh"
out=$(bash "$judge" --reshardctl "$build/client/reshardctl" --backend gloo --cases 6 2>&1)
check "the exec judge validates 6 random plans on Gloo ($out)" $?
contains "$out" "gloo): 6 of 6 validated, 0 failed"
check "the judge counts them" $?
cat > "$dir/fake-ctl" <<'EOF'
#!/bin/sh
[ "$1" = plan ] && exit 0
echo "the result did not validate"
exit 4
EOF
chmod +x "$dir/fake-ctl"
out=$(bash "$judge" --reshardctl "$dir/fake-ctl" --backend gloo --cases 2 2>&1)
status=$?
[ "$status" -eq 1 ]
check "the judge exits 1 when a run does not validate (got $status)" $?
contains "$out" "case 0 FAILED: " && contains "$out" "the result did not validate"
check "the judge names the failing case and its output ($out)" $?
contains "$out" "0 of 2 validated, 2 failed"
check "the judge counts the failures" $?
exit $fail
