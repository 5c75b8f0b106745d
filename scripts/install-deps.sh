#!/usr/bin/env bash
# The single source of Reshard's build and test dependencies:
#   - Debian 12 packages (apt);
#   - CUDA and NCCL for the NCCL backend, from NVIDIA's pinned PyPI wheels,
#     laid out as one toolkit prefix ($RESHARD_TOOLS/cuda) that CMake and
#     nvcc accept;
#   - the project's Python environment ($RESHARD_TOOLS/venv, from Debian's
#     python3) with real PyTorch, from the pinned requirements.txt.
# Idempotent: each part does nothing when what it installs is there already
# (a second run takes seconds).
#
#   scripts/install-deps.sh [--no-python]
#
# --no-python skips the Python environment (image builds need only the C++
# side). RESHARD_TOOLS (default /opt/reshard) is where the CUDA prefix and
# the environment live: outside any work tree, so every clone shares them.
set -euo pipefail

WITH_PYTHON=1
for arg in "$@"; do
  case "$arg" in
    --no-python) WITH_PYTHON=0 ;;
    *) echo "install-deps: unknown flag $arg (known: --no-python)" >&2; exit 2 ;;
  esac
done
HERE="$(cd "$(dirname "$0")" && pwd)"
TOOLS="${RESHARD_TOOLS:-/opt/reshard}"

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang-format
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libspdlog-dev libfmt-dev
  libgloo-dev
  prometheus-cpp-dev libcivetweb-dev civetweb prometheus
  curl jq openssl libssl-dev  # libssl-dev: TLS files checked at start-up
  python3 python3-venv python3-dev  # the project environment (below)
  iproute2  # ip netns, veth and tc tbf: local-cluster.sh --hosts (emulated hosts)
  nodejs
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# deploy/ validation tools from npm (Kubernetes schemas, Dockerfile linter),
# pinned by deploy/validate/package-lock.json; skipped when already there.
validate="$HERE/../deploy/validate"
# (Absent in an image build's first stage, which copies this script alone.)
if [ -d "$validate" ] && [ ! -d "$validate/node_modules/kubernetes-models" ]; then
  if command -v npm >/dev/null; then
    echo "install-deps: npm ci in deploy/validate" >&2
    (cd "$validate" && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "install-deps: no npm: deploy/ manifest tests will fail" >&2
  fi
fi

# CUDA and NCCL: the wheels the NCCL backend builds against. The C++ side
# pins its own NCCL, apart from the one torch's wheel brings, so the wheels
# go into a staging folder outside any Python environment (--no-deps
# --target). ToolkitPinsTest (tests/executor/toolkit_pins_test.cc) compares
# these pins with what the build found and loads.
CUDA_WHEELS=(
  nvidia-cuda-nvcc==13.0.88
  nvidia-cuda-crt==13.0.88
  nvidia-nvvm==13.0.88
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-cccl==13.0.85
  nvidia-nccl-cu13==2.28.9
)

# Free space on the filesystem holding $1, in GiB, against $2 needed.
need_disk() {
  local dir="$1" gib="$2" what="$3" free
  mkdir -p "$dir"
  free=$(($(df -Pk "$dir" | awk 'NR == 2 {print $4}') / 1024 / 1024))
  if ((free < gib)); then
    echo "install-deps: $what needs about $gib GiB free at $dir; only $free GiB is free" >&2
    exit 1
  fi
}

# Lays the wheels out as one toolkit prefix: bin/nvcc (whose nvcc.profile
# reads nvvm/ and targets/x86_64-linux/{include,lib} beside bin/),
# include/ with cccl and nccl.h, lib/ with the unversioned links a linker
# needs (the wheels ship only libcudart.so.13 and libnccl.so.2). Built
# beside the old prefix and swapped in whole, so an interrupted run leaves
# the old one or none, never half of one.
install_cuda_prefix() {
  local prefix="$1" pins="${CUDA_WHEELS[*]}"
  if [[ -x "$prefix/bin/nvcc" && "$(cat "$prefix/.pins" 2>/dev/null)" == "$pins" ]]; then
    return
  fi
  echo "install-deps: CUDA and NCCL wheels into $prefix ($pins)" >&2
  need_disk "$(dirname "$prefix")" 2 "the CUDA prefix"
  local stage
  stage=$(mktemp -d)
  # A throwaway pip from Debian's python3, whose own pip (where present)
  # refuses to install outside a virtual environment.
  /usr/bin/python3 -m venv "$stage/pip"
  "$stage/pip/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-cache-dir \
    --target "$stage/wheels" "${CUDA_WHEELS[@]}"
  local cu="$stage/wheels/nvidia/cu13" nccl="$stage/wheels/nvidia/nccl"
  local new="$prefix.new"
  rm -rf "$new"
  mkdir -p "$new/targets/x86_64-linux"
  cp -a "$cu/bin" "$cu/include" "$cu/lib" "$cu/nvvm" "$new/"
  cp -a "$nccl/include/." "$new/include/"
  cp -a "$nccl/lib/." "$new/lib/"
  ln -s libcudart.so.13 "$new/lib/libcudart.so"
  ln -s libnccl.so.2 "$new/lib/libnccl.so"
  ln -s ../../include "$new/targets/x86_64-linux/include"
  ln -s ../../lib "$new/targets/x86_64-linux/lib"
  (cd "$stage/wheels" && ls -d ./*.dist-info) > "$new/wheels.txt"
  echo "$pins" > "$new/.pins"
  rm -rf "$prefix" "$stage"
  mv "$new" "$prefix"
}
install_cuda_prefix "$TOOLS/cuda"

# The project's Python: a virtual environment from Debian's python3 and
# requirements.txt (every package pinned with ==). Redone only when the
# requirements change; PyPI's Linux torch is a CUDA build (about 3 GB to
# download, 5.5 GB installed) that runs on the CPU here.
install_venv() {
  local venv="$1" requirements="$2" digest
  digest=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [[ -x "$venv/bin/python" && "$(cat "$venv/.requirements" 2>/dev/null)" == "$digest" ]]; then
    return
  fi
  echo "install-deps: Python environment $venv from $requirements" >&2
  need_disk "$(dirname "$venv")" 9 "the Python environment (torch)"
  [[ -x "$venv/bin/python" ]] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
    -r "$requirements"
  echo "$digest" > "$venv/.requirements"
}
if ((WITH_PYTHON)); then
  install_venv "$TOOLS/venv" "$HERE/../requirements.txt"
fi
