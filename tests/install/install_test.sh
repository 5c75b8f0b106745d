#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a
# downstream project that finds it with find_package(reshard) and checks
# the pkg-config file.
set -euo pipefail
BUILD="$1"
LINK_FLAGS="${2:-}"
SRC="$(cd "$(dirname "$0")" && pwd)/consumer"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$BUILD" --prefix "$dir/prefix" >/dev/null
# Only public headers are installed: the client's has no gRPC in it, and
# neither the wire (generated code, proto/) nor reshardctl's internals are
# there.
[ -f "$dir/prefix/include/reshard/client.h" ] || { echo "no reshard/client.h"; exit 1; }
if grep -rlE 'grpc|\.pb\.h' "$dir/prefix/include"; then
  echo "installed headers mention gRPC or generated code"; exit 1
fi
for absent in gen proto client; do
  [ ! -e "$dir/prefix/include/reshard/$absent" ] || { echo "installed: $absent/"; exit 1; }
done
cmake -S "$SRC" -B "$dir/build" -DCMAKE_PREFIX_PATH="$dir/prefix" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK_FLAGS" >/dev/null
cmake --build "$dir/build" -j2 >/dev/null
out=$("$dir/build/consumer")
[ "$out" = "P(sum)RP(sum)-->RRR" ] || { echo "unexpected output: $out"; exit 1; }
PKG_CONFIG_PATH="$dir/prefix/lib/pkgconfig" pkg-config --cflags --libs reshard | grep -q -- "-lreshard_client"
out=$("$dir/build/executor_consumer")
[ "$out" = "validated" ] || { echo "executor consumer: $out"; exit 1; }
# The executor through pkg-config alone.
PKG_CONFIG_PATH="$dir/prefix/lib/pkgconfig" g++ -std=c++20 \
  "$SRC/executor_main.cc" -o "$dir/pc_consumer" $LINK_FLAGS \
  $(PKG_CONFIG_PATH="$dir/prefix/lib/pkgconfig" pkg-config \
      --define-variable=prefix="$dir/prefix" --cflags --libs reshard-executor) -lpthread
out=$("$dir/pc_consumer")
[ "$out" = "validated" ] || { echo "pkg-config consumer: $out"; exit 1; }
echo "install test ok"
