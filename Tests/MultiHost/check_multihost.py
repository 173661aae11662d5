#!/usr/bin/env python3
"""Logbook scaled out over separate hosts, under load and faults.

Hosts are network namespaces this test creates and removes (netns.py): PostgreSQL on one,
two workers on two others, one feed process, two query processes, and the clients on one
more. Every process is the real `logbook` binary (LOGBOOK_BIN) or a real PostgreSQL server.

Under load from several clients that send to both workers (a DEALER connected to both, with
ZMQ_IMMEDIATE, resending the same command id on a fresh socket when a reply does not come):
one worker is killed with SIGKILL (the clients move to the other) and later started again,
and PostgreSQL is restarted once. Then it checks that

- every acknowledged command is in the log exactly once, with the events its reply named
  (the same positions and eventIds);
- positions are 1…head with no hole, and each stream's versions are 1…n with no hole;
- a subscriber that followed the feed during the whole run saw every event of its topics
  once, in position order, each the log's event at its position by eventId (the feed's own
  recipe: `previous` marks and ReadLog);
- both query processes answer the same as a model rebuilt from the log.

It prints the figures (commands acknowledged, kills, restarts, lost, duplicated, holes)
and exits 1 on any violation. Where namespaces cannot be made (not root, no iproute2), it
says so and exits 0 without running; CI runs as root, where it runs.
"""
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "examples" / "python"))

from netns import TestNetwork  # noqa: E402

try:
    import zmq  # noqa: E402
except ImportError:
    sys.exit("multi-host: pyzmq is missing (scripts/install-deps.sh installs it)")

import logbook as example  # noqa: E402  (the Python example client: FeedFollower, RequestClient)

LOGBOOK = os.path.abspath(os.environ.get("LOGBOOK_BIN", ROOT / ".build" / "debug" / "logbook"))
CLIENTS = int(os.environ.get("MULTIHOST_CLIENTS", "6"))
SECONDS = float(os.environ.get("MULTIHOST_SECONDS", "24"))
HOT_PRODUCTS = 4
PORTS = {"commands": 5555, "feed": 5556, "queries": 5557, "log": 5558, "hints": 5559}
RETRYABLE = {"unavailable", "timeout"}
NAME = "multi-host"  # the prefix of every line printed (a test importing this module sets its own)


def note(text):
    print(f"{NAME}: {text}", flush=True)


def pg_bin():
    for directory in sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (directory / "initdb").exists():
            return directory
    sys.exit("multi-host: no PostgreSQL server binaries (scripts/install-deps.sh installs them)")


