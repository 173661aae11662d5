#!/usr/bin/env python3
"""Logbook on three PostgreSQL nodes under Patroni, on separate hosts, failed over under load.

Hosts are network namespaces (Tests/MultiHost/netns.py): etcd on one, a Patroni-managed
PostgreSQL (deploy/patroni/patroni.yml.template, synchronous mode) on each of pg1-pg3, two
workers, a feed process (no read store), two query processes and the clients, each on its
own host. The workers and the feed process get every node in their connection string
(target_session_attrs=read-write). Under the load of Tests/MultiHost/check_multihost.py
(its clients and its subscriber, imported), the primary is failed over again and again, each
failure healed before the next, in three kinds:

1. kill -9 of the primary's PostgreSQL (postmaster and children); Patroni stays, and
   either restarts it or fails over (both are fine; which one is recorded);
2. kill -9 of the primary's Patroni and PostgreSQL; healed by starting Patroni again,
   which rejoins as a standby (pg_rewind);
3. the primary's link cut, restored once another node is the leader.

An old primary that has not rejoined as a standby within a minute (Patroni's pg_rewind can
fail) is reinitialized, as an operator would (`patronictl reinit`); the figures count those.

After each fault it waits (bounded) for a leader, other than the old one where that is due,
with a synchronous standby, and measures how long commands were unavailable: from the
fault to the first command acknowledged by an attempt sent after it. At the end it checks,
as check_multihost does, that every acknowledged command is in the log once with the events
(by eventId) its reply named, that positions have no hole, that the subscriber saw the log's
events (by eventId), and that both query processes equal the fold of the log. It prints the
figures as JSON and exits 1 on any violation; where namespaces cannot be made, or Patroni,
etcd or PostgreSQL are missing, it says "skipped: …" and exits 0.
"""
import collections
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "Tests" / "MultiHost"))

import check_multihost as mh  # noqa: E402
from check_multihost import (  # noqa: E402
    Client, Subscriber, all_products, check, join_namespace, note, read_whole_log, send_until_answered)
from netns import TestNetwork  # noqa: E402

mh.NAME = "failover"
zmq = mh.zmq

CLIENTS = int(os.environ.get("FAILOVER_CLIENTS", "6"))
KINDS = [int(kind) for kind in os.environ.get("FAILOVER_KINDS", "1,2,3,1,2,3").split(",")]
SETTLE = float(os.environ.get("FAILOVER_SETTLE", "3"))  # seconds of load between failovers
PATIENCE = 120  # seconds allowed for each wait on Patroni
REJOIN_PATIENCE = 60  # seconds an old primary has to rejoin by itself before it is reinitialized
PG_NODES = ["pg1", "pg2", "pg3"]
REST_PORT, PG_PORT, ETCD_PORT, ETCD_PEER_PORT = 8008, 5432, 2379, 2380
KIND_NAMES = {1: "postgres-kill", 2: "patroni-and-postgres-kill", 3: "link-cut"}


def as_postgres(argv):
    """argv as the postgres user, in place (no process between: the pid is the program's)."""
    if os.geteuid() != 0:
        return list(argv)
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups",
            "env", "HOME=/var/lib/postgresql"] + list(argv)


def wait_for(condition, what, seconds=PATIENCE, interval=0.2):
    """condition()'s first truthy value within `seconds`; raises TimeoutError saying `what` otherwise."""
    end = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(f"no {what} within {seconds} s")
        time.sleep(interval)


