#!/usr/bin/env python3
"""Checks the Python example against the real service; CI runs it from scripts/test.sh.

It starts `$LOGBOOK_BIN run worker`, `$LOGBOOK_BIN run query` and `$LOGBOOK_BIN run groups`
(default binary: .build/debug/logbook) on free loopback ports with a temporary data
directory, then runs demo.py and consume.py as subprocesses and checks what they printed
against the log, the query process and the groups process, read here with code of its own:

1. straight to the service: the purchase (order id, position, stock, applied once), the
   products events (every one in the log, once, in order), the rebuilt view (equal to
   what the query process answers);
2. through a lossy link that this script runs between the demo and the worker: it drops
   the first reply to PurchaseProduct (the demo must send the same id again, and the
   purchase must still be applied once), and drops or doubles some products messages of
   the feed (the follower must notice the holes by `previous`, fill them from the log,
   and drop the repeats), while the demo sends 20 more commands;
3. with a second worker on the same data directory, killed with SIGKILL, listed first in
   `--commands`: every command must go to the worker that is up. (Both cannot take the
   demo's commands: each worker's feed carries only what it commits, and its `previous`
   marks do not know the other's events, so a follower of one feed could skip them.)
4. a consumer group: this script creates one on the products topic; consume.py (the
   library's GroupConsumer) takes every products event of the log, nacks the first one
   (which must come again with attempt 2) and acks the rest, each once, each stream in
   order; the group then has them all acknowledged. Then consume.py runs again while the
   groups process is restarted: it must join again by itself (`not_a_member`) and get the
   events appended after the restart, and nothing it had acknowledged before.

With `--curve` the service runs with CURVE keys and an allow-list (made by `logbook
keygen`: the servers' pair, a reader key for the query and groups processes, an admin key
for the demo and for this script, a reader key for consume.py), and the first run is made
with the demo's `--curve-key` and `--server-key`; a demo without keys must get no answer
at all; the consumer group is checked as in plain mode, consume.py as a reader. (The lossy link and the
second worker are the plain mode's: a link in the middle of CURVE cannot read the traffic.)

Exits 0 when all holds, else 1 with a message saying what did not. The processes are
always stopped. `--example-dir DIR` checks a copy of the example elsewhere.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

try:
    import zmq
except ImportError:
    sys.exit("check_example: the Python module zmq is missing: pip install pyzmq (or apt-get install python3-zmq)")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RESTOCKS = 20


class CheckFailed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def main() -> int:
    parser = argparse.ArgumentParser(description="Checks examples/python against the real service.")
    parser.add_argument("--example-dir", type=Path, default=HERE, help="the folder holding demo.py and logbook.py")
    parser.add_argument("--curve", action="store_true", help="run the service, the demo and this script with CURVE")
    args = parser.parse_args()
    binary = Path(os.environ.get("LOGBOOK_BIN", REPO / ".build/debug/logbook"))
    if not os.access(binary, os.X_OK):
        print(f"check_example: no logbook binary at {binary} (build it, or set LOGBOOK_BIN)", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, stop_on_signal)  # so that `finally` stops the service

    with tempfile.TemporaryDirectory(prefix="logbook-python-example-") as folder:
        service = Service(binary, Path(folder), curve=args.curve)
        try:
            service.start()
            if args.curve:
                check_secured_run(args.example_dir, service)
            else:
                check_plain_run(args.example_dir, service)
                check_lossy_run(args.example_dir, service)
                check_two_workers_run(args.example_dir, service)
            run_id = "secured" if args.curve else "plain"
            check_consumer_group_run(args.example_dir, service, run_id)
            check_rejoin_run(args.example_dir, service, run_id)
        except CheckFailed as failure:
            print(f"check_example: FAILED: {failure}", file=sys.stderr)
            service.print_logs()
            return 1
        finally:
            service.stop()
            zmq.Context.instance().destroy(linger=0)
    if args.curve:
        print("check_example: ok with CURVE (the purchase, the products feed, the view; no answer without keys; "
              "the consumer group, with a restart of the groups process)")
    else:
        print("check_example: ok (the purchase, the products feed with holes and repeats, the view, the retry, "
              "two workers, the consumer group, with a restart of the groups process)")
    return 0


def stop_on_signal(number: int, _frame) -> None:
    raise CheckFailed(f"stopped by {signal.Signals(number).name}")


# --- The service ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The keys of this script's own requests (`ask`) when the service runs with CURVE.
CURVE_KEYS = None


class Service:
    """A worker, a query process and a groups process of the real binary, on free loopback
    ports; with `curve`, secured by keys it makes with `logbook keygen` in folder/keys."""

    def __init__(self, binary: Path, folder: Path, curve: bool = False):
        self.binary, self.folder = binary, folder
        ports = [free_port() for _ in range(5)]
        self.commands, self.feed, self.queries, self.log, self.groups = (f"tcp://127.0.0.1:{p}" for p in ports)
        self.processes: list[subprocess.Popen] = []
        self.groups_process: subprocess.Popen | None = None
        self.security = {"worker": [], "query": [], "groups": []}
        self.demo_keys: list[str] = []
        self.consumer_keys: list[str] = []
        if curve:
            self.make_keys(folder / "keys")

    def make_keys(self, keys: Path) -> None:
        global CURVE_KEYS
        (keys / "clients").mkdir(parents=True)
        for name, role in (("server", None), ("query", "reader"), ("demo", "admin"), ("consumer", "reader")):
            subprocess.run([str(self.binary), "keygen", name, "--dir", str(keys), *(["--role", role] if role else [])],
                           check=True, stdout=subprocess.DEVNULL)
            if role:
                (keys / "clients" / name).write_bytes((keys / name).read_bytes())
        server = ["--curve-secret", str(keys / "server_secret"), "--clients", str(keys / "clients")]
        reader_of_worker = ["--curve-key", str(keys / "query_secret"), "--server-key", str(keys / "server")]
        self.security = {"worker": server, "query": server + reader_of_worker, "groups": server + reader_of_worker}
        self.demo_keys = ["--curve-key", str(keys / "demo_secret"), "--server-key", str(keys / "server")]
        self.consumer_keys = ["--curve-key", str(keys / "consumer_secret"), "--server-key", str(keys / "server")]
        sys.path.insert(0, str(HERE))
        import logbook

        CURVE_KEYS = logbook.CurveKeys(str(keys / "demo_secret"), str(keys / "server"))

    def start(self) -> None:
        for role in ("worker", "query", "groups"):
            process = self.run(role)
            if role == "groups":
                self.groups_process = process
        for endpoint in (self.commands, self.queries, self.groups):
            self.wait_for_status(endpoint)

    def run(self, role: str) -> subprocess.Popen:
        """Starts `logbook run ROLE` with every endpoint, its own data directory and log file."""
        endpoints = ["--commands", self.commands, "--feed", self.feed, "--queries", self.queries, "--log", self.log,
                     "--groups", self.groups]
        with open(self.folder / f"{role}.log", "a") as stderr:
            command = [str(self.binary), "run", role, "--data-dir", str(self.folder / role), *endpoints,
                       *self.security[role]]
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=stderr)
        self.processes.append(process)
        return process

    def wait_for_status(self, endpoint: str) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                ask(endpoint, {"type": "Status"}, timeout_ms=500)
                return
            except CheckFailed:
                for process in self.processes:
                    expect(process.poll() is None, f"{' '.join(process.args[:3])} exited with {process.returncode}")
                expect(time.monotonic() < deadline, f"no Status reply from {endpoint} within 20 s")

    def restart_groups(self) -> None:
        """Stops the groups process (SIGTERM) and starts it again on the same data and socket."""
        old = self.groups_process
        old.send_signal(signal.SIGTERM)
        try:
            old.wait(timeout=20)
        except subprocess.TimeoutExpired:
            old.kill()
            old.wait()
        self.processes.remove(old)
        self.groups_process = self.run("groups")
        self.wait_for_status(self.groups)

    def start_peer(self) -> tuple[str, subprocess.Popen]:
        """A second worker on the worker's data directory, with endpoints of its own; returns
        its commands endpoint once it answers Status."""
        commands, feed, log = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
        with open(self.folder / "peer.log", "w") as stderr:
            command = [str(self.binary), "run", "worker", "--data-dir", str(self.folder / "worker")]
            command += ["--commands", commands, "--feed", feed, "--log", log]
            peer = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=stderr)
        self.processes.append(peer)
        deadline = time.monotonic() + 20
        while True:
            try:
                ask(commands, {"type": "Status"}, timeout_ms=500)
                return commands, peer
            except CheckFailed:
                expect(peer.poll() is None, f"the second worker exited with {peer.returncode}")
                expect(time.monotonic() < deadline, f"no Status reply from {commands} within 20 s")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def print_logs(self) -> None:
        for role in ("worker", "query", "groups", "peer"):
            if not (self.folder / f"{role}.log").exists():
                continue
            lines = (self.folder / f"{role}.log").read_text().splitlines()
            print(f"--- last lines of the {role}'s log:", *lines[-10:], sep="\n", file=sys.stderr)


def ask(endpoint: str, document: dict, timeout_ms: int = 5000) -> dict:
    """One request on a fresh REQ socket; the reply's `ok: true` body, else CheckFailed."""
    document = {"id": str(uuid.uuid4()), **document}
    with zmq.Context.instance().socket(zmq.REQ) as requester:
        requester.linger = 0
        if CURVE_KEYS:
            CURVE_KEYS.apply(requester)
        requester.connect(endpoint)
        requester.send_json(document)
        if not requester.poll(timeout_ms):
            raise CheckFailed(f"no reply from {endpoint} to {document['type']} within {timeout_ms} ms")
        reply = requester.recv_json()
    expect(reply.get("id") == document["id"], f"reply id {reply.get('id')} is not the request's {document['id']}")
    expect(reply["ok"], f"{document['type']} was refused: {reply.get('error')}")
    return reply


