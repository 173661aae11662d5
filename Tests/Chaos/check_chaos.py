#!/usr/bin/env python3
"""Logbook's own chaos suite, small enough for CI: one real worker and one
real query process (LOGBOOK_BIN) on a SQLite log, put through

- slow readers: DEALERs with RCVHWM 1 that send 100 `ReadLog` requests with limit 10,000 and
  never read (one, then two at once), while a well-behaved client reads the log; the worker's
  peak RSS (VmHWM) must stay within a stated bound above what it was before;
- kill -9 of the worker under load, several times (the clients resend unanswered commands
  with the same id on a fresh socket, as a real client must);
- kill -9 of the query process under load, several times; it must catch up with the log;
- a fuzz pass: random and mutated frames on every socket, random subscriptions on the feed,
  raw bytes on every port; both processes must keep answering;
- SIGTERM under load: the worker must exit 0, and every command the log holds got its reply;
  then the query process, with queries in flight, must exit 0 too;
- consumer groups (chaos_groups.py, a worker and a groups process of their own): members
  running a command per event, killed with kill -9 again and again, the groups process
  killed once, POISON events parked, retried and skipped; every event handled at least
  once, each stream in order across members, the checkpoint never ahead of what was handled.

Each load ends by checking the log against every acknowledged reply: no acknowledged command
lost, none applied twice. It prints one summary line of figures and exits 1 on a violation.
"""

import argparse
import json
import os
import pathlib
import random
import shutil
import sys
import tempfile
import time

try:
    import zmq
except ImportError as missing:
    print(f"chaos: {missing}: needs pyzmq (python3 -m pip install pyzmq)", file=sys.stderr)
    sys.exit(2)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from chaos_cluster import Cluster, ClusterFailure  # noqa: E402
from chaos_fuzz import fuzz_feed, fuzz_raw, fuzz_router  # noqa: E402
from chaos_groups import GroupsChaos  # noqa: E402
from chaos_load import CommandLoad, check_ledger  # noqa: E402

# What one slow reader may add to the worker's peak RSS: the log socket queues 2 pages per
# client, its outbox keeps 8 MiB (or one page), libzmq's I/O thread writes one more (a page
# is at most ~4.5 MB), plus the allocator's slack. See docs/architecture.md (memory bounds).
SLOW_READER_BOUND_MIB = 32

PARTS = ["slow", "killworker", "killquery", "fuzz", "sigterm", "groups"]


