#!/usr/bin/env bash
# Checks the operators' kit as installed: the Prometheus alerting rules (promtool check rules, and
# their unit tests: each alert fires on the series that should fire it), the Grafana dashboard
# (valid JSON), that both name only metrics the library defines, and a live scrape of
# `lockbridge bench --metrics` (promtool check metrics). Uses the lockbridge on PATH and starts its
# private redis-server; leaves nothing running.
#   operations-check.sh KIT_DIR SOURCE_DIR   KIT_DIR: where lockbridge-alerts.yml and
#                                            lockbridge-dashboard.json are (installed: /usr/share/lockbridge)
set -euo pipefail
kit=$(realpath "${1:?usage: operations-check.sh KIT_DIR SOURCE_DIR}")
source=$(realpath "${2:?usage: operations-check.sh KIT_DIR SOURCE_DIR}")
rules=$(find "$kit" -name lockbridge-alerts.yml | head -n 1)
dashboard=$(find "$kit" -name lockbridge-dashboard.json | head -n 1)
[[ -n $rules && -n $dashboard ]] || { echo "operations-check: no rules or dashboard under $kit" >&2; exit 1; }
work=$(mktemp -d)
bench=
cleanup() {
  [[ -z $bench ]] || kill "$bench" 2>/dev/null || true
  [[ -z $bench ]] || wait "$bench" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

promtool check rules "$rules" >/dev/null
cp "$rules" "$source/operations/lockbridge-alerts.test.yml" "$work/"
(cd "$work" && promtool test rules lockbridge-alerts.test.yml >/dev/null)

# Every lockbridge_* name the kit uses is one the library defines (a histogram's _bucket is its own).
defined=$(grep -rhoE '"lockbridge_[a-z_]+"' "$source/prometheus/src" | tr -d '"' | sort -u)
python3 - "$dashboard" >/dev/null <<'PY'
import json, sys
json.load(open(sys.argv[1]))
PY
used=$(cat "$rules" "$dashboard" | grep -oE 'lockbridge_[a-z_]+' | sed 's/_bucket$//' | sort -u)
unknown=$(comm -23 <(echo "$used") <(echo "$defined"))
[[ -z $unknown ]] || { echo "operations-check: the kit names metrics the library does not define: $unknown" >&2; exit 1; }

# A live exposition: bench's metrics, scraped while it runs.
lockbridge bench --duration 20 --clients 2 --metrics 127.0.0.1:0 >/dev/null 2>"$work/bench.err" &
bench=$!
url=
for _ in $(seq 100); do
  url=$(sed -n 's/^metrics: \(http[^ ]*\)$/\1/p' "$work/bench.err" | head -n 1)
  [[ -z $url ]] || break
  sleep 0.1
done
[[ -n $url ]] || { echo "operations-check: bench printed no metrics address:" >&2; cat "$work/bench.err" >&2; exit 1; }
scraped=false
for _ in $(seq 50); do
  if python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" \
       "$url" >"$work/scrape.txt" 2>/dev/null && grep -q '^lockbridge_acquisitions_total{' "$work/scrape.txt"; then
    scraped=true
    break
  fi
  sleep 0.2
done
$scraped || { echo "operations-check: no lock metrics scraped from $url" >&2; exit 1; }
promtool check metrics <"$work/scrape.txt"
echo "operations-check: the rules (and their tests), the dashboard and a live scrape pass promtool"
