#!/usr/bin/env bash
# Installs the build tree into a temporary prefix; checks that the installed
# headers are exactly include/installed_headers.txt and include only one
# another (and Abseil's and the standard library's); then builds and runs a
# downstream project that finds it with find_package(reshard), and the
# executor consumer through pkg-config alone.
set -euo pipefail
BUILD="$1"
LINK_FLAGS="${2:-}"
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$HERE/consumer"
LIST="$HERE/../../include/installed_headers.txt"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$BUILD" --prefix "$dir/prefix" >/dev/null
inc="$dir/prefix/include/reshard"

expected=$(grep -v '^#' "$LIST" | sed 's|^include/reshard/||' | sort)
installed=$(cd "$inc" && find . -type f | sed 's|^\./||' | sort)
if [ "$expected" != "$installed" ]; then
  echo "installed headers differ from include/installed_headers.txt:"
  diff <(echo "$expected") <(echo "$installed") || true
  exit 1
fi
[ "$(echo "$expected" | wc -l)" -le 25 ] || { echo "more than 25 installed headers"; exit 1; }
for absent in gen proto client; do
  [ ! -e "$inc/$absent" ] || { echo "installed: $absent/"; exit 1; }
done
# Every quoted include of an installed header is installed too.
while read -r header; do
  for included in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$inc/$header"); do
    case "$included" in absl/*) continue ;; esac
    [ -f "$inc/$included" ] || [ -f "$dir/prefix/include/$included" ] ||
      { echo "$header includes $included, which is not installed"; exit 1; }
  done
done <<<"$installed"
if grep -rlE 'grpc|\.pb\.h' "$inc"; then
  echo "installed headers mention gRPC or generated code"; exit 1
fi

cmake -S "$SRC" -B "$dir/build" -DCMAKE_PREFIX_PATH="$dir/prefix" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK_FLAGS" >/dev/null
cmake --build "$dir/build" -j2 >/dev/null
out=$("$dir/build/consumer")
[ "$out" = "all_reduce 1" ] || { echo "unexpected output: $out"; exit 1; }
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
echo "install test ok ($(echo "$installed" | wc -l) headers)"