class Cluster:
    """The processes of the run, each on its host, with their logs in the work directory."""

    def __init__(self, net, work, url=None):
        """`url`: the log's database; by default the one start_postgres makes on host db."""
        self.net = net
        self.work = work
        self.processes = {}
        self.bin = pg_bin()
        self.pgdata = work / "pg" / "data"
        self.url = url or f"postgresql://postgres@{net.address('db')}:5432/logbook"

    def endpoint(self, host, name):
        return f"tcp://{self.net.address(host)}:{PORTS[name]}"

    # PostgreSQL, on host db, as the postgres user.
    def as_postgres(self, argv):
        return ["runuser", "-u", "postgres", "--"] + argv if os.geteuid() == 0 else argv

    def start_postgres(self):
        pg = self.work / "pg"
        pg.mkdir()
        if os.geteuid() == 0:
            shutil.chown(pg, "postgres", "postgres")
        subprocess.run(
            self.as_postgres([str(self.bin / "initdb"), "-D", str(self.pgdata), "-U", "postgres", "--auth=trust",
                              "-E", "UTF8", "--locale=C"]),
            check=True, capture_output=True)
        with open(self.pgdata / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.net.address('db').rsplit('.', 1)[0]}.0/24 trust\n")
        self.pg_ctl("start")
        self.net.run("db", self.as_postgres([str(self.bin / "psql"), "-h", str(pg), "-U", "postgres", "-q", "-c",
                                              "CREATE DATABASE logbook"]), check=True, capture_output=True)

    def pg_ctl(self, action):
        options = f"-p 5432 -k {self.work / 'pg'} -c listen_addresses={self.net.address('db')} -c fsync=on"
        argv = [str(self.bin / "pg_ctl"), "-D", str(self.pgdata), "-l", str(self.work / "pg" / "server.log"),
                "-w", "-t", "60", "-m", "fast", action, "-o", options]
        self.net.run("db", self.as_postgres(argv), check=True, capture_output=True)

    # Logbook's processes.
    @property
    def master_key(self):
        """The master key every worker and the feed process share (one key store in the database)."""
        path = self.work / "master.key"
        if not path.exists():
            subprocess.run([LOGBOOK, "keygen", "--master", str(path)], check=True, capture_output=True)
        return path

    def start(self, name, host, argv):
        log = open(self.work / f"{name}.log", "ab")
        directory = self.work / name
        directory.mkdir(exist_ok=True)
        process = self.net.popen(host, [LOGBOOK] + argv + ["--data-dir", str(directory), "--log-level", "info"],
                                 stdout=log, stderr=log)
        self.processes[name] = process
        return process

    def start_worker(self, name):
        host = name
        return self.start(name, host, [
            "run", "worker", "--store", self.url, "--master-key", str(self.master_key),
            "--commands", self.endpoint(host, "commands"), "--log", self.endpoint(host, "log"),
            "--hints", self.endpoint("feed", "hints")])

    def start_feed(self):
        return self.start("feed", "feed", [
            "run", "feed", "--store", self.url, "--master-key", str(self.master_key),
            "--feed", self.endpoint("feed", "feed"),
            "--log", self.endpoint("feed", "log"), "--hints", self.endpoint("feed", "hints")])

    def start_query(self, name):
        return self.start(name, name, [
            "run", "query", "--feed", self.endpoint("feed", "feed"), "--log", self.endpoint("feed", "log"),
            "--queries", self.endpoint(name, "queries")])

    def kill(self, name):
        process = self.processes.pop(name)
        process.kill()
        process.wait()

    def stop_logbook(self):
        """Stops Logbook's processes."""
        stop_processes(self.processes.values(), 10)
        self.processes.clear()

    def stop_all(self):
        self.stop_logbook()
        if (self.pgdata / "postmaster.pid").exists():
            self.pg_ctl("stop")


def stop_processes(processes, seconds):
    """SIGTERM to every process, then waits for each, killing those still there after `seconds`."""
    processes = list(processes)
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Client(threading.Thread):
    """One client in the clients' host: sends commands to both workers until told to stop.

    A command whose reply does not come (a killed worker, PostgreSQL restarting) or comes as
    `unavailable` is sent again with the same id on a fresh socket, until it is answered.
    """

    def __init__(self, number, endpoints, stop):
        super().__init__(name=f"client-{number}", daemon=True)
        self.number = number
        self.endpoints = endpoints
        self.stop_event = stop
        self.context = zmq.Context.instance()
        self.acknowledged = {}  # command id -> reply
        self.timeline = []  # (when the attempt answered started, when its ok reply came), monotonic
        self.refused = {}  # command id -> error code (a decision, recorded like any other)
        self.resent = 0
        self.unanswered = []  # ids still without an answer when the run ended
        self.random = random.Random(number)
        self.products = []

    def socket(self):
        socket = self.context.socket(zmq.DEALER)
        socket.linger = 0
        socket.setsockopt(zmq.IMMEDIATE, 1)
        for endpoint in self.endpoints:
            socket.connect(endpoint)
        return socket

    def command(self):
        own = f"c{self.number}-{len(self.products)}"
        if not self.products or self.random.random() < 0.2:
            self.products.append(own)
            return "AddProduct", {"productId": own, "name": f"thing {own}", "price": "1.50",
                                  "category": "food", "stock": 1}
        target = self.random.choice(self.products if self.random.random() < 0.5 else
                                    [f"hot-{n}" for n in range(HOT_PRODUCTS)])
        return "RestockProduct", {"productId": target, "quantity": self.random.randint(1, 5)}

    def run(self):
        socket = self.socket()
        while not self.stop_event.is_set():
            kind, data = self.command()
            command_id = str(uuid.uuid4())
            document = json.dumps({"id": command_id, "type": kind, "data": data}).encode()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                attempt = time.monotonic()
                try:
                    socket.send_multipart([b"", document], flags=zmq.NOBLOCK)
                except zmq.Again:
                    pass  # no worker connected at the moment: wait out this attempt
                reply = self.wait(socket, command_id, 1500)
                if reply is not None and (reply["ok"] or reply["error"]["code"] not in RETRYABLE):
                    break
                self.resent += 1
                socket.close()
                socket = self.socket()
                time.sleep(0.1)
            else:
                self.unanswered.append(command_id)
                continue
            if reply["ok"]:
                self.acknowledged[command_id] = reply
                self.timeline.append((attempt, time.monotonic()))
            else:
                self.refused[command_id] = reply["error"]["code"]
        socket.close()

    @staticmethod
    def wait(socket, command_id, milliseconds):
        end = time.monotonic() + milliseconds / 1000
        while (left := end - time.monotonic()) > 0:
            if not socket.poll(left * 1000):
                return None
            reply = json.loads(socket.recv_multipart()[-1])
            if reply.get("id") == command_id:
                return reply
        return None