def whole_log(service: Service) -> list[dict]:
    """Every event in the log, read here page by page (a short page is not the end)."""
    events, position = [], 1
    while True:
        page = ask(service.log, {"type": "ReadLog", "from": position, "limit": 100})
        events += page["events"]
        if page["next"] > page["head"]:
            break
        position = page["next"]
    expect([e["position"] for e in events] == list(range(1, len(events) + 1)), "the log's positions have holes")
    return events


# --- The two runs -----------------------------------------------------------------------


def run_demo(example_dir: Path, run_id: str, endpoints: dict, *extra: str) -> str:
    command = [sys.executable, "-B", str(example_dir / "demo.py"), "--run-id", run_id, *extra]
    for name, endpoint in endpoints.items():
        command += [f"--{name}", endpoint]
    try:
        finished = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CheckFailed(f"demo.py --run-id {run_id} did not finish within 60 s") from None
    print(f"--- demo.py --run-id {run_id} {' '.join(extra)}", finished.stdout, sep="\n", end="")
    expect(finished.returncode == 0, f"demo.py exited with {finished.returncode}: {finished.stderr.strip()}")
    return finished.stdout


def check_plain_run(example_dir: Path, service: Service) -> None:
    endpoints = {"commands": service.commands, "feed": service.feed, "log": service.log, "queries": service.queries}
    output = run_demo(example_dir, "plain", endpoints)
    check_output(output, "plain", service)


