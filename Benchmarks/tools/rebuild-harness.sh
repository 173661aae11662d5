#!/usr/bin/env bash
# A rebuild, measured on its own: a worker on a copy of a log, a query process that first
# catches up from empty read models, then `logbook rebuild` N times. For each rebuild: its
# wall time, the processor time the query process and the worker spent on it (from
# /proc/PID/stat), the query process's peak RSS so far (VmHWM) and its RSS after the rebuild.
#
# usage: Benchmarks/tools/rebuild-harness.sh BIN_DIR LOG [REBUILDS (3)]
#   BIN_DIR holds a release `logbook`; LOG is an events.sqlite3, e.g. the bench's 1,000,000
#   events: `logbook-bench --only replay --data-dir D` keeps it as D/service/events.sqlite3.
# With PERF set (e.g. PERF="-F 999 -g"), the second rebuild runs under `perf record -p` of
# the query process, into DIR/perf.data, and the scratch directory DIR (with the processes'
# logs) is kept and printed last; otherwise it is removed.
set -euo pipefail
bin=$(cd "$1" && pwd)
log=$2
rebuilds=${3:-3}
dir=$(mktemp -d /tmp/rebuild-harness.XXXX)
cp "$log" "$dir/events.sqlite3"
export LOGBOOK_DATA_DIR=$dir LOGBOOK_COMMANDS=ipc://$dir/c LOGBOOK_FEED=ipc://$dir/f \
    LOGBOOK_QUERIES=ipc://$dir/q LOGBOOK_LOG=ipc://$dir/l
"$bin/logbook" run worker 2>"$dir/worker.log" &
worker=$!
"$bin/logbook" run query 2>"$dir/query.log" &
query=$!
finish() {
    kill $query $worker 2>/dev/null || true
    wait || true
    if [ -n "${PERF:-}" ]; then echo "$dir"; else rm -rf "$dir"; fi
}
trap finish EXIT
sleep 0.5
for _ in $(seq 1 600); do
    "$bin/logbook" status --check --max-lag 0 >/dev/null 2>&1 && break
    sleep 0.25
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
kib() { awk -v key="$2:" '$1 == key {print $2}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
for round in $(seq 1 "$rebuilds"); do
    q0=$(ticks $query); w0=$(ticks $worker); t0=$(date +%s%N)
    perf_pid=
    if [ -n "${PERF:-}" ] && [ "$round" = 2 ]; then
        # shellcheck disable=SC2086
        perf record $PERF -o "$dir/perf.data" -p $query 2>/dev/null &
        perf_pid=$!
    fi
    "$bin/logbook" rebuild >/dev/null
    t1=$(date +%s%N); q1=$(ticks $query); w1=$(ticks $worker)
    if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
    sleep 0.3
    echo "rebuild $round: $(( (t1 - t0) / 1000000 )) ms," \
        "query process $(( (q1 - q0) * 1000 / hz )) ms, worker $(( (w1 - w0) * 1000 / hz )) ms of processor time," \
        "query peak $(( $(kib $query VmHWM) / 1024 )) MB, RSS after $(( $(kib $query VmRSS) / 1024 )) MB"
done
