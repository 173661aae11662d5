#!/usr/bin/env bash
# Where each thread's time goes under the 64-client load: for every thread of the worker and
# the query process that logbook-bench starts, the milliseconds it ran on a processor and the
# milliseconds it waited in the run queue (runnable, no processor free) over 3 s, from
# /proc/PID/task/TID/schedstat; and how busy the whole machine was (/proc/stat). A thread that
# runs or waits nearly all of the wall time is bound by processors, not by work to do.
#
# usage: Benchmarks/tools/threadwait.sh [BIN_DIR (.build/release)]   # BIN_DIR holds logbook and logbook-bench
set -euo pipefail
# -P: the bench starts the worker by its real path, and .build/release is a link to it.
bin=$(cd -P "${1:-.build/release}" && pwd -P)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin/logbook-bench" --only throughput --clients 64 --seconds 9 --events 20000 --streams 2000 \
    --out "$out/bench.json" 2>/dev/null | grep -E "commands/s, 64" > "$out/rate.txt" &
sleep 7
worker=$(pgrep -n -f "$bin/logbook run worker")
query=$(pgrep -n -f "$bin/logbook run query")
snapshot() {
    for pid in "$worker" "$query"; do
        for task in /proc/"$pid"/task/*; do
            echo "$pid $(tr ' ' _ < "$task/comm") $(cat "$task/schedstat" 2>/dev/null)"
        done
    done
}
head -1 /proc/stat > "$out/stat0"; snapshot > "$out/s0"
sleep 3
snapshot > "$out/s1"; head -1 /proc/stat > "$out/stat1"
wait
python3 - "$out" "$worker" "$query" <<'PY'
import sys
out, worker, query = sys.argv[1:4]
def load(name):
    rows = {}
    for line in open(f"{out}/{name}"):
        f = line.split()
        if len(f) >= 5:
            rows[(f[0], f[1])] = (int(f[2]), int(f[3]))
    return rows
before, after = load("s0"), load("s1")
process = {worker: "worker", query: "query"}
print("process thread               on a cpu   in the run queue (ms over 3 s)")
for key, (ran1, waited1) in sorted(after.items()):
    if key not in before:
        continue
    ran = (ran1 - before[key][0]) / 1e6
    waited = (waited1 - before[key][1]) / 1e6
    if ran > 30 or waited > 30:
        print(f"{process[key[0]]:7s} {key[1]:18s} {ran:8.0f} {waited:10.0f}  ({100 * (ran + waited) / 3000:.0f}% of the wall busy or waiting)")
s0 = list(map(int, open(f"{out}/stat0").read().split()[1:]))
s1 = list(map(int, open(f"{out}/stat1").read().split()[1:]))
delta = [b - a for a, b in zip(s0, s1)]
idle = delta[3] + delta[4]
print(f"machine busy {100 * (sum(delta) - idle) / sum(delta):.0f}%")
PY
cat "$out/rate.txt"
