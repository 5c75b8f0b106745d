#!/usr/bin/env bash
# Gathers what a GPU machine needs to check the NCCL backend into OUT_DIR,
# from a build made here: the NCCL test binaries, reshardctl (the exec
# judge runs it), reshard-planner and reshard-agent (a job on NCCL agents,
# started by local-cluster.sh) and the two GPU benchmarks, stripped, in OUT_DIR/bin,
# every shared library they need that such a machine lacks in OUT_DIR/lib
# (Abseil, Gloo and what Gloo pulls in), and gpu-check.sh. The GPU machine
# brings its own glibc, libstdc++, driver, CUDA runtime and NCCL, so those
# stay out (docs/notes/2026-11-26-gpu-nccl-communicators.md, "On a GPU: NCCL communicators").
#
#   scripts/gpu-bundle.sh OUT_DIR        (RESHARD_BUILD: the build, default build/)
#
# Fails, saying why, when the build has no NCCL tests (CUDA or NCCL were not
# found at configure time) or the bundle exceeds 64 MiB.
set -euo pipefail

OUT="${1:?usage: scripts/gpu-bundle.sh OUT_DIR}"
BUILD="${RESHARD_BUILD:-build}"
BINARIES=(tests/nccl_test tests/nccl_process_test tests/nccl_logic_test
          tests/device_copy_table_test tests/device_copy_gpu_test
          client/reshardctl server/reshard-planner agent/reshard-agent)
# Gathered when the build has them (-DRESHARD_BUILD_BENCH=OFF builds none).
OPTIONAL=(bench/device_copy_bench bench/runner_overhead_bench)
MAX_BYTES=$((64 * 1024 * 1024))
# Libraries the GPU machine has itself (or must use its own of).
SYSTEM_LIBS='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl)\.'

for b in "${BINARIES[@]}"; do
  if [[ ! -x "$BUILD/$b" ]]; then
    echo "gpu-bundle: $BUILD/$b is missing: build with CUDA and NCCL found (cmake --build $BUILD)" >&2
    exit 1
  fi
done
for b in "${OPTIONAL[@]}"; do
  if [[ -x "$BUILD/$b" ]]; then
    BINARIES+=("$b")
  else
    echo "gpu-bundle: $BUILD/$b is not built; the bundle goes without it" >&2
  fi
done
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib"
for b in "${BINARIES[@]}"; do
  strip -o "$OUT/bin/$(basename "$b")" "$BUILD/$b"
  ldd "$BUILD/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
    while read -r name path; do
      if [[ ! "$name" =~ $SYSTEM_LIBS && ! -e "$OUT/lib/$name" ]]; then
        cp -L "$path" "$OUT/lib/$name"
      fi
    done
done
strip --strip-unneeded "$OUT"/lib/*.so* 2>/dev/null || true
cp "$(dirname "$0")/gpu-check.sh" "$(dirname "$0")/gpu-exec-judge.sh" \
  "$(dirname "$0")/local-cluster.sh" "$(dirname "$0")/emulated-network.sh" \
  "$(dirname "$0")/tls-certs.sh" \
  "$OUT/"
bytes=$(du -sb "$OUT" | cut -f1)
if ((bytes > MAX_BYTES)); then
  echo "gpu-bundle: $OUT holds $bytes bytes, above 64 MiB" >&2
  exit 1
fi
echo "gpu-bundle: $OUT: ${#BINARIES[@]} binaries, $(ls "$OUT/lib" | wc -l) libraries, $bytes bytes"
