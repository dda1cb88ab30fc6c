#!/usr/bin/env bash
# The packages are the test: installs the .deb files of DEB_DIR (scripts/package.sh) with apt-get,
# builds the consumer (find_package, on the shared and the static libraries; pkg-config) and the
# example against the installed files alone, runs the installed command and checks its man pages
# and completion and the operators' kit (tests/package/operations-check.sh), then purges the packages
# and checks that nothing of them is left. Needs root (or sudo) and a machine where lockbridge's
# packages are not installed yet.
#   install-debs.sh DEB_DIR SOURCE_DIR
set -euo pipefail
debs=$(realpath "${1:?usage: install-debs.sh DEB_DIR SOURCE_DIR}")
source=$(realpath "${2:?usage: install-debs.sh DEB_DIR SOURCE_DIR}")
packages=(liblockbridge0 liblockbridge-dev lockbridge-tools)
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
work=$(mktemp -d)
purge() { "${sudo[@]}" apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true; }
on_system=false  # from the install until the purge: what an early exit must undo
trap '! $on_system || purge; rm -rf "$work"' EXIT

for package in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    echo "install-debs: $package is installed already; this test installs and purges it itself" >&2
    exit 1
  fi
done
files=()
for package in "${packages[@]}"; do files+=("$debs/${package}_"*.deb); done  # not the -dbgsym ones
on_system=true
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${files[@]}" >/dev/null

# The CMake consumer, from the system's own search paths: no prefix given.
cmake -S "$source/tests/package/consumer" -B "$work/cmake-build" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
"$work/cmake-build/consumer_static"
# pkg-config, as a Makefile would.
g++ -std=c++20 "$source/tests/package/consumer/main.cpp" -o "$work/pc-consumer" \
  $(pkg-config --cflags --libs lockbridge-compat lockbridge)
"$work/pc-consumer"
# Every installed header on its own, as a program that includes only the one it needs: the
# libraries' builds precompile the standard headers, which could hide an include a header forgets.
# (prometheus.hpp also needs prometheus-cpp's headers, in the system's include path.)
headers=$(cd /usr/include && find lockbridge -name '*.hpp' | sort)
[[ -n "$headers" ]] || { echo "install-debs: no header installed under /usr/include/lockbridge" >&2; exit 1; }
header_flags=$(pkg-config --cflags lockbridge-compat lockbridge)
printf '%s\n' $headers | xargs -P "$(nproc)" -I{} bash -c \
  "echo '#include <{}>' | g++ -std=c++20 -fsyntax-only $header_flags -x c++ - ||
   { echo 'install-debs: {} does not compile on its own' >&2; exit 1; }"
# The example, on lockbridge/asio.hpp (Debian's standalone Asio) and the shared library.
g++ -std=c++20 "$source/examples/async_lock.cpp" -o "$work/async-example" $(pkg-config --cflags --libs lockbridge)
[[ -x "$work/async-example" ]]

# The command, its version, and the shared library it loads from the system.
installed=$(lockbridge --version)
[[ "$installed" == "lockbridge $(dpkg-query -W -f='${Version}' lockbridge-tools)" ]] ||
  { echo "install-debs: lockbridge --version says '$installed'" >&2; exit 1; }
loads=$(ldd "$(command -v lockbridge)")  # whole, first: grep -q would end ldd early (pipefail)
grep -Eq "liblockbridge.so.[0-9]+ => /(usr/)?lib/" <<<"$loads" ||
  { echo "install-debs: the installed lockbridge does not load the packaged shared library" >&2; exit 1; }

# Its man pages and its completion, as installed.
if [[ ! -e /usr/share/man/man1/lockbridge.1.gz ]] && grep -rqs 'path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/; then
  # A minimal image's dpkg leaves man pages out of every package: nothing to find, but listed.
  dpkg-query -L lockbridge-tools | grep -q 'man1/lockbridge.1.gz' ||
    { echo "install-debs: lockbridge-tools lists no man page" >&2; exit 1; }
  echo "install-debs: this machine's dpkg excludes man pages; checked that the package lists them"
else
  man -w lockbridge >/dev/null && man -w lockbridge-bench >/dev/null ||
    { echo "install-debs: man cannot find the lockbridge pages" >&2; exit 1; }
fi
bash "$source/tests/package/completion-check.sh" /usr/share/bash-completion/completions/lockbridge
# The operators' kit, as installed, with a live scrape of the installed command's metrics.
bash "$source/tests/package/operations-check.sh" /usr/share/lockbridge "$source"

purge
on_system=false
for package in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "installed"; then
    echo "install-debs: $package is still installed after the purge" >&2
    exit 1
  fi
done
left=$(find /usr/include/lockbridge /usr/lib/*/cmake/lockbridge /usr/bin/lockbridge /usr/share/man/man1/lockbridge* \
  /usr/share/bash-completion/completions/lockbridge /usr/share/lockbridge 2>/dev/null || true)
[[ -z "$left" ]] || { echo "install-debs: left behind by the purge: $left" >&2; exit 1; }
echo "install-debs: installed ${packages[*]}, built and ran against them, and purged them cleanly"