def check_secured_run(example_dir: Path, service: Service) -> None:
    endpoints = {"commands": service.commands, "feed": service.feed, "log": service.log, "queries": service.queries}
    output = run_demo(example_dir, "secured", endpoints, *service.demo_keys)
    check_output(output, "secured", service)
    command = [sys.executable, "-B", str(example_dir / "demo.py"), "--run-id", "keyless", "--timeout-ms", "300"]
    for name, endpoint in endpoints.items():
        command += [f"--{name}", endpoint]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    keyless = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                             env=environment)
    expect(keyless.returncode == 1 and "no reply" in keyless.stderr,
           f"a demo without keys was answered: exit {keyless.returncode}, {keyless.stderr.strip()}")
    expect(not any(e["data"].get("productId") == "p-keyless" for e in whole_log(service)),
           "a demo without keys appended to the log")


def check_lossy_run(example_dir: Path, service: Service) -> None:
    link = LossyLink(service)
    link.start()
    try:
        endpoints = {"commands": link.commands, "feed": link.feed, "log": service.log, "queries": service.queries}
        output = run_demo(example_dir, "lossy", endpoints, "--restocks", str(RESTOCKS), "--timeout-ms", "700")
    finally:
        link.stop()
    check_output(output, "lossy", service, restocks=RESTOCKS)
    expect(link.dropped_replies == 1, f"the lossy link dropped {link.dropped_replies} PurchaseProduct replies, not 1")
    expect(
        re.search(r"^  retry: no reply to PurchaseProduct ", output, re.M) is not None,
        "the demo did not say it sent PurchaseProduct again after its reply was lost",
    )
    expect(link.dropped_events > 0 and link.doubled_events > 0, "the lossy link dropped or doubled no feed message")
    holes = int(re.search(r"^  handled up to position \d+: \d+ event\(s\), (\d+) hole", output, re.M).group(1))
    expect(holes > 0 and re.search(r"^  log read: hole: ", output, re.M) is not None, "the follower found no hole")


