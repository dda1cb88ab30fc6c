#!/usr/bin/env bash
# Writes lockbridge(1) and one page per subcommand, lockbridge-<command>(1), into OUT_DIR with
# help2man, from the command's own --help texts: the pages say what --help says and cannot drift
# from it. The subcommands and their one-line descriptions are read from `lockbridge --help`.
#   man-pages.sh LOCKBRIDGE OUT_DIR
set -euo pipefail
cli=${1:?usage: man-pages.sh LOCKBRIDGE OUT_DIR}
out=${2:?usage: man-pages.sh LOCKBRIDGE OUT_DIR}
mkdir -p "$out"
version=$("$cli" --version)
version=${version#lockbridge }
common=(--no-info --no-discard-stderr --version-string="$version" --section=1 --source="lockbridge $version"
        --manual="lockbridge manual")

help2man "${common[@]}" --name="Redis distributed locks: compare, audit, convert and hold them" \
  --output="$out/lockbridge.1" "$cli"
"$cli" --help | sed -n 's/^  \([a-z]*\)\t\(.*\)/\1 \2/p' | while read -r command description; do
  # help2man runs "PROGRAM --help"; PROGRAM here is the subcommand, through a one-line wrapper.
  wrapper="$out/lockbridge-$command"
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$cli" "$command" > "$wrapper"
  chmod +x "$wrapper"
  help2man "${common[@]}" --name="$description" --output="$out/lockbridge-$command.1" "$wrapper"
  rm -f "$wrapper"
done
