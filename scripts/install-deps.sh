#!/usr/bin/env bash
# The single source of Reshard's build and test dependencies (Debian 12 packages only).
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang-format
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libspdlog-dev libfmt-dev
  libgloo-dev
  prometheus-cpp-dev libcivetweb-dev civetweb prometheus
  curl jq openssl
  python3  # tests/docs/function_lengths_check.py
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
validate="$(dirname "$0")/../deploy/validate"
# (Absent in an image build's first stage, which copies this script alone.)
if [ -d "$validate" ] && [ ! -d "$validate/node_modules/kubernetes-models" ]; then
  if command -v npm >/dev/null; then
    echo "install-deps: npm ci in deploy/validate" >&2
    (cd "$validate" && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "install-deps: no npm: deploy/ manifest tests will fail" >&2
  fi
fi
