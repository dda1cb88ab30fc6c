#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit + integration against a
# redis-server that the CTest fixture starts on loopback) three ways:
#   build-test  g++, instrumented for coverage; the coverage per folder is printed after its tests
#   build-asan  clang, AddressSanitizer + UndefinedBehaviorSanitizer, with the libFuzzer targets:
#               their corpora are replayed and each fuzzes for LOCKBRIDGE_FUZZ_SECONDS (20) as tests
#   build-tsan  g++, ThreadSanitizer (the library has background threads: notifier, watchdog, observer)
# and then the Debian packages: built, checked (lintian, the ABI against abi/), installed, used by
# a program built against the installed files alone, and purged (docs/packaging.md).
# Each ends with one summary line: tests run, passed, seconds. The main job (scripts/main-job.sh)
# builds in build/, apart from these, so either command may run first, any number of times.
#   scripts/test.sh            all three builds and the packages
#   scripts/test.sh --quick    build-test only
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

summaries=()
excerpts=()
failed=0

# run_suite DIR JOBS [cmake arguments...]: JOBS tests at a time.
run_suite() {
  local dir=$1 jobs=$2
  shift 2
  local started=$SECONDS
  echo "== building $dir"
  bash scripts/build.sh "$dir" -DLOCKBRIDGE_BUILD_TESTS=ON "$@"
  echo "== testing $dir"
  local log="$dir/ctest.log" status=0
  # A build without tests is a failure here, never a silent pass.
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j "$jobs" --no-tests=error) 2>&1 | tee "$log" || status=$?
  local counts
  counts=$(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests* failed out of \([0-9]*\)$/\1 \2/p' "$log" | tail -n 1)
  local failures=${counts% *} total=${counts#* }
  if [[ -z "$counts" ]]; then
    failures=?
    total=?
    status=1
  fi
  local passed=$([[ $total == ? ]] && echo ? || echo $((total - failures)))
  summaries+=("== $dir: $total tests run, $passed passed, $((SECONDS - started)) s (build included)")
  [[ $status -eq 0 ]] || { failed=1; excerpts+=("$(failure_excerpts "$dir")"); }
  return 0
}

# failure_excerpts DIR: the end of each failed test's output, from CTest's log of the last run.
# Printed again after the summaries: a CI log is often read from its end, and there the failures
# of a run of 1,700 tests are otherwise only names.
failure_excerpts() {
  local temporary=$1/Testing/Temporary name
  [[ -f $temporary/LastTestsFailed.log ]] || return 0
  while IFS= read -r name; do
    name=${name#*:}
    echo "== $1: $name"
    awk -v name="$name" '
      $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); mine = ($0 == name); next }
      mine && /^<end of output>$/ { mine = 0 }
      mine' "$temporary/LastTest.log" | tail -n 40
  done <"$temporary/LastTestsFailed.log"
}

# Line tables (-g1) are all a sanitizer report or a coverage line needs; ASan is meant to run at
# -O1, TSan at -O2 (their documentation's advice), coverage at -O1 so lines map to code.
# Tests at a time: most of a test's time is spent waiting (on leases, failovers, processes), so
# the plain build runs four on two cores, a third less time than two. The sanitized builds use
# their CPU: four at once there slowed commands past their timeouts, so they run two.
run_suite build-test 4 -DLOCKBRIDGE_COVERAGE=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
bash scripts/coverage.sh build-test || failed=1
if [[ "${1:-}" != "--quick" ]]; then
  run_suite build-asan 2 -DCMAKE_CXX_COMPILER=clang++-14 -DLOCKBRIDGE_FUZZ=ON \
    "-DLOCKBRIDGE_SANITIZE=address;undefined" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  run_suite build-tsan 2 "-DLOCKBRIDGE_SANITIZE=thread" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  started=$SECONDS
  echo "== packages"
  if bash scripts/package.sh build-packages && bash tests/package/install-debs.sh build-packages .; then
    summaries+=("== packages: built, checked, installed, used and purged, $((SECONDS - started)) s")
  else
    summaries+=("== packages: FAILED, $((SECONDS - started)) s")
    failed=1
  fi
fi
((${#excerpts[@]} == 0)) || printf '%s\n' "${excerpts[@]}"
printf '%s\n' "${summaries[@]}"
exit $failed
