#!/usr/bin/env bash
# How the worker's resident memory grows through a full logbook-bench run: its VmRSS and
# VmHWM every 0.2 s, printed each time the peak rises by 1 MiB or more, between the bench's
# own progress lines (which name each section as it starts). The worker followed is the
# first one the bench starts, the one its memory section reads (the CURVE section starts a
# second one later).
#
# usage: Benchmarks/tools/worker-rss-trace.sh [BIN_DIR (.build/release)]   # BIN_DIR holds logbook and logbook-bench
set -euo pipefail
# -P: the bench starts the worker by its real path, and .build/release is a link to it.
bin=$(cd -P "${1:-.build/release}" && pwd -P)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin/logbook-bench" --out "$out/bench.json" 2> >(while IFS= read -r line; do
    echo "$(date +%s.%N | cut -c1-14) P $line"
done > "$out/progress") > /dev/null &
bench=$!
worker=""
while kill -0 "$bench" 2> /dev/null; do
    [ -n "$worker" ] || worker=$(pgrep -o -f "$bin/logbook run worker" || true)
    if [ -n "$worker" ] && [ -r "/proc/$worker/status" ]; then
        awk -v now="$(date +%s.%N | cut -c1-14)" \
            '/^VmRSS/ {rss=$2} /^VmHWM/ {hwm=$2} END {print now, "W", rss, hwm}' \
            "/proc/$worker/status" >> "$out/samples" 2> /dev/null || true
    fi
    sleep 0.2
done
sleep 1
sort -n "$out/progress" "$out/samples" 2> /dev/null | awk '
    $2 == "P" { $1 = ""; $2 = ""; print substr($0, 3); next }
    $2 == "W" && $4 > peak + 1024 { peak = $4; printf "    worker peak %.1f MB (RSS %.1f MB)\n", $4 / 1024, $3 / 1024 }'
python3 - "$out/bench.json" <<'PY'
import json, sys
for figure in json.load(open(sys.argv[1]))["figures"]:
    if "peak RSS" in figure["name"]:
        print(f'{figure["name"]}: {figure["value"]:.1f} MB')
PY
