#!/usr/bin/env python3
"""A member of a Logbook consumer group: prints each event it is given, then acknowledges it.

An admin creates the group; then run as many members as you like, each gets a share:

    logbook groups create shop --topics products
    python3 consume.py shop

README.md beside this file says what it prints. It leaves the group on Ctrl-C (or SIGTERM),
or with --limit N once N events are acknowledged; --fail POSITION nacks the first delivery of
that event, to watch it come again with attempt 2.
"""

import argparse
import os
import signal
import sys

import zmq

import logbook


def main() -> int:
    args = parse_arguments()
    stopping = []
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopping.append(True))
    context = zmq.Context()
    curve = logbook.CurveKeys(args.curve_key, args.server_key) if args.curve_key else None
    consumer = logbook.GroupConsumer(context, args.groups, args.group, args.timeout_ms, note=indented("rejoin"),
                                     curve=curve)
    try:
        joined = consumer.join()
        say(f"joined {args.group} on {args.groups} (heartbeat every {joined['heartbeatMs']} ms)")
        acknowledged = set()
        while not stopping and len(acknowledged) < args.limit:
            for delivery in consumer.poll(500):
                handle(consumer, delivery, args.fail, acknowledged)
                if len(acknowledged) >= args.limit:
                    break  # what else this member holds goes to the others when it leaves
        consumer.leave()
        say(f"left {args.group} after acknowledging {len(acknowledged)} event(s)")
    except (logbook.Refused, logbook.NoReply) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        consumer.close()
        context.destroy(linger=0)
    return 0


def handle(consumer: logbook.GroupConsumer, delivery: logbook.Delivery, fail: set, acknowledged: set) -> None:
    """Does this member's work for one event (here: prints it), then acks it (or nacks it)."""
    event = delivery.event
    line = f"  event #{delivery.position} attempt {delivery.attempt} {event['type']} {event['stream']}"
    if delivery.position in fail and delivery.attempt == 1:
        taken = consumer.nack(delivery.position, reason="failed on purpose (--fail)")
        say(f"{line}: nack" + ("" if taken else " (stale: no longer this member's)"))
        return
    try:
        result = consumer.ack([delivery.position])
    except logbook.NoReply:
        say(f"{line}: ack unanswered (the event comes again if the ack was lost)")
        return
    if delivery.position in result["acked"]:
        acknowledged.add(delivery.position)
        say(f"{line}: ack")
    else:
        say(f"{line}: ack stale (delivered again elsewhere)")


def say(text: str) -> None:
    print(text, flush=True)


def indented(label: str):
    return lambda text: say(f"  {label}: {text}")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("group", help="the consumer group's name (an admin creates it: logbook groups create)")
    parser.add_argument("--groups", default=logbook.DEFAULT_GROUPS, help="the groups process's socket")
    parser.add_argument("--limit", type=int, default=sys.maxsize, help="leave once N events are acknowledged")
    parser.add_argument("--fail", type=int, action="append", default=[], metavar="POSITION",
                        help="nack the first delivery of the event at POSITION (may be given again)")
    parser.add_argument("--timeout-ms", type=int, default=3000, help="how long a request waits for its reply")
    parser.add_argument("--curve-key", default=os.environ.get("LOGBOOK_CURVE_KEY"),
                        help="with CURVE on: this member's secret certificate, role reader or admin "
                             "(default $LOGBOOK_CURVE_KEY)")
    parser.add_argument("--server-key", default=os.environ.get("LOGBOOK_SERVER_KEY"),
                        help="with CURVE on: the server's public certificate (default $LOGBOOK_SERVER_KEY)")
    args = parser.parse_args()
    if bool(args.curve_key) != bool(args.server_key):
        parser.error("--curve-key and --server-key go together")
    args.fail = set(args.fail)
    return args


if __name__ == "__main__":
    sys.exit(main())