def check_two_workers_run(example_dir: Path, service: Service) -> None:
    peer_commands, peer = service.start_peer()
    endpoints = {
        "commands": f"{peer_commands},{service.commands}",
        "feed": service.feed,
        "log": service.log,
        "queries": service.queries,
    }
    peer.kill()
    peer.wait()
    check_output(run_demo(example_dir, "failover", endpoints, "--timeout-ms", "2000"), "failover", service)


def check_output(output: str, run_id: str, service: Service, restocks: int = 0) -> None:
    log = whole_log(service)
    at = {event["position"]: event for event in log}
    product, order = f"p-{run_id}", f"o-{run_id}"

    # The purchase: order id and position as the log has them, applied exactly once.
    found = re.search(r"^purchase: order (\S+) position (\d+) stock (\d+)$", output, re.M)
    expect(found is not None, "the demo printed no 'purchase:' line")
    printed_order, position, stock = found.group(1), int(found.group(2)), int(found.group(3))
    expect(printed_order == order, f"the purchase's order is {printed_order}, not {order}")
    placed = [e for e in log if e["type"] == "OrderPlaced" and e["data"]["orderId"] == order]
    expect(len(placed) == 1, f"the log holds {len(placed)} OrderPlaced events for {order}, not 1")
    expect(
        placed[0]["position"] == position,
        f"the purchase's position is {position}, the log says {placed[0]['position']}",
    )
    added = next(e for e in log if e["type"] == "ProductAdded" and e["data"]["productId"] == product)
    stock_after_purchase = added["data"]["stock"] - placed[0]["data"]["quantity"]
    expect(stock == stock_after_purchase, f"the purchase left stock {stock}, the log says {stock_after_purchase}")

    # The feed: every products event of the log, up to where the demo says it got, once and in order.
    found = re.search(r"^  handled up to position (\d+):", output, re.M)
    expect(found is not None, "the demo printed no 'handled up to position' line")
    cursor = int(found.group(1))
    expect(cursor >= position + restocks, f"the feed stopped at {cursor}, before the demo's last command")
    printed = [(int(p), kind, pid) for p, kind, pid in re.findall(r"^  event #(\d+) (\S+) (\S+)", output, re.M)]
    positions = [p for p, _, _ in printed]
    expected = [e["position"] for e in log if e["stream"].startswith("product-") and e["position"] <= cursor]
    repeated = sorted({p for p in positions if positions.count(p) > 1})
    expect(not repeated, f"the demo printed these products events more than once: {repeated}")
    expect(positions == sorted(positions), f"the demo printed products events out of order: {positions}")
    missing = sorted(set(expected) - set(positions))
    expect(not missing, f"the demo never printed the products events at {missing}")
    expect(positions == expected, f"the demo printed events that are no products events up to {cursor}: {positions}")
    for p, kind, pid in printed:
        expect((kind, pid) == (at[p]["type"], at[p]["data"]["productId"]), f"event #{p} is {at[p]['type']} in the log")

    # The view: equal to the query process's answers, and our product's stock after all our commands.
    found = re.search(r"^Products view rebuilt from the log \(positions 1-(\d+)\):$", output, re.M)
    expect(found is not None, "the demo printed no products view")
    through = int(found.group(1))
    view_line = r"^  view (\S+) name=(\".*\") price=(\S+) category=(\S+) stock=(\d+) available=(yes|no)$"
    view = {
        pid: (json.loads(name), price, category, int(stock), available == "yes")
        for pid, name, price, category, stock, available in re.findall(view_line, output, re.M)
    }
    expect(product in view, f"the view has no {product}")
    expect(view[product][3] == stock_after_purchase + restocks, f"the view's stock of {product} is {view[product][3]}")
    for pid, fields in view.items():
        request = {"type": "GetProduct", "data": {"productId": pid}, "minPosition": through}
        answer = ask(service.queries, request)["result"]
        answered = (answer["name"], answer["price"], answer["category"], answer["stock"], answer["isAvailable"])
        expect(fields == answered, f"the view has {pid} as {fields}, the query process as {answered}")
    listed = ask(service.queries, {"type": "ListProducts", "data": {}, "minPosition": through})["result"]["total"]
    expect(listed == len(view), f"the view has {len(view)} products, the query process lists {listed}")


