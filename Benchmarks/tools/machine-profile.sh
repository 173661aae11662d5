#!/usr/bin/env bash
# Where the whole machine's processor time goes under the 64-client load, per command: a
# machine-wide `perf record -a` of 3 s of `logbook-bench --only throughput --clients 64`,
# each sample put to its process (the worker, the query process, the bench's own load
# clients, anything else, idle) and to the code it was in (the kernel, SQLite, libzmq,
# glibc, Swift: Logbook's own code and the Swift runtime), then turned into microseconds of
# processor time a command with the run's own commands/s. What the kernel, SQLite, libzmq
# and the load clients cost is what no change to Logbook's Swift code can take away.
#
# usage: Benchmarks/tools/machine-profile.sh [BIN_DIR (.build/release)] [RUNS (1)]
#   BIN_DIR holds a release `logbook` and `logbook-bench`; needs perf (linux-perf) and root.
set -euo pipefail
# -P: the bench starts the worker by its real path, and .build/release is a link to it.
bin=$(cd -P "${1:-.build/release}" && pwd -P)
runs=${2:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for run in $(seq "$runs"); do
    "$bin/logbook-bench" --only throughput --clients 64 --seconds 10 --events 20000 --streams 2000 \
        --out "$out/bench.json" >/dev/null 2>&1 &
    bench=$!
    sleep 6
    worker=$(pgrep -n -f "$bin/logbook run worker")
    query=$(pgrep -n -f "$bin/logbook run query")
    perf record -a -F 997 -o "$out/perf.data" -- sleep 3 >/dev/null 2>&1
    wait $bench
    perf script -i "$out/perf.data" -F pid,ip,dso 2>/dev/null >"$out/samples.txt"
    python3 - "$out" "$worker" "$query" "$bench" <<'PY'
import collections, json, sys
out, worker, query, bench = sys.argv[1:5]
figure = json.load(open(f"{out}/bench.json"))["figures"][0]
per_second = figure["value"]
process = {worker: "worker", query: "query", bench: "load clients", "0": "idle"}
kinds = ["kernel", "SQLite", "libzmq", "glibc", "Swift"]
counts = collections.Counter()
total = 0
for line in open(f"{out}/samples.txt"):
    fields = line.split()
    if len(fields) < 2:
        continue
    total += 1
    dso = fields[-1].strip("()").rsplit("/", 1)[-1]
    if dso.startswith("[kernel"):
        kind = "kernel"
    elif "sqlite" in dso:
        kind = "SQLite"
    elif "zmq" in dso:
        kind = "libzmq"
    elif dso.startswith(("libc.", "libm.", "ld-linux")):
        kind = "glibc"
    elif "swift" in dso.lower() or dso.startswith(("logbook", "libdispatch", "libFoundation", "libBlocksRuntime")):
        kind = "Swift"
    else:
        kind = "other"
    counts[(process.get(fields[0], "everything else"), kind)] += 1
seconds = total / 997 / 2  # two processors, 997 samples a second each
per_command = lambda n: n / 997 * 1e6 / (per_second * seconds)
print(f"{per_second:,.0f} commands/s; microseconds of processor time a command, by process and code:")
print(f"{'':16s}" + "".join(f"{k:>8s}" for k in kinds + ["other", "total"]))
for name in ["worker", "query", "load clients", "everything else", "idle"]:
    row = [per_command(counts[(name, k)]) for k in kinds + ["other"]]
    print(f"{name:16s}" + "".join(f"{v:8.1f}" for v in row) + f"{sum(row):8.1f}")
busy = {k: sum(per_command(n) for (p, kk), n in counts.items() if p != "idle" and kk == k) for k in kinds + ["other"]}
floor = sum(busy.values()) - busy["Swift"] - busy["glibc"]
print(f"all processes: {sum(busy.values()):.1f} µs, of which Swift {busy['Swift']:.1f} and glibc {busy['glibc']:.1f};"
      f" without those two {floor:.1f} µs: at most {2e6 / floor:,.0f} commands/s on two fully busy processors")
PY
done
