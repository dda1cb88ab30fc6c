#!/usr/bin/env bash
# Checks the ABI that each shared library of a build exports against the baseline committed for
# its SONAME, abi/<soname>.abi.xz (written by abidw from Debian's abigail-tools; xz keeps the
# repository small: the XML is some megabytes). The build must carry
# full debug information (-g: the package build does; the test builds' -g1 does not).
#   scripts/check-abi.sh BUILD_DIR            exit 0: the same ABI, or only additions (listed);
#                                             1: a change that breaks programs built against the
#                                             baseline, or a SONAME with no baseline
#   scripts/check-abi.sh --update BUILD_DIR   writes the baselines of BUILD_DIR's libraries
# The rule (docs/packaging.md): a change that breaks the ABI raises LOCKBRIDGE_SOVERSION
# (CMakeLists.txt), which renames the SONAME, and the new SONAME's baseline is committed with it
# (the old one removed). Additions keep the SONAME; their baseline may be refreshed with --update.
set -euo pipefail
cd "$(dirname "$0")/.."
update=false
if [[ "${1:-}" == "--update" ]]; then
  update=true
  shift
fi
build=${1:?usage: check-abi.sh [--update] BUILD_DIR}
command -v abidw >/dev/null || { echo "check-abi: abidw not found (Debian package abigail-tools)" >&2; exit 1; }

# The headers that declare each library's API: types declared elsewhere (the internals, the
# standard library's) are not part of what lockbridge promises.
headers=(--headers-dir lib/include --headers-dir "$build/lib/generated" --headers-dir compat/include
         --headers-dir prometheus/include)
# Paths and line numbers change with every edit and build directory; they are not ABI.
abidw_options=(--no-corpus-path --no-show-locs --drop-private-types "${headers[@]}")

mapfile -t libraries < <(find "$build" -name 'liblockbridge*.so.*.*' -type f | sort)
[[ ${#libraries[@]} -gt 0 ]] || { echo "check-abi: no shared library under $build" >&2; exit 1; }
mkdir -p abi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for library in "${libraries[@]}"; do
  soname=$(objdump -p "$library" | awk '$1 == "SONAME" { print $2 }')
  baseline=abi/$soname.abi.xz
  if $update; then
    abidw "${abidw_options[@]}" --out-file "$work/$soname.abi" "$library"
    xz -9 --stdout "$work/$soname.abi" >"$baseline"
    echo "check-abi: wrote $baseline"
    continue
  fi
  if [[ ! -f "$baseline" ]]; then
    echo "check-abi: $soname has no baseline ($baseline). A new SONAME needs one: scripts/check-abi.sh --update $build" >&2
    failed=1
    continue
  fi
  status=0
  xz --decompress --stdout "$baseline" >"$work/$soname.abi"
  report=$(abidiff --no-show-locs --drop-private-types "${headers[@]/--headers-dir/--headers-dir2}" "$work/$soname.abi" \
    "$library" 2>&1) ||
    status=$?
  # abidiff's exit status is a bit set: 1 error, 2 usage error, 4 a change, 8 an incompatible one.
  if ((status & 3)); then
    echo "check-abi: abidiff could not compare $soname:" >&2
    echo "$report" >&2
    failed=1
  elif ((status & 8)); then
    echo "check-abi: $soname: the exported ABI changed incompatibly. Raise LOCKBRIDGE_SOVERSION in CMakeLists.txt" >&2
    echo "           and commit the new SONAME's baseline (scripts/check-abi.sh --update), or undo the change:" >&2
    echo "$report" >&2
    failed=1
  elif ((status & 4)); then
    echo "check-abi: $soname: compatible changes (additions) since the baseline; --update records them:"
    echo "$report"
  else
    echo "check-abi: $soname: the ABI is the baseline's"
  fi
done
exit $failed