class HA:
    """etcd and the three Patroni nodes, each on its host, as the postgres user."""

    def __init__(self, net, work):
        self.net = net
        self.work = work
        self.dir = work / "ha"
        self.bin = mh.pg_bin()
        self.etcd = None
        self.patroni = {}  # host -> Popen of its Patroni

    def address(self, host):
        return self.net.address(host)

    def node_dir(self, host):
        return self.dir / host

    def start(self):
        self.dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        etcd = self.address("etcd")
        log = open(self.dir / "etcd.log", "ab")
        self.etcd = self.net.popen("etcd", as_postgres([
            "etcd", "--name", "logbook-etcd", "--data-dir", str(self.dir / "etcd"),
            "--listen-client-urls", f"http://{etcd}:{ETCD_PORT}",
            "--advertise-client-urls", f"http://{etcd}:{ETCD_PORT}",
            "--listen-peer-urls", f"http://{etcd}:{ETCD_PEER_PORT}",
            "--initial-advertise-peer-urls", f"http://{etcd}:{ETCD_PEER_PORT}",
            "--initial-cluster", f"logbook-etcd=http://{etcd}:{ETCD_PEER_PORT}"]), stdout=log, stderr=log)
        template = (ROOT / "deploy" / "patroni" / "patroni.yml.template").read_text()
        network = self.address("etcd").rsplit(".", 1)[0] + ".0/24"
        for host in PG_NODES:
            directory = self.node_dir(host)
            directory.mkdir(mode=0o700)
            if os.geteuid() == 0:
                shutil.chown(directory, "postgres", "postgres")
            fields = {"@NAME@": host, "@HOST@": self.address(host), "@REST_PORT@": str(REST_PORT),
                      "@PG_PORT@": str(PG_PORT), "@ETCD@": f"{etcd}:{ETCD_PORT}", "@NETWORK@": network,
                      "@DATA_DIR@": str(directory / "data"), "@BIN_DIR@": str(self.bin), "@DIR@": str(directory)}
            config = template
            for field, value in fields.items():
                config = config.replace(field, value)
            (directory / "patroni.yml").write_text(config)
            if os.geteuid() == 0:
                shutil.chown(directory / "patroni.yml", "postgres", "postgres")
            self.start_patroni(host)
        leader = wait_for(self.ready, "leader with a synchronous standby at the start")
        subprocess.run([str(self.bin / "psql"), "-h", self.address(leader), "-p", str(PG_PORT), "-U", "postgres",
                        "-q", "-c", "CREATE DATABASE logbook"], check=True, capture_output=True, timeout=60)
        # A synchronous commit is flushed on the standby, not yet replayed there; and libpq
        # does not go on to the next host when one refuses the connection (a database that
        # does not exist yet), so the processes must not start before every node has it.
        wait_for(lambda: all(self.has_database(host) for host in PG_NODES), "database logbook on every node")
        return leader

    def has_database(self, host):
        try:
            return subprocess.run([str(self.bin / "psql"), "-h", self.address(host), "-p", str(PG_PORT),
                                   "-U", "postgres", "-d", "logbook", "-Atq", "-c", "SELECT 1"],
                                  capture_output=True, timeout=5).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def start_patroni(self, host):
        log = open(self.dir / f"{host}.log", "ab")
        self.patroni[host] = self.net.popen(host, as_postgres(["patroni", str(self.node_dir(host) / "patroni.yml")]),
                                            stdout=log, stderr=log)

    @property
    def url(self):
        hosts = ",".join(f"{self.address(host)}:{PG_PORT}" for host in PG_NODES)
        return f"postgresql://postgres@{hosts}/logbook?target_session_attrs=read-write&connect_timeout=2"

    # Patroni's REST API, asked from the clients' host (this process is in its namespace).
    def answers(self, host, path):
        try:
            with urllib.request.urlopen(f"http://{self.address(host)}:{REST_PORT}/{path}", timeout=1) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def leader(self, among=PG_NODES):
        return next((host for host in among if self.answers(host, "leader")), None)

    def sync_standby(self, among=PG_NODES):
        return next((host for host in among if self.answers(host, "sync")), None)

    def streaming(self, leader):
        """The standbys streaming from `leader`'s PostgreSQL, by name."""
        return self.replication(leader, "state = 'streaming'")

    def attached_sync(self, leader):
        """The standbys streaming to `leader`'s PostgreSQL as synchronous ones, by name.

        Patroni's /sync answers from the synchronous-standby key, which right after a failover
        still names the old primary's standby: only the new primary itself knows one is attached.
        """
        return self.replication(leader, "sync_state = 'sync'")

    def replication(self, leader, condition):
        try:
            result = subprocess.run([str(self.bin / "psql"), "-h", self.address(leader), "-p", str(PG_PORT),
                                     "-U", "postgres", "-Atq", "-c",
                                     f"SELECT application_name FROM pg_stat_replication WHERE {condition}"],
                                    capture_output=True, text=True, timeout=3,
                                    env=dict(os.environ, PGCONNECT_TIMEOUT="2"))
        except subprocess.TimeoutExpired:
            return []
        return result.stdout.split() if result.returncode == 0 else []

    def ready(self, among=PG_NODES, avoid=None):
        """The leader among `among` with a synchronous standby streaming to it (not `avoid`), or None."""
        leader = self.leader(among)
        if leader is None or not self.sync_standby(among):
            return None
        return leader if [name for name in self.attached_sync(leader) if name != avoid] else None

    def postmaster(self, host):
        try:
            return int((self.node_dir(host) / "data" / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def kill_postgres(self, host):
        """kill -9 of the host's postmaster and its children; returns the postmaster's pid."""
        pid = self.postmaster(host)
        if pid is None:
            raise RuntimeError(f"no postmaster.pid on {host}")
        kill_tree(pid)
        return pid

    def kill_patroni(self, host):
        process = self.patroni.pop(host)
        process.kill()
        process.wait()

    def reinitialize(self, host):
        """What `patronictl reinit` does, by hand: the node's Patroni and every PostgreSQL
        process of its data directory stopped, the directory removed, Patroni started again;
        it then copies the leader afresh (pg_basebackup) and streams from it."""
        if host in self.patroni:
            self.kill_patroni(host)
        data = str(self.node_dir(host) / "data")
        for pid in processes_of(data):
            kill_tree(pid)
        shutil.rmtree(self.node_dir(host) / "data", ignore_errors=True)
        self.start_patroni(host)

    def stop(self):
        """Patroni stops its PostgreSQL; any left (a killed Patroni's) is stopped at once; etcd last."""
        mh.stop_processes(self.patroni.values(), 30)
        self.patroni.clear()
        for host in PG_NODES:
            data = self.node_dir(host) / "data"
            if (data / "postmaster.pid").exists():
                subprocess.run(as_postgres([str(self.bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                                            "stop"]), capture_output=True, timeout=60)
            pid = self.postmaster(host)
            if pid is not None and pid_alive(pid):
                kill_tree(pid)
        if self.etcd is not None:
            mh.stop_processes([self.etcd], 10)
            self.etcd = None


def kill_tree(pid):
    """kill -9 of `pid` and its children (a postmaster and its backends)."""
    for victim in [pid] + children(pid):
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass


def processes_of(data_dir):
    """The pids whose command line names `data_dir` (a postmaster: `postgres -D DIR`)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if data_dir.encode() in words:
                found.append(int(entry.name))
    return found


def children(pid):
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def missing():
    for program in ("patroni", "etcd", "setpriv"):
        if shutil.which(program) is None:
            return f"{program} is not installed (scripts/install-deps.sh installs it)"
    if not any((directory / "initdb").exists() for directory in pathlib.Path("/usr/lib/postgresql").glob("*/bin")):
        return "no PostgreSQL server binaries (scripts/install-deps.sh installs them)"
    return None


def main():
    reason = TestNetwork.unavailable() or missing()
    if reason:
        note(f"skipped: {reason}")
        return 0
    if not os.access(mh.LOGBOOK, os.X_OK):
        sys.exit(f"failover: no logbook binary at {mh.LOGBOOK} (set LOGBOOK_BIN)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="logbook-failover-"))
    os.chmod(work, 0o755)
    hosts = ["etcd"] + PG_NODES + ["w1", "w2", "feed", "q1", "q2", "clients"]
    started = time.monotonic()
    with TestNetwork(hosts) as net:
        # The clients, the subscriber and the REST probes run in the clients' host.
        join_namespace(net.hosts["clients"]["namespace"])
        ha = HA(net, work)
        cluster = None
        try:
            ha.start()
            # check_multihost's Logbook processes, on the Patroni nodes' multi-host string.
            cluster = mh.Cluster(net, work, ha.url)
            return run(net, ha, cluster, work, started)
        except BaseException:
            show_logs(work)
            raise
        finally:
            for host in PG_NODES:
                try:
                    net.restore(host)  # a link cut when a failure struck
                except RuntimeError:
                    pass
            if cluster is not None:
                cluster.stop_logbook()
            ha.stop()
            if os.environ.get("FAILOVER_KEEP"):
                note(f"kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)


def show_logs(work, lines=20):
    for name in ["w1", "w2", "feed", "q1", "q2"] + [f"ha/{host}" for host in PG_NODES]:
        log = work / f"{name}.log"
        if log.exists():
            note(f"--- last lines of {name}.log")
            print("\n".join(log.read_text(errors="replace").splitlines()[-lines:]), flush=True)


def first_ack_after(clients, moment):
    """When the first command whose answered attempt was sent at or after `moment` was acknowledged."""
    times = [acked for client in clients for attempt, acked in list(client.timeline) if attempt >= moment]
    return min(times) if times else None


def failover(ha, net, kind, clients):
    """One failure of the primary, waited out and healed; returns what happened."""
    old = wait_for(ha.ready, "leader with a synchronous standby")
    others = [host for host in PG_NODES if host != old]
    record = {"kind": kind, "name": KIND_NAMES[kind], "oldLeader": old}
    note(f"failover {KIND_NAMES[kind]} of {old}")
    record["at"] = time.strftime("%H:%M:%S", time.gmtime())  # UTC, to find it in the logs
    # The fault's moment is when the kills were sent or the link went down, not before: a
    # command sent while the children were still being looked up could still commit.
    if kind == 1:
        pid = ha.kill_postgres(old)
        fault = time.monotonic()
        # Patroni restarts PostgreSQL in place (a new postmaster) or another node takes over.

        def recovered():
            leader = ha.ready()
            if leader is None:
                return None
            if leader != old:
                return leader
            new = ha.postmaster(old)
            return leader if new is not None and new != pid else None
        new = wait_for(recovered, "leader after the kill of PostgreSQL")
        record["outcome"] = "restarted in place" if new == old else "failed over"
    elif kind == 2:
        ha.kill_patroni(old)
        ha.kill_postgres(old)
        fault = time.monotonic()
        new = wait_for(lambda: ha.ready(others, avoid=old),
                       "new leader with a synchronous standby after the kill of Patroni")
        record["outcome"] = "failed over"
    else:
        net.cut(old)
        fault = time.monotonic()
        new = wait_for(lambda: ha.ready(others, avoid=old),
                       "new leader with a synchronous standby after the cut")
        record["outcome"] = "failed over"
    record["newLeader"] = new
    record["electedMs"] = round((time.monotonic() - fault) * 1000)
    # Heal: the old primary back as a standby (kind 1 restarted in place has nothing to heal).
    if kind == 2:
        ha.start_patroni(old)
    elif kind == 3:
        net.restore(old)
    if new != old:
        # Back as a standby means streaming from the new primary: Patroni's /replica also
        # answers 200 for a node that came back without the pg_rewind it needed.
        def rejoined():
            return ha.answers(old, "replica") and old in ha.streaming(new)
        try:
            wait_for(rejoined, f"{old} back as a standby streaming from {new}", seconds=REJOIN_PATIENCE)
        except TimeoutError:
            # Patroni's own rejoin can fail (a pg_rewind that finds a second postmaster):
            # an operator then reinitializes the node, and so does this test, saying so.
            note(f"  {old} did not rejoin within {REJOIN_PATIENCE} s: reinitializing it")
            record["reinitialized"] = True
            ha.reinitialize(old)
            wait_for(rejoined, f"{old} back as a standby streaming from {new} after its reinitialization")
    wait_for(ha.ready, "leader with a synchronous standby after the heal")
    record["healedMs"] = round((time.monotonic() - fault) * 1000)
    # Unavailability: until a command sent after the fault was acknowledged.
    acked = wait_for(lambda: first_ack_after(clients, fault), "command acknowledged after the fault", seconds=90)
    record["unavailableMs"] = round((acked - fault) * 1000)
    note("  " + json.dumps(record))
    return record


def run(net, ha, cluster, work, started):
    cluster.start_worker("w1")
    cluster.start_worker("w2")
    cluster.start_feed()
    cluster.start_query("q1")
    cluster.start_query("q2")
    workers = [cluster.endpoint("w1", "commands"), cluster.endpoint("w2", "commands")]
    context = zmq.Context.instance()
    seed = Client(-1, workers, threading.Event())
    for n in range(mh.HOT_PRODUCTS):
        send_until_answered(seed, "AddProduct", {"productId": f"hot-{n}", "name": f"hot {n}", "price": "2.00",
                                                 "category": "food", "stock": 1})
    exited = [name for name, process in cluster.processes.items() if process.poll() is not None]
    if exited:
        note(f"FAILED: Logbook processes exited at the start: {', '.join(exited)}")
        show_logs(work)
        return 1
    stop = threading.Event()
    subscriber = Subscriber(cluster.endpoint("feed", "feed"), cluster.endpoint("feed", "log"), threading.Event())
    subscriber.start()
    clients = [Client(n, workers, stop) for n in range(CLIENTS)]
    for client in clients:
        client.start()
    records = []
    problems = []
    try:
        for kind in KINDS:
            time.sleep(SETTLE)
            records.append(failover(ha, net, kind, clients))
        time.sleep(SETTLE)
    except TimeoutError as timeout:
        problems.append(f"failover {len(records) + 1} ({KIND_NAMES[KINDS[len(records)]]}): {timeout}")
    stop.set()
    for client in clients:
        client.join(90)
    exited = [name for name, process in cluster.processes.items() if process.poll() is not None]
    if exited:
        problems.append(f"Logbook processes exited during the run: {', '.join(exited)}")
        for problem in problems:
            note(f"FAILED: {problem}")
        show_logs(work)
        return 1
    events = read_whole_log(context, cluster.endpoint("feed", "log"))
    head = events[-1]["position"] if events else 0
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
    found, figures = check(events, clients, subscriber, q1, q2)
    problems.extend(found)
    unanswered = sum(len(client.unanswered) for client in clients)
    if unanswered:
        problems.append(f"{unanswered} commands were never answered within a minute of retries")
    unavailable = [record["unavailableMs"] for record in records]
    by_kind = {}
    for record in records:
        by_kind[record["name"]] = by_kind.get(record["name"], 0) + 1
    figures = {
        "failovers": len(records), "failoversByKind": by_kind,
        "postgresKillOutcomes": [record["outcome"] for record in records if record["kind"] == 1],
        "acknowledged": figures["acknowledged"], "lost": figures["lost"], "duplicated": figures["duplicated"],
        "holes": figures["holes"], "head": figures["head"],
        "subscriberEventsChecked": len(subscriber.event_ids), "subscriberMismatches": figures["subscriberMismatches"],
        "unavailableMsMedian": round(statistics.median(unavailable)) if unavailable else None,
        "unavailableMsWorst": max(unavailable) if unavailable else None,
        "unavailableMs": unavailable,
        "electedMs": [record["electedMs"] for record in records],
        "reinitialized": sum(1 for record in records if record.get("reinitialized")),
        "clients": CLIENTS, "resent": sum(client.resent for client in clients),
        "refused": sum(len(client.refused) for client in clients),
        "refusedByCode": dict(collections.Counter(code for client in clients for code in client.refused.values())),
        "unanswered": unanswered,
        "subscriberFailures": subscriber.failures, "subscriberAliveAtEnd": alive,
        "seconds": round(time.monotonic() - started, 1),
    }
    note("figures " + json.dumps(figures))
    for problem in problems:
        note(f"FAILED: {problem}")
    if problems:
        show_logs(work)
        return 1
    note("ok: every acknowledged command once, no hole, the feed the log's events, both query processes agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
