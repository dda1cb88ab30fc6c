#!/usr/bin/env bash
# Builds lockbridge's Debian packages with Debian's own tooling (packaging/debian: debhelper and
# CMake, Debian's hardening flags), from the repository's files as they are in this working tree
# (tracked ones, and new ones git does not ignore), and checks them:
#   liblockbridge<N>    the shared libraries (SONAME lib*.so.<N>, docs/packaging.md)
#   liblockbridge-dev   headers, static libraries, CMake and pkg-config files
#   lockbridge-tools    the lockbridge command
# then lintian (no errors allowed) and the exported ABI against abi/ (scripts/check-abi.sh).
#   scripts/package.sh [OUT_DIR]               default OUT_DIR: dist
#   scripts/package.sh --update-abi [OUT_DIR]  records the packaged libraries' ABI in abi/ instead
#                                              of checking it (docs/packaging.md says when)
set -euo pipefail
cd "$(dirname "$0")/.."
abi_check=()
if [[ "${1:-}" == "--update-abi" ]]; then
  abi_check=(--update)
  shift
fi
out=$(realpath -m "${1:-dist}")
bash scripts/bootstrap.sh --packaging

version=$(sed -n 's/^project(lockbridge VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
if [[ "$version" != "$changelog_version" ]]; then
  echo "package: CMakeLists.txt says $version, packaging/debian/changelog $changelog_version: add a changelog entry" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source_dir="$work/lockbridge-$version"
mkdir -p "$source_dir"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$source_dir"
cp -r packaging/debian "$source_dir/debian"
jobs=$(nproc 2>/dev/null || echo 2)
(cd "$source_dir" && DEB_BUILD_OPTIONS="parallel=$jobs nocheck" dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) || {
  tail -n 60 "$work/build.log" >&2
  echo "package: dpkg-buildpackage failed (the last lines of its log are above)" >&2
  exit 1
}

mkdir -p "$out"
rm -f "$out"/*.deb
mapfile -t debs < <(find "$work" -maxdepth 1 -name '*.deb')
cp "${debs[@]}" "$out/"
echo "package: wrote" "${debs[@]##*/}" "to $out"

# lintian: errors fail; the warnings kept are listed, with why, in docs/packaging.md.
lintian_status=0
lintian --fail-on error --suppress-tags-from-file packaging/lintian-kept "$out"/*.deb || lintian_status=$?
[[ $lintian_status -eq 0 ]] || { echo "package: lintian reports errors" >&2; exit 1; }

# The ABI of the libraries just packaged (the build tree keeps them unstripped).
bash scripts/check-abi.sh "${abi_check[@]}" "$(find "$source_dir" -maxdepth 1 -type d -name 'obj-*' | head -n 1)"
