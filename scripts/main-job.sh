#!/usr/bin/env bash
# Installs what is missing, builds, and runs lockbridge's main job on a private redis-server.
# Until `lockbridge compare` exists, that is the demo: both strategies lock and unlock.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/build.sh build -DLOCKBRIDGE_BUILD_TESTS=OFF
./build/lockbridge demo "$@"
