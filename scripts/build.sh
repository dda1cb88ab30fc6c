#!/usr/bin/env bash
# Configures and builds lockbridge into a build directory.
#   scripts/build.sh [BUILD_DIR] [extra cmake arguments...]     default BUILD_DIR: build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j "$jobs"
