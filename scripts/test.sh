#!/usr/bin/env bash
# The whole test suite: checks formatting and that docs/architecture.md's table of targets
# matches Package.swift, builds every target and test with warnings as
# errors, runs all tests (XCTest and Swift Testing) once, checks every message kind on the
# wire against schemas/, runs `logbook-bench --quick` as a smoke test and runs the Python
# example (each against a real worker and query process), then starts the local cluster of deploy/ (a worker and two
# query processes) and checks that both query processes answer. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive Sources Tests Benchmarks Package.swift
python3 scripts/check-architecture-doc.py
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build
LOGBOOK_BIN=.build/debug/logbook python3 Tests/WireContract/check_wire_contract.py
# The benchmark once at small sizes, as a smoke test (no thresholds; figures on CI mean nothing).
.build/debug/logbook-bench --quick --out "${TMPDIR:-/tmp}/logbook-bench-quick.json"
LOGBOOK_BIN=.build/debug/logbook python3 examples/python/check_example.py
./deploy/cluster.sh --check