class Subscriber(threading.Thread):
    """Follows the whole feed with the example's FeedFollower and records what it hands out."""

    def __init__(self, feed, log, stop):
        super().__init__(name="subscriber", daemon=True)
        self.context = zmq.Context.instance()
        self.feed, self.log = feed, log
        self.stop_event = stop
        self.positions = []
        self.event_ids = []  # the eventId of each event handed out, in the order of positions
        self.failures = 0
        self.last_failure = None
        self.follower = None

    def run(self):
        log = example.RequestClient(self.context, self.log, timeout_ms=2000, attempts=1)
        self.follower = example.FeedFollower(self.context, self.feed, log, ["users", "posts", "products", "orders"])
        while not self.stop_event.is_set():
            self.step(log)
        log.close()
        self.follower.close()

    def step(self, log):
        try:
            for event in self.follower.poll(200):
                self.positions.append(event["position"])
                self.event_ids.append(event["eventId"])
        except (example.NoReply, example.Refused) as failure:
            # The feed process's log socket did not answer, or its database is away: the
            # cursor stays, and the next poll reads the log again.
            self.failures += 1
            self.last_failure = repr(failure)
            time.sleep(0.2)


def retrying(body, attempts=20):
    """`body()`, tried again while the service answers `unavailable` (PostgreSQL coming back)."""
    for attempt in range(attempts):
        try:
            return body()
        except example.Refused as refused:
            if refused.code != "unavailable" or attempt == attempts - 1:
                raise
            time.sleep(0.5)


def read_whole_log(context, endpoint):
    log = example.RequestClient(context, endpoint, timeout_ms=10_000, attempts=3)
    events = []
    position = 1
    while True:
        page = retrying(lambda: example.expect_ok(log.request(
            {"id": example.new_id(), "type": "ReadLog", "from": position, "limit": 10_000})))
        events.extend(page["events"])
        if page["next"] > page["head"]:
            break
        position = page["next"]
    log.close()
    return events


def all_products(context, endpoint, head):
    queries = example.RequestClient(context, endpoint, timeout_ms=30_000, attempts=2)
    products, page = {}, 1
    while True:
        answer = retrying(lambda: example.query(queries, "ListProducts", {"page": page, "perPage": 100},
                                                min_position=head))
        for item in answer["result"]["items"]:
            products[item["productId"]] = (item["stock"], item["price"], item["name"])
        if page * 100 >= answer["result"]["total"]:
            break
        page += 1
    queries.close()
    return products