# --- The consumer group ---------------------------------------------------------------


# What consume.py prints per delivery; outcomes other than "ack" and "nack" (a stale or
# unanswered ack) name deliveries that come again.
CONSUMER_LINE = re.compile(r"^  event #(\d+) attempt (\d+) (\S+) (\S+): (.+)$", re.M)


def consumer_command(example_dir: Path, service: Service, group: str, *extra: str) -> list[str]:
    return [sys.executable, "-B", str(example_dir / "consume.py"), group, "--groups", service.groups,
            *service.consumer_keys, *extra]


def check_consumer_group_run(example_dir: Path, service: Service, run_id: str) -> None:
    """consume.py takes every products event of a new group once, the nacked one twice."""
    group = f"shop-{run_id}"
    products = {e["position"]: e for e in whole_log(service) if e["stream"].startswith("product-")}
    expect(len(products) >= 2, f"the log has {len(products)} products events; the demo should have made some")
    ask(service.groups, {"type": "CreateGroup", "group": group, "topics": ["products"]})
    failing = min(products)
    command = consumer_command(example_dir, service, group, "--limit", str(len(products)), "--fail", str(failing))
    try:
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as stopped:
        raise CheckFailed(f"consume.py {group} did not finish within 120 s: {stopped.stdout}") from None
    print(f"--- consume.py {group} --limit {len(products)} --fail {failing}", finished.stdout, sep="\n", end="")
    expect(finished.returncode == 0, f"consume.py exited with {finished.returncode}: {finished.stderr.strip()}")

    handled = [(int(p), int(a), kind, stream, outcome)
               for p, a, kind, stream, outcome in CONSUMER_LINE.findall(finished.stdout)]
    acked = [p for p, _, _, _, outcome in handled if outcome == "ack"]
    expect(sorted(acked) == sorted(products), f"consume.py acknowledged {sorted(acked)}, not every products "
                                              f"event of the log once ({sorted(products)})")
    expect((failing, 1, "nack") in [(p, a, o) for p, a, _, _, o in handled],
           f"consume.py did not nack the event at {failing} on its first delivery")
    expect([a for p, a, _, _, _ in handled if p == failing][:2] == [1, 2],
           f"the nacked event at {failing} did not come again with attempt 2")
    last_of_stream: dict[str, int] = {}
    for position, _, kind, stream, _ in handled:
        event = products[position]
        expect((kind, stream) == (event["type"], event["stream"]),
               f"consume.py printed {kind} {stream} at {position}; the log has {event['type']} {event['stream']}")
        expect(last_of_stream.get(stream, 0) <= position, f"{stream} was delivered out of order at {position}")
        last_of_stream[stream] = position

    shown = ask(service.groups, {"type": "ShowGroup", "group": group})["result"]
    counts = (shown["pending"], shown["members"], shown["acked"], shown["nacked"])
    expect(shown["checkpoint"] >= max(products) and counts == (0, 0, len(products), 1) and shown["redelivered"] >= 1,
           f"the group after consume.py: {shown}")


