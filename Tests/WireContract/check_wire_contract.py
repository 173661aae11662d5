#!/usr/bin/env python3
"""Wire contract test: the real service against the JSON Schemas in schemas/.

Starts `logbook run worker`, `logbook run query` and `logbook run groups` (LOGBOOK_BIN,
default .build/debug/logbook under the repository root) on free loopback ports in a temporary
folder, subscribes to the whole feed, then drives every command, query, ReadLog, Status
and Rebuild, and every request of the groups socket (admins' and members'), over REQ and
DEALER sockets, successes and every error code that can be provoked (scenario.py).
Everything sent and received, the deliveries to group members included, is validated against its schema
with jsonschema's Draft202012Validator; every kind seen must have a schema, every kind
listed in message_checks.py must have been seen, and the schemas must reject `{}`, `[]`,
`"x"` and mutated copies of real messages (strictness.py).

Exit status 0 when all holds; 1 with one line per failure otherwise (a service that does
not start or answer is a failure too); 2 when the test cannot run at all (no binary, no
jsonschema or pyzmq).

With --curve the service runs with CURVE keys and an allow-list (made by `logbook keygen`
and, for the reader, by pyzmq), every socket of the test is a CURVE client, and each role's
`unauthorized` replies are checked too (group members are readers: a reader consumes but
does not manage groups, a writer does neither).

    LOGBOOK_BIN=.build/debug/logbook python3 Tests/WireContract/check_wire_contract.py
    LOGBOOK_BIN=.build/debug/logbook python3 Tests/WireContract/check_wire_contract.py --curve
    python3 Tests/WireContract/check_wire_contract.py --schemas /tmp/copy-of-schemas
"""

import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

import argparse  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

try:
    import jsonschema  # noqa: F401, E402
    import referencing  # noqa: F401, E402
    import zmq  # noqa: E402
except ImportError as missing:
    print(f"wire contract: {missing}: needs Python 3.11+ with jsonschema>=4.18 (which brings referencing) and pyzmq "
          "(python3 -m pip install 'jsonschema>=4.18' pyzmq)", file=sys.stderr)
    sys.exit(2)

from contract_schemas import ContractSchemas  # noqa: E402
from message_checks import UNREACHABLE_CODES, CaptureCheck  # noqa: E402
from scenario import Scenario, ScenarioFailure  # noqa: E402
from service_processes import ServiceError, ServiceProcesses  # noqa: E402
from strictness import mutation_failures, top_level_failures  # noqa: E402
from wire_client import FeedRecorder, WireClient, WireFailure  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", type=pathlib.Path, default=REPOSITORY / "schemas",
                        help="the schemas folder to check (default: schemas/ of this repository)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, data) for inspection")
    parser.add_argument("--curve", action="store_true", help="run the service and every socket with CURVE keys")
    arguments = parser.parse_args()
    started = time.monotonic()
    # SIGTERM (a CI timeout, say) unwinds like Ctrl-C, so the service processes are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    binary = pathlib.Path(os.environ.get("LOGBOOK_BIN", ".build/debug/logbook"))
    if not binary.is_absolute():
        binary = (REPOSITORY / binary) if not binary.exists() else binary.resolve()
    if not binary.is_file():
        print(f"wire contract: no logbook binary at {binary} (build it, or set LOGBOOK_BIN)", file=sys.stderr)
        return 2

    try:
        schemas = ContractSchemas(arguments.schemas)
    except Exception as error:  # a schema that is not a schema, or unreadable JSON
        print(f"wire contract: FAIL: the schemas themselves are invalid: {error}", file=sys.stderr)
        return 1
    failures = top_level_failures(schemas)

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="logbook-wire-contract-"))
    check = CaptureCheck(schemas, curve=arguments.curve)
    context = zmq.Context()
    client = WireClient(context, {})
    feed = None
    scenario = None
    completed = False
    try:
        with ServiceProcesses(binary, workdir, curve=arguments.curve) as service:
            client.endpoints = service.endpoints
            client.keys = service.client_keys
            try:
                service.wait_until_ready(client.answers_status)
                feed = FeedRecorder(context, service.endpoints["feed"], service.client_keys.get("admin"))
                scenario = Scenario(client, feed, service)
                scenario.run()
                service.check_running()
                completed = True
            except (ScenarioFailure, WireFailure, ServiceError) as error:
                failures.append(f"scenario: {error}")
                for role in ("worker", "query", "groups"):
                    failures.append(f"last lines of the {role}'s log:\n{service.log_tail(role)}")
    finally:
        client.close()
        if feed is not None:
            feed.close()
        context.term()
        if not arguments.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    ran_seconds = time.monotonic() - started

    for exchange in client.exchanges:
        check.check_exchange(exchange)
    for delivery in client.deliveries:
        check.check_delivery(delivery)
    if feed is not None and scenario is not None and scenario.log_events:
        check.check_feed(feed.messages, scenario.log_events)
    if completed:  # after an aborted run, missing kinds say nothing new
        check.check_coverage()
    failures += check.failures
    samples = check.finish_samples()
    mutation_problems, mutation_count = mutation_failures(schemas, samples)
    failures += mutation_problems

    _summary(schemas, check, client, feed, samples, mutation_count, ran_seconds, time.monotonic() - started)
    if arguments.keep:
        print(f"kept {workdir}")
    if failures:
        print(f"\nwire contract: FAIL ({len(failures)} problems)", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        return 1
    print(f"wire contract{' (CURVE)' if arguments.curve else ''}: OK")
    return 0


def _summary(schemas, check, client, feed, samples, mutation_count, ran_seconds, total_seconds):
    print(f"wire contract{' (CURVE)' if check.curve else ''}: {len(schemas.documents)} schema files; {len(client.exchanges)} requests and replies, "
          f"{len(client.deliveries)} group deliveries, "
          f"{len(feed.messages) if feed else 0} feed messages; service part {ran_seconds:.1f} s, "
          f"total {total_seconds:.1f} s")
    groups = {}
    for kind, count in sorted(check.counts.items()):
        group, _, rest = kind.partition(" ") if kind.split(" ", 1)[0] in ("request", "reply", "result", "via") else \
            kind.partition(":")
        groups.setdefault(group, []).append(f"{rest} {count}")
    for group, entries in groups.items():
        print(f"  {group}: " + ", ".join(entries))
    print(f"  strictness: {len(samples)} kinds mutated, {mutation_count} mutated copies checked")
    unreachable = {} if check.curve else UNREACHABLE_CODES
    print("  not provoked: " + "; ".join(f"{code} ({why})" for code, why in unreachable.items())
          + "; wrong_expected_version with cause contention (needs other writers winning three rounds)")
    for gap in check.gaps:
        print(f"  refused by the service only (no schema can say it): {gap}")
    for leniency in check.leniencies:
        print(f"  accepted by the service although its schema refuses it: {leniency}")


if __name__ == "__main__":
    sys.exit(main())