def check(events, clients, subscriber, q1, q2):
    problems = []
    head = events[-1]["position"] if events else 0
    positions = [event["position"] for event in events]
    holes = sum(1 for a, b in zip([0] + positions, positions) if b != a + 1)
    if positions != list(range(1, head + 1)):
        problems.append(f"positions are not 1…{head} without holes ({holes} breaks)")
    versions = {}
    for event in events:
        expected = versions.get(event["stream"], 0) + 1
        if event["version"] != expected:
            problems.append(f"stream {event['stream']}: version {event['version']} where {expected} was due")
        versions[event["stream"]] = event["version"]
    by_command = {}
    for event in events:
        by_command.setdefault(event["metadata"]["commandId"], []).append(event["position"])
    acknowledged = {}
    for client in clients:
        acknowledged.update(client.acknowledged)
    by_position = {event["position"]: event["eventId"] for event in events}
    lost = duplicated = 0
    for command_id, reply in acknowledged.items():
        named = [(event["position"], event["eventId"]) for event in reply["events"]]
        logged = [(position, by_position[position]) for position in by_command.get(command_id, [])]
        if not logged and named:
            lost += 1
        elif logged != named:
            duplicated += 1
    if lost:
        problems.append(f"{lost} acknowledged commands are not in the log")
    if duplicated:
        problems.append(f"{duplicated} acknowledged commands are in the log other than their reply says")
    topical = [event["position"] for event in events if event["stream"].split("-", 1)[0] in
               ("user", "post", "product", "order")]
    # The subscriber's events are the log's by eventId, not only by position.
    mismatches = sum(1 for position, event_id in zip(subscriber.positions, subscriber.event_ids)
                     if by_position.get(position) != event_id)
    if mismatches:
        problems.append(f"{mismatches} events the subscriber saw are not the log's event at their position")
    if subscriber.positions != topical:
        seen = subscriber.positions
        problems.append(f"the subscriber saw {len(seen)} events, the log has {len(topical)} of its topics; first "
                        f"difference at index {next((i for i, (a, b) in enumerate(zip(seen, topical)) if a != b), min(len(seen), len(topical)))}")
    model = {}
    for event in events:
        data = event["data"]
        if event["type"] == "ProductAdded":
            model[data["productId"]] = (data["stock"], data["price"], data["name"])
        elif event["type"] == "ProductRestocked":
            stock, price, name = model[data["productId"]]
            model[data["productId"]] = (data["stock"], price, name)
    for name, answer in (("q1", q1), ("q2", q2)):
        if answer != model:
            differing = [key for key in set(answer) | set(model) if answer.get(key) != model.get(key)]
            problems.append(f"{name} differs from the log's model on {len(differing)} products, e.g. {differing[:3]}")
    return problems, {"head": head, "acknowledged": len(acknowledged), "lost": lost, "duplicated": duplicated,
                      "holes": holes, "subscriberMismatches": mismatches}