def check_rejoin_run(example_dir: Path, service: Service, run_id: str) -> None:
    """consume.py joins again by itself after a restart of the groups process, and gets
    what is appended after it, and nothing it had acknowledged."""
    group, product = f"shop-{run_id}", f"p-{run_id}"
    checkpoint = ask(service.groups, {"type": "ShowGroup", "group": group})["result"]["checkpoint"]
    restocks = 3
    member = subprocess.Popen(consumer_command(example_dir, service, group, "--limit", str(restocks)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    lines: list[str] = []
    joined = threading.Event()

    def read_lines() -> None:
        for line in member.stdout:
            lines.append(line)
            if line.startswith("joined "):
                joined.set()

    reader = threading.Thread(target=read_lines, name="consume.py stdout")
    reader.start()
    try:
        expect(joined.wait(30), f"consume.py did not join {group} within 30 s: {''.join(lines)}")
        service.restart_groups()
        positions = []
        for _ in range(restocks):
            command = {"type": "RestockProduct", "data": {"productId": product, "quantity": 1}}
            positions.append(ask(service.commands, command)["position"])
        try:
            member.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"consume.py did not get the {restocks} restocks within 120 s: {''.join(lines)}") from None
    finally:
        if member.poll() is None:
            member.kill()
            member.wait()
        reader.join()
    output = "".join(lines)
    print(f"--- consume.py {group} --limit {restocks}, the groups process restarted", output, sep="\n", end="")
    expect(member.returncode == 0, f"consume.py exited with {member.returncode}: {member.stderr.read().strip()}")
    expect(re.search(r"^  rejoin: .*not_a_member", output, re.M) is not None
           and re.search(r"^  rejoin: joined .* again$", output, re.M) is not None,
           "consume.py did not say it joined again after the restart")
    handled = [(int(p), outcome) for p, _, _, _, outcome in CONSUMER_LINE.findall(output)]
    expect(all(p > checkpoint for p, _ in handled),
           f"after the restart consume.py got events the group had acknowledged (up to {checkpoint}): {handled}")
    expect(sorted(p for p, outcome in handled if outcome == "ack") == positions,
           f"after the restart consume.py acknowledged {handled}, not the restocks at {positions}")
    shown = ask(service.groups, {"type": "ShowGroup", "group": group})["result"]
    expect(shown["checkpoint"] >= max(positions) and (shown["pending"], shown["members"]) == (0, 0),
           f"the group after the restart: {shown}")


# --- A lossy link between the demo and the worker ------------------------------------


class LossyLink:
    """Forwards the demo's commands and the worker's feed on a thread of its own, losing some.

    Commands: the first reply to a PurchaseProduct is dropped. Feed: a products message at
    position q is dropped when q % 5 == 0 and sent twice when q % 5 == 2.
    """

    def __init__(self, service: Service):
        self.context, self.service = zmq.Context.instance(), service
        self.commands = f"tcp://127.0.0.1:{free_port()}"
        self.feed = f"tcp://127.0.0.1:{free_port()}"
        self.dropped_replies = self.dropped_events = self.doubled_events = 0
        self.stopping = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.forward, name="lossy-link")

    def start(self) -> None:
        self.thread.start()
        self.ready.wait(5)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()

    def forward(self) -> None:  # every socket lives and dies on this thread
        with (
            self.context.socket(zmq.ROUTER) as front,  # the demo's commands
            self.context.socket(zmq.DEALER) as back,  # to the worker's commands
            self.context.socket(zmq.XPUB) as feed_out,  # the demo's SUB connects here
            self.context.socket(zmq.XSUB) as feed_in,  # from the worker's PUB
        ):
            for s in (front, back, feed_out, feed_in):
                s.linger = 0
            front.bind(self.commands)
            back.connect(self.service.commands)
            feed_out.bind(self.feed)
            feed_in.connect(self.service.feed)
            self.ready.set()
            clients, purchases = {}, set()  # request id -> the demo's socket; PurchaseProduct ids
            poller = zmq.Poller()
            for s in (front, back, feed_out, feed_in):
                poller.register(s, zmq.POLLIN)
            while not self.stopping.is_set():
                for s, _ in poller.poll(50):
                    if s is front:
                        client, _, payload = front.recv_multipart()
                        request = json.loads(payload)
                        clients[request["id"]] = client
                        if request["type"] == "PurchaseProduct":
                            purchases.add(request["id"])
                        back.send_multipart([b"", payload])
                    elif s is back:
                        _, payload = back.recv_multipart()
                        reply_id = json.loads(payload)["id"]
                        if reply_id in purchases and self.dropped_replies == 0:
                            self.dropped_replies += 1  # the demo never hears of it
                            continue
                        front.send_multipart([clients[reply_id], b"", payload])
                    elif s is feed_out:
                        feed_in.send(feed_out.recv())  # (un)subscriptions, upstream
                    else:
                        message = feed_in.recv_multipart()
                        position = json.loads(message[1])["position"]
                        copies = 1
                        if message[0] == b"products" and position % 5 == 0:
                            copies = 0
                            self.dropped_events += 1
                        elif message[0] == b"products" and position % 5 == 2:
                            copies = 2
                            self.doubled_events += 1
                        for _ in range(copies):
                            feed_out.send_multipart(message)


if __name__ == "__main__":
    sys.exit(main())
