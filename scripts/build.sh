#!/usr/bin/env bash
# Configures and builds lockbridge into a build directory.
#   scripts/build.sh [BUILD_DIR] [extra cmake arguments...]     default BUILD_DIR: build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
# lockbridge::prometheus is required here (scripts/bootstrap.sh installs prometheus-cpp-dev), so
# neither the tests nor the CLI's --metrics can silently go missing.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKBRIDGE_PROMETHEUS=ON "$@" >/dev/null
cmake --build "$dir" -j "$jobs"