class Suite:
    def __init__(self, cluster: Cluster, quick: bool):
        self.cluster = cluster
        self.quick = quick
        self.failures: list[str] = []
        self.figures = {"kills": 0, "acknowledged": 0, "lost": 0, "duplicated": 0, "frames fuzzed": 0}
        self.rss: dict[int, tuple[int, int]] = {}
        self.groups_figures: dict | None = None

    def note(self, text: str):
        print(f"chaos: {text}", flush=True)

    def fail(self, text: str):
        self.note(f"FAIL: {text}")
        self.failures.append(text)

    def account(self, name: str, load: CommandLoad, unreplied_is_failure: bool = False):
        if load.failure:
            raise load.failure
        ledger = check_ledger(load, self.cluster.events_by_command())
        self.figures["acknowledged"] += ledger.acknowledged
        self.figures["lost"] += len(ledger.lost)
        self.figures["duplicated"] += len(ledger.duplicated)
        self.note(f"{name}: sent {load.figures.sent}, acknowledged {ledger.acknowledged}, resent "
                  f"{load.figures.resent}, refused {load.figures.refused}, unanswered {load.figures.unanswered}, "
                  f"lost {len(ledger.lost)}, duplicated {len(ledger.duplicated)}, "
                  f"in the log without a reply {len(ledger.unreplied)}")
        if ledger.lost:
            self.fail(f"{name}: acknowledged but not in the log: {ledger.lost[:5]}")
        if ledger.duplicated:
            self.fail(f"{name}: applied more than once: {ledger.duplicated[:5]}")
        if load.refused:
            self.fail(f"{name}: refused: {list(load.refused.items())[:5]}")
        if unreplied_is_failure and ledger.unreplied:
            self.fail(f"{name}: {len(ledger.unreplied)} commands committed without a reply: {ledger.unreplied[:5]}")
        if not unreplied_is_failure and load.figures.unanswered:
            self.fail(f"{name}: {load.figures.unanswered} commands never answered")

    # -- scenarios ---------------------------------------------------------------------------

    def fill(self):
        """Enough events that a `ReadLog` with limit 10,000 returns a full page (megabytes)."""
        load = CommandLoad(self.cluster.endpoints["commands"], "fill", clients=4, window=64, limit=12_000)
        load.start()
        load.join()
        self.account("fill", load)

    def slow_readers(self, attackers: int):
        cluster = self.cluster
        cluster.kill("worker")  # a fresh worker, so VmHWM starts from its own baseline
        cluster.start("worker")
        context = zmq.Context.instance()
        good = context.socket(zmq.DEALER)
        good.linger = 0
        good.connect(cluster.endpoints["log"])

        def read_page(identifier: str, limit: int, seconds: float) -> bool:
            good.send_multipart([b"", json.dumps({"id": identifier, "type": "ReadLog", "from": 1,
                                                  "limit": limit}).encode()])
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                if good.poll(left * 1000) and json.loads(good.recv_multipart()[-1]).get("id") == identifier:
                    return True
            return False

        # Warm up as a reader would (the page buffer, the statement), then take the baseline.
        for warm in range(3):
            read_page(f"warm-{warm}", 10_000, 30)
        baseline = cluster.peak_rss_kib("worker")
        sockets = []
        for _ in range(attackers):
            attacker = context.socket(zmq.DEALER)
            attacker.rcvhwm = 1
            attacker.linger = 0
            attacker.connect(cluster.endpoints["log"])
            for number in range(100):
                attacker.send_multipart([b"", json.dumps({"id": f"slow-{number}", "type": "ReadLog", "from": 1,
                                                          "limit": 10_000}).encode()])
            sockets.append(attacker)
        served = sum(read_page(f"good-{number}", 1_000, 20) for number in range(10))
        # Until the worker has done with every attacker's request: its peak stops moving.
        peak, steady_since, deadline = cluster.peak_rss_kib("worker"), time.monotonic(), time.monotonic() + 60
        while time.monotonic() - steady_since < 3 and time.monotonic() < deadline:
            time.sleep(0.25)
            if (now := cluster.peak_rss_kib("worker")) != peak:
                peak, steady_since = now, time.monotonic()
        served += read_page("good-last", 10_000, 30)
        peak = cluster.peak_rss_kib("worker")
        for attacker in sockets:
            attacker.close()
        good.close()
        growth_mib = (peak - baseline) / 1024
        self.rss[attackers] = (baseline, peak)
        self.note(f"slow readers ×{attackers}: worker peak RSS {baseline // 1024} MiB before, {peak // 1024} MiB "
                  f"under attack (+{growth_mib:.0f} MiB; bound {SLOW_READER_BOUND_MIB * attackers} MiB); "
                  f"well-behaved reads served {served}/11")
        if growth_mib > SLOW_READER_BOUND_MIB * attackers:
            self.fail(f"slow readers ×{attackers}: peak RSS grew {growth_mib:.0f} MiB")
        if served != 11:
            self.fail(f"slow readers ×{attackers}: a well-behaved client got {served}/11 of its pages")

    def kill_under_load(self, role: str, kills: int, clients: int):
        """Kills `role` with SIGKILL `kills` times under load, starting it again each time."""
        load = CommandLoad(self.cluster.endpoints["commands"], f"kill{role[0]}", clients=clients, window=16)
        load.start()
        for _ in range(kills):
            time.sleep(random.uniform(0.5, 1.2))
            self.cluster.kill(role)
            self.figures["kills"] += 1
            time.sleep(random.uniform(0.0, 0.3))
            self.cluster.start(role)
        time.sleep(1)
        load.stop(drain_seconds=30)
        load.join()
        self.account(f"kill -9 {role} ×{kills}", load)

    def kill_query(self, kills: int):
        self.kill_under_load("query", kills, clients=4)
        head = self.cluster.head()
        deadline = time.monotonic() + 60
        applied = None
        while time.monotonic() < deadline:
            status = self.cluster.status("queries", 2_000)
            applied = status and status["result"].get("checkpoint", status["result"].get("applied"))
            if applied is not None and applied >= head:
                break
            time.sleep(0.2)
        self.note(f"query process after its kills: applied {applied} of head {head}")
        if applied is None or applied < head:
            self.fail(f"the query process did not catch up: {applied} of {head}")

    def fuzz(self, messages: int):
        rng = random.Random(int(os.environ.get("CHAOS_SEED", "14")))
        context = zmq.Context.instance()
        frames = 0
        for name in ("commands", "queries", "log"):
            frames += fuzz_router(context, self.cluster.endpoints[name], rng, messages)
        frames += fuzz_feed(context, self.cluster.endpoints["feed"], rng, messages)
        for name in ("commands", "queries", "log", "feed"):
            frames += fuzz_raw(self.cluster.endpoints[name], rng, 50)
        self.figures["frames fuzzed"] += frames
        for role, socket_name in (("worker", "commands"), ("query", "queries")):
            if not self.cluster.alive(role) or self.cluster.status(socket_name, 5_000) is None:
                self.fail(f"fuzz: the {role} stopped answering: {self.cluster.log_tail(role)}")
        self.note(f"fuzz: {frames} frames on commands, queries, log and feed; both processes answer")

    def sigterm(self):
        load = CommandLoad(self.cluster.endpoints["commands"], "term", clients=16, window=32, resend=False)
        load.start()
        time.sleep(1.5)
        status = self.cluster.terminate("worker")
        load.stop(drain_seconds=5)
        load.join()
        self.note(f"SIGTERM worker under load: exit status {status}")
        if status != 0:
            self.fail(f"the worker exited {status} on SIGTERM")
        self.account("SIGTERM worker", load, unreplied_is_failure=True)
        self.cluster.start("worker")
        # The query process with queries in flight.
        context = zmq.Context.instance()
        answered_before = self.cluster.status("queries", 5_000)["result"]["queriesAnswered"]
        asker = context.socket(zmq.DEALER)
        asker.linger = 0
        asker.connect(self.cluster.endpoints["queries"])
        def ask(numbers):
            for number in numbers:
                asker.send_multipart([b"", json.dumps({"id": f"q-{number}", "type": "ListProducts",
                                                       "data": {"perPage": 50}}).encode()])
        # A first round until one reply is back (the process is serving them), then a second
        # round sent just before SIGTERM: some of it is answered, some never read.
        ask(range(400))
        if not asker.poll(10_000):
            self.fail("the query process answered none of 400 queries within 10 s")
        asker.recv_multipart()
        received = 1
        ask(range(400, 800))
        status = self.cluster.terminate("query")
        while asker.poll(1_000):
            asker.recv_multipart()
            received += 1
        asker.close()
        stopped = [line for line in self.cluster.log_tail("query", 50).splitlines() if "query loop stopped" in line]
        answered = int(stopped[-1].split("answered=")[1].split()[0]) - answered_before if stopped else None
        self.note(f"SIGTERM query process with queries in flight: exit status {status}, answered {answered}, "
                  f"replies received {received} of 800 sent")
        if status != 0:
            self.fail(f"the query process exited {status} on SIGTERM")
        if not answered:
            self.fail(f"the query process logged no answered query before it stopped ({answered})")
        if answered != received:
            self.fail(f"the query process answered {answered} queries, the client received {received}")
        self.cluster.start("query")

    def groups(self, binary: pathlib.Path, workdir: pathlib.Path):
        """The consumer-groups scenario, on a worker and a groups process of its own."""
        scenario = GroupsChaos(binary, workdir, self.note, self.fail, int(os.environ.get("CHAOS_SEED", "14")))
        self.groups_figures = scenario.run()
        self.note("groups: " + ", ".join(f"{name} {value}" for name, value in self.groups_figures.items()))


