#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs a consumer against it with
# find_package(lockbridge) (on the shared and on the static libraries) and with pkg-config.
# Removes everything it made.
#   consume-installed.sh BUILD_DIR SOURCE_DIR
# LOCKBRIDGE_CONSUMER_LDFLAGS: what a consumer must add to link an instrumented build (--coverage).
set -euo pipefail
build=${1:?}
source=${2:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
ldflags=${LOCKBRIDGE_CONSUMER_LDFLAGS:-}
cmake -S "$source/tests/package/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
"$work/cmake-build/consumer_static"
if [[ $(ldd "$work/cmake-build/consumer_static") == *liblockbridge* ]]; then
  echo "consume-installed: consumer_static loads a shared lockbridge" >&2
  exit 1
fi
libdir=$(find "$work/prefix" -name lockbridge.pc -printf '%h\n')
PKG_CONFIG_PATH="$libdir" g++ -std=c++20 "$source/tests/package/consumer/main.cpp" -o "$work/pc-consumer" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs lockbridge-compat lockbridge) $ldflags
LD_LIBRARY_PATH="$libdir/.." "$work/pc-consumer"  # the shared libraries, not in the loader's path here
echo "installed package: find_package and pkg-config consumers work"
