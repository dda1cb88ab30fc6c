#!/usr/bin/env bash
# Installs what is missing, builds, and runs lockbridge's main job on a private redis-server:
# `lockbridge compare`, every strategy side by side over the same workloads. The table goes to
# stdout; all results to build/compare.json and the chart to build/compare.svg.
# Extra arguments go to compare (e.g. --duration 10, or --url redis://host:6379).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/build.sh build -DLOCKBRIDGE_BUILD_TESTS=OFF
./build/lockbridge compare --json build/compare.json --plot build/compare.svg "$@"