def groups_summary(figures: dict | None) -> str:
    if figures is None:
        return "not run"
    return (f"{figures['events']} events over {figures['streams']} streams, {figures['deliveries']} deliveries, "
            f"{figures['redeliveries']} redeliveries, {figures['repeats']} repeats, {figures['member kills']} "
            f"member kills and {figures['groups kills']} of the groups process, {figures['parked']} parked")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="run only these parts (the first five after the fill); repeatable")
    parser.add_argument("--keep", action="store_true", help="keep the working folder (logs, data)")
    options = parser.parse_args()
    binary = pathlib.Path(os.environ.get("LOGBOOK_BIN", ".build/debug/logbook")).resolve()
    if not binary.exists():
        print(f"chaos: no logbook binary at {binary} (set LOGBOOK_BIN)", file=sys.stderr)
        return 2
    random.seed(int(os.environ.get("CHAOS_SEED", "14")))
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="logbook-chaos-"))
    cluster = Cluster(binary, workdir)
    started = time.monotonic()
    suite = Suite(cluster, quick=True)
    parts = options.only or PARTS
    try:
        if set(parts) - {"groups"}:
            cluster.start("worker")
            cluster.start("query")
            suite.fill()
        if "slow" in parts:
            suite.slow_readers(1)
            suite.slow_readers(2)
        if "killworker" in parts:
            suite.kill_under_load("worker", 6, clients=8)
        if "killquery" in parts:
            suite.kill_query(3)
        if "fuzz" in parts:
            suite.fuzz(5_000)
        if "sigterm" in parts:
            suite.sigterm()
        cluster.stop_all()
        if "groups" in parts:
            (workdir / "groups-scenario").mkdir()
            suite.groups(binary, workdir / "groups-scenario")
    except ClusterFailure as error:
        suite.fail(str(error))
    finally:
        cluster.stop_all()
        if options.keep or suite.failures:
            print(f"chaos: working folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    figures = suite.figures
    rss = ", ".join(f"×{n}: {before // 1024}→{peak // 1024} MiB" for n, (before, peak) in sorted(suite.rss.items()))
    print(f"chaos summary: kills {figures['kills']}, acknowledged {figures['acknowledged']}, lost {figures['lost']}, "
          f"duplicated {figures['duplicated']}, frames fuzzed {figures['frames fuzzed']}, "
          f"peak RSS under slow readers {rss or 'not measured'}, "
          f"consumer groups: {groups_summary(suite.groups_figures)}, {time.monotonic() - started:.0f} s, "
          f"{'FAILED' if suite.failures else 'passed'}")
    return 1 if suite.failures else 0


if __name__ == "__main__":
    sys.exit(main())
