#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit + integration against a
# redis-server that the CTest fixture starts on loopback), then the same suite built with
# AddressSanitizer + UndefinedBehaviorSanitizer, and under ThreadSanitizer (the library has a
# background thread per Client: the release notifier).
#   scripts/test.sh            all three builds
#   scripts/test.sh --quick    the normal build only
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

run_suite() {
  local dir=$1
  shift
  echo "== building $dir"
  # Tests on explicitly: the main job (scripts/main-job.sh) configures build/ without them, and a
  # cached OFF would leave nothing to run.
  bash scripts/build.sh "$dir" -DLOCKBRIDGE_BUILD_TESTS=ON "$@"
  echo "== testing $dir"
  # A build without tests is a failure here, never a silent pass.
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j 2 --no-tests=error)
}

run_suite build
if [[ "${1:-}" != "--quick" ]]; then
  # Line tables (-g1) are all a sanitizer report needs, and cost a fraction of full debug info to
  # build; ASan is meant to run at -O1, TSan at -O2 (their documentation's advice).
  run_suite build-asan "-DLOCKBRIDGE_SANITIZE=address;undefined" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  run_suite build-tsan "-DLOCKBRIDGE_SANITIZE=thread" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
fi
