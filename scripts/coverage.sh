#!/usr/bin/env bash
# Line and branch coverage of lockbridge's own code (lib/, tools/, compat/, prometheus/), per folder,
# from a build configured with -DLOCKBRIDGE_COVERAGE=ON whose tests have run (scripts/test.sh does
# both). Throw branches and those the compiler proves unreachable are not counted: they are the
# exception plumbing of every call, not decisions of ours. Writes BUILD_DIR/coverage.json too.
#   scripts/coverage.sh [BUILD_DIR]      default BUILD_DIR: build-test
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-test}
gcovr --root . --object-directory "$dir" --filter 'lib/' --filter 'tools/' --filter 'compat/' --filter 'prometheus/' \
  --exclude-throw-branches --exclude-unreachable-branches --gcov-ignore-parse-errors \
  --json-summary "$dir/coverage.json" -j 2 >/dev/null
python3 - "$dir/coverage.json" <<'PY'
import collections, json, sys
files = json.load(open(sys.argv[1]))["files"]
folders = collections.defaultdict(lambda: [0, 0, 0, 0])
for f in files:
    parts = f["filename"].split("/")
    # lib/src/core/x.cpp -> lib/src/core; tools/x.cpp -> tools
    folder = "/".join(parts[:-1])
    for key in (folder, parts[0] + " (all)"):
        t = folders[key]
        t[0] += f["line_covered"]; t[1] += f["line_total"]; t[2] += f["branch_covered"]; t[3] += f["branch_total"]
pct = lambda a, b: f"{100.0 * a / b:5.1f} %" if b else "    -  "
print(f"{'folder':34} {'lines':>18} {'branches':>18}")
for name in sorted(folders, key=lambda n: (n.split('/')[0].split(' ')[0], '(all)' not in n, n)):
    l, lt, b, bt = folders[name]
    print(f"{name:34} {pct(l, lt)} {l:>5}/{lt:<5} {pct(b, bt)} {b:>5}/{bt:<5}")
PY
