#!/usr/bin/env bash
# Installs the Debian packages lockbridge needs to build, test and run, when any is missing.
# Safe to run again: it does nothing when everything is there.
#   scripts/bootstrap.sh               to build, test and run
#   scripts/bootstrap.sh --packaging   also to build and check the Debian packages (scripts/package.sh)
set -euo pipefail

packages=(
  g++ cmake make pkg-config            # toolchain
  libhiredis-dev                       # RESP client (hiredis 0.14)
  libssl-dev openssl                   # the TLS transport; libcrypto: Lua scripts' SHA1; the test CA
  libboost-program-options-dev         # CLI parsing
  nlohmann-json3-dev                   # JSON output
  libasio-dev                          # lockbridge/asio.hpp (standalone Asio 1.22): its tests and examples
  prometheus-cpp-dev                   # lockbridge::prometheus, and the CLI's --metrics
  libgtest-dev libgmock-dev            # tests
  clang-14 libclang-rt-14-dev libfuzzer-14-dev  # the ASan + UBSan build with the libFuzzer targets (tests/fuzz)
  gcovr                                # line and branch coverage (scripts/coverage.sh)
  redis-server redis-tools             # the embedded default server and the test fixture
  redis-sentinel                       # the Sentinel test topology (tests/integration/topology.hpp)
  gnuplot-nox                          # the compare chart (optional: compare says so when it is missing)
  python3 python3-redis                # interop tests: an independent Redisson / jedis-lock peer (tests/interop)
)
if [[ "${1:-}" == "--packaging" ]]; then
  packages+=(
    debhelper dpkg-dev fakeroot        # Debian's own package build (packaging/debian)
    lintian                            # the packages' check
    abigail-tools                      # abidw and abidiff: the exported ABI against abi/ (scripts/check-abi.sh)
    help2man bash-completion man-db    # the man pages and the completion script: built, then checked installed
    prometheus                         # promtool: the alerting rules and a live scrape (tests/package/operations-check.sh)
  )
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "bootstrap: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