def main():
    reason = TestNetwork.unavailable()
    if reason:
        note(f"skipped: {reason}")
        return 0
    if not os.access(LOGBOOK, os.X_OK):
        sys.exit(f"multi-host: no logbook binary at {LOGBOOK} (set LOGBOOK_BIN)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="logbook-multihost-"))
    os.chmod(work, 0o755)
    hosts = ["db", "w1", "w2", "feed", "q1", "q2", "clients"]
    started = time.monotonic()
    with TestNetwork(hosts) as net:
        cluster = Cluster(net, work)
        try:
            return run(net, cluster, work, started)
        finally:
            cluster.stop_all()
            if os.environ.get("MULTIHOST_KEEP"):
                note(f"kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)


def run(net, cluster, work, started):
    cluster.start_postgres()
    cluster.start_worker("w1")
    cluster.start_worker("w2")
    cluster.start_feed()
    cluster.start_query("q1")
    cluster.start_query("q2")
    workers = [cluster.endpoint("w1", "commands"), cluster.endpoint("w2", "commands")]
    # The clients and the subscriber run in the clients' host: this process joins its namespace.
    join_namespace(net.hosts["clients"]["namespace"])
    context = zmq.Context.instance()
    seed = Client(-1, workers, threading.Event())
    for n in range(HOT_PRODUCTS):
        send_until_answered(seed, "AddProduct", {"productId": f"hot-{n}", "name": f"hot {n}", "price": "2.00",
                                                 "category": "food", "stock": 1})
    stop = threading.Event()
    # The subscriber follows until it has seen the whole log, after the clients stopped.
    subscriber = Subscriber(cluster.endpoint("feed", "feed"), cluster.endpoint("feed", "log"), threading.Event())
    subscriber.start()
    clients = [Client(n, workers, stop) for n in range(CLIENTS)]
    for client in clients:
        client.start()
    phase = SECONDS / 4
    time.sleep(phase)
    note("kill -9 of worker w1")
    cluster.kill("w1")
    time.sleep(phase)
    note("restarting PostgreSQL")
    cluster.pg_ctl("restart")
    time.sleep(phase)
    note("starting worker w1 again")
    cluster.start_worker("w1")
    time.sleep(phase)
    stop.set()
    for client in clients:
        client.join(90)
    events = read_whole_log(context, cluster.endpoint("feed", "log"))
    head = events[-1]["position"] if events else 0
    # Let the subscriber reach the head before it stops.
    deadline = time.monotonic() + 30
    topical = sum(1 for event in events if not event["stream"].startswith("email-"))
    while len(subscriber.positions) < topical and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = subscriber.is_alive()
    subscriber.stop_event.set()
    subscriber.join(10)
    q1 = all_products(context, cluster.endpoint("q1", "queries"), head)
    q2 = all_products(context, cluster.endpoint("q2", "queries"), head)
    clients.append(seed)
    problems, figures = check(events, clients, subscriber, q1, q2)
    unanswered = sum(len(client.unanswered) for client in clients)
    if unanswered:
        problems.append(f"{unanswered} commands were never answered within a minute of retries")
    figures.update({
        "clients": CLIENTS, "kills": 1, "postgresRestarts": 1, "resent": sum(client.resent for client in clients),
        "refused": sum(len(client.refused) for client in clients), "subscriberEvents": len(subscriber.positions),
        "subscriberHoles": subscriber.follower.holes if subscriber.follower else None,
        "subscriberFailures": subscriber.failures, "subscriberLastFailure": subscriber.last_failure,
        "subscriberAliveAtEnd": alive,
        "seconds": round(time.monotonic() - started, 1),
    })
    note("figures " + json.dumps(figures))
    for problem in problems:
        note(f"FAILED: {problem}")
    if problems:
        for name in ("w1", "w2", "feed", "q1", "q2"):
            log = work / f"{name}.log"
            if log.exists():
                note(f"--- last lines of {name}.log")
                print("\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        return 1
    note("ok: every acknowledged command once, no hole, the feed in order, both query processes agree with the log")
    return 0


def send_until_answered(client, kind, data):
    socket = client.socket()
    command_id = str(uuid.uuid4())
    document = json.dumps({"id": command_id, "type": kind, "data": data}).encode()
    for _ in range(40):
        try:
            socket.send_multipart([b"", document], flags=zmq.NOBLOCK)
        except zmq.Again:
            pass
        reply = client.wait(socket, command_id, 1500)
        if reply is not None and reply["ok"]:
            client.acknowledged[command_id] = reply
            socket.close()
            return
        socket.close()
        socket = client.socket()
        time.sleep(0.25)
    sys.exit(f"multi-host: the workers did not accept {kind} {data}; see {client.endpoints}")


def join_namespace(namespace):
    """Moves this process into `namespace` (for the sockets it opens from now on)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    with open(f"/var/run/netns/{namespace}") as handle:
        if libc.setns(handle.fileno(), 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), f"setns into {namespace}")


if __name__ == "__main__":
    sys.exit(main())
