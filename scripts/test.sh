#!/usr/bin/env bash
# The whole test suite, what CI runs (--quick: the checks, the build and the unit, contract
# and in-process tests only, for the inner loop): checks formatting and that docs/architecture.md's
# table of targets matches Package.swift; checks the measuring script Benchmarks/tools/wal-frames.py; builds every target and test with warnings as
# errors; runs all tests (Swift Testing, in two runs) with a throwaway PostgreSQL cluster
# (scripts/test-postgres.sh, stopped at the end) so that the PostgreSQL log's tests run too;
# checks every message kind on the wire against schemas/; runs the chaos suite (Tests/Chaos); runs `logbook-bench --quick` (and its
# `--store postgresql` scale section) as a smoke test; runs the Python example against a real worker and query process (the wire
# check and the example each with CURVE off and on); starts the local clusters of deploy/
# (SQLite: a worker and two query processes, plain and with CURVE; PostgreSQL: two workers,
# a feed process and two query processes, plain and with CURVE; three PostgreSQL nodes under
# Patroni, failed over once) and checks that both query processes answer; and runs the
# multi-host test (Tests/MultiHost) on network namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
case "${1:-}" in
    "") ;;
    --quick) quick=true ;;
    *)
        echo "usage: scripts/test.sh [--quick]" >&2
        exit 2
        ;;
esac
swift format lint --strict --recursive Sources Tests Benchmarks Package.swift
python3 scripts/check-architecture-doc.py
# The measuring tools of BENCHMARKS.md that read files (Benchmarks/tools/wal-frames.py).
python3 Tests/Scripts/check_wal_frames.py
# deploy/'s Prometheus configuration and alert rules, and the rules' unit tests (the dashboard's
# and rules' metric names are checked against real processes by the metrics end-to-end test).
promtool check config deploy/prometheus/prometheus.yml
promtool test rules deploy/prometheus/logbook-alerts.test.yml
swift build --build-tests -Xswiftc -warnings-as-errors
# The systemd units of deploy/, parsed by systemd itself (Type=notify, WatchdogSec).
./scripts/check-units.sh
# The PostgreSQL tests must run here: a missing server fails them rather than skipping them.
# A cluster the developer started stays up; one started here is stopped on the way out.
if ! ./scripts/test-postgres.sh url >/dev/null 2>&1; then trap './scripts/test-postgres.sh stop' EXIT; fi
eval "$(./scripts/test-postgres.sh start)"
export LOGBOOK_REQUIRE_POSTGRES=1
# --quick, the inner loop: the unit and contract tests and the in-process servers, no real
# processes, no client timing tests, nothing after them.
if $quick; then
    swift test --skip-build --skip 'LogbookClientTests|LogbookEndToEndTests'
    exit 0
fi
# Two runs. Every test waits for what must happen with a patience far beyond a loaded
# machine's pace, so tests that block one of Swift's cooperative threads (two on a two-core
# machine) only slow the others down: one run holds the units, the contracts, the in-process
# servers and the real processes together. The client's tests stay apart: they test the
# client's own timeouts and retries against a scripted server's delays, in real time, and
# the client's timers run on those same threads, so while other tests hold them a timer
# fires late, which is the machine's doing, not the client's.
swift test --skip-build --skip LogbookClientTests
swift test --skip-build --filter LogbookClientTests
LOGBOOK_BIN=.build/debug/logbook python3 Tests/WireContract/check_wire_contract.py
LOGBOOK_BIN=.build/debug/logbook python3 Tests/WireContract/check_wire_contract.py --curve
# The benchmark once at small sizes, as a smoke test (no thresholds; figures on CI mean nothing).
.build/debug/logbook-bench --quick --out "${TMPDIR:-/tmp}/logbook-bench-quick.json"
# And its PostgreSQL scale-out section (a throwaway cluster of its own; about 20 s).
.build/debug/logbook-bench --store postgresql --only scale --quick --out "${TMPDIR:-/tmp}/logbook-bench-scale-quick.json"
# The chaos suite (a minute or two): slow readers (peak RSS bound), kill -9 of the worker and of the
# query process under load, a fuzz pass on every socket, SIGTERM under load; the log is checked
# against every acknowledged reply. Then consumer groups: members running a command per event
# killed again and again, the groups process killed once, poison events parked and released.
LOGBOOK_BIN=.build/debug/logbook python3 Tests/Chaos/check_chaos.py
LOGBOOK_BIN=.build/debug/logbook python3 examples/python/check_example.py
LOGBOOK_BIN=.build/debug/logbook python3 examples/python/check_example.py --curve
./deploy/cluster.sh --check
./deploy/cluster.sh --secure --check
./deploy/cluster.sh --postgres --check
./deploy/cluster.sh --postgres --secure --check
# Three PostgreSQL nodes under Patroni and a failover of the primary (kill -9 of its Patroni
# and PostgreSQL): nothing acknowledged lost, the processes follow the new primary.
./deploy/cluster.sh --ha --check
# Separate hosts (network namespaces): PostgreSQL, two workers, a feed, two query processes and
# clients, under load with a worker killed and PostgreSQL restarted (skipped, saying why, without root).
LOGBOOK_BIN=.build/debug/logbook python3 Tests/MultiHost/check_multihost.py
# Three Patroni-managed PostgreSQL nodes and etcd on hosts of their own, two workers, a feed,
# two query processes, clients and a subscriber: six failovers of the primary under load
# (kill -9 of its PostgreSQL, of its Patroni and PostgreSQL, its links cut), each healed;
# then every acknowledged command once, no hole, the subscriber's events the log's (about
# three minutes; skipped, saying why, without root or without Patroni and etcd).
LOGBOOK_BIN=.build/debug/logbook python3 Tests/Failover/check_failover.py
