"""The consumer-groups scenario of the chaos suite: a real worker and a real groups process
(`logbook run groups`) on SQLite, one group over the products topic, and members that are
`logbook consume GROUP --exec CMD` processes, put through kill -9 of the members (each with
the command it was running) and once of the groups process, then checked against what the
members wrote down.

The load: products added, then restocked round after round (every round acknowledged before
the next, so each stream's versions follow the rounds); a few products get, halfway, an
`UpdateProduct` naming them POISON, which the members' command always fails.

The members' command (`handle.sh`, run by `/bin/sh -c`, builtins only so that it costs
little) reads the envelope on its stdin and appends one line to a journal shared by every
member: `@H member position attempt stream version` once it has handled the event, just
before it exits 0 (so a line means "handled at least once"), or `@F … why` before it exits
with a failure: always for a POISON event (until the scenario drops a file that accepts
it), and for a small share of deliveries picked at random (a hash of position, attempt and
seed), never on the last attempt the group allows (so that random failures alone never park
an event).

Why one shared journal, not a file per member: the checks need one order of all handlings,
across members, that agrees with real time. Every line is a single `write(2)` to a file
opened with O_APPEND, which the kernel serialises on the file: a line written before
another began lies before it in the file. So if member A handles v1 of a stream, exits 0,
the group confirms the ack and only then delivers v2 to member B, A's line precedes B's.
No clock is read, so no clock can step or tie. A member's own records are its lines (each
names the member and its incarnation). A line cut short by a kill -9 in the middle of its
write was never followed by an exit 0 (so never acknowledged); the reader skips anything
that is not a whole record.

The checks:
- every event of the topic is handled at least once, but the POISON ones and the events
  held behind them (until retried or skipped) and the skipped ones (never);
- in the journal's order, the first handling of each version of a stream comes after the
  first handling of every earlier version of that stream (skipped ones aside): that is
  "strictly increasing with repeats removed", across members and incarnations;
- each POISON event is parked after exactly the group's maxDeliver attempts, the events
  after it in its stream are never handled while it is parked, every other stream finishes
  (the checkpoint stops just before the first POISON event); a `groups retry` of one, once
  the command accepts it, releases it and its stream; `groups skip` releases the others;
- repeats (handlings beyond the first) stay within what the kills can cause: a killed
  member may have handled, without the group hearing the ack, at most what it held (the
  group's maxInFlight); a killed groups process, at most that for every member;
- the checkpoint, sampled during the run and after (with `groups show`, and read from the
  group store's file), never passes an event that the journal, read after the sample, does
  not show handled (or skipped);
- a member killed while it holds a delivery costs the event one attempt, not more (the
  delivery comes back to the next member with the next attempt number);
- an ack from a DEALER that is not a member is refused as stale and changes nothing; a
  group created with `--from head` gets nothing older than the head.

Events parked although the command never failed them that often (their deliveries lost to
kills) are legitimate by the rules; the scenario checks they are such events, retries them
and counts them ("parked by the kills").
"""

import dataclasses
import json
import os
import pathlib
import random
import re
import signal
import sqlite3
import subprocess
import threading
import time

import zmq

from chaos_cluster import Cluster, ClusterFailure, _end_with_parent

GROUP = "shop"
TOPIC = "products"
CATEGORY = "product"
MAX_DELIVER = 3
ACK_WAIT_MS = 2_000
MAX_IN_FLIGHT = 4

# The command each member runs per delivery. POSIX sh (dash) builtins only: it reads the
# envelope (one JSON line whose first "stream" and "version" keys are the envelope's own),
# and writes its journal line with one printf, whose output dash writes in one write(2).
HANDLER = r"""
# An envelope cut short (the member was killed while writing it) fails, unrecorded.
IFS= read -r envelope || exit 4
stream=${envelope#*\"stream\":\"}
stream=${stream%%\"*}
version=${envelope#*\"version\":}
version=${version%%[,\}]*}
case $stream$version in *[!A-Za-z0-9_.:-]* | "") exit 4 ;; esac
position=$LOGBOOK_POSITION
attempt=$LOGBOOK_ATTEMPT
case $envelope in
*POISON*)
    if [ ! -e "$CHAOS_DIR/accept.$position" ]; then
        printf '@F %s %s %s %s %s poison\n' "$CHAOS_MEMBER" "$position" "$attempt" "$stream" "$version" \
            >> "$CHAOS_DIR/journal" || exit 9
        exit 3
    fi
    ;;
esac
if [ "$attempt" -lt "$CHAOS_MAX_DELIVER" ] &&
    [ $(( ((position * 2654435761 + attempt * 40503 + CHAOS_SEED) >> 9) % 100 )) -eq 0 ]; then
    printf '@F %s %s %s %s %s random\n' "$CHAOS_MEMBER" "$position" "$attempt" "$stream" "$version" \
        >> "$CHAOS_DIR/journal" || exit 9
    exit 1
fi
printf '@H %s %s %s %s %s\n' "$CHAOS_MEMBER" "$position" "$attempt" "$stream" "$version" \
    >> "$CHAOS_DIR/journal" || exit 9
exit 0
"""

RECORD = re.compile(rb"@([HF]) (m\d+\.\d+) (\d+) (\d+) ([A-Za-z0-9_.:-]+) (\d+)(?: ([a-z]+))?\n")


class ScenarioFailure(Exception):
    pass


def wait_for(condition, seconds: float, step: float = 0.25):
    """Polls `condition` until it returns something true or `seconds` pass; returns its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


# -- the load ------------------------------------------------------------------------------


class RoundLoad(threading.Thread):
    """Round 0 adds every product; each later round restocks every product once, except that
    the poisoned products get their POISON `UpdateProduct` in `poison_round`. A round's
    commands are pipelined over a few DEALERs (a window each); the next round starts once
    every command of this one is acknowledged, so a stream's versions follow the rounds.
    A command unanswered for a while is sent again with the same id (the worker answers a
    repeated id with its first outcome)."""

    def __init__(self, endpoint: str, products: list[str], rounds: int, poisoned: set[str], poison_round: int,
                 clients: int = 4, window: int = 64):
        super().__init__(name="groups-load", daemon=True)
        self.endpoint = endpoint
        self.products = products
        self.rounds = rounds
        self.poisoned = poisoned
        self.poison_round = poison_round
        self.clients = clients
        self.window = window
        self.sent = 0
        self.acknowledged = 0
        self.resent = 0
        self.rounds_done = 0
        self.failure: BaseException | None = None
        self.stopping = threading.Event()

    def command(self, number: int, product: str) -> tuple[str, bytes]:
        command_id = f"r{number}-{product}"
        if number == 0:
            document = {"type": "AddProduct", "data": {"productId": product, "name": f"item {product}",
                                                        "price": "2.50", "category": "food", "stock": 1}}
        elif number == self.poison_round and product in self.poisoned:
            document = {"type": "UpdateProduct", "data": {"productId": product, "name": f"POISON {product}"}}
        else:
            document = {"type": "RestockProduct", "data": {"productId": product, "quantity": 1}}
        return command_id, json.dumps({"id": command_id, **document}).encode()

    def run(self):
        try:
            context = zmq.Context.instance()
            for number in range(self.rounds):
                if self.stopping.is_set():
                    return
                self._round(context, number)
                self.rounds_done += 1
        except BaseException as error:  # reported by the scenario, not lost in the thread
            self.failure = error

    def _round(self, context, number: int):
        def fresh():
            socket = context.socket(zmq.DEALER)
            socket.linger = 0
            socket.connect(self.endpoint)
            return socket

        sockets = [fresh() for _ in range(self.clients)]
        queues = [[self.command(number, product) for product in self.products[client::self.clients]]
                  for client in range(self.clients)]
        in_flight: list[dict[str, tuple[bytes, float]]] = [{} for _ in range(self.clients)]
        try:
            while any(queues) or any(in_flight):
                if self.stopping.is_set():
                    return
                now = time.monotonic()
                for client in range(self.clients):
                    while queues[client] and len(in_flight[client]) < self.window:
                        command_id, document = queues[client].pop()
                        sockets[client].send_multipart([b"", document])
                        in_flight[client][command_id] = (document, now)
                        self.sent += 1
                    if in_flight[client] and now - min(sent for _, sent in in_flight[client].values()) > 10:
                        sockets[client].close()
                        sockets[client] = fresh()
                        for command_id, (document, _) in list(in_flight[client].items()):
                            sockets[client].send_multipart([b"", document])
                            in_flight[client][command_id] = (document, now)
                            self.resent += 1
                for client, socket in enumerate(sockets):
                    while socket.poll(0 if client else 20):
                        reply = json.loads(socket.recv_multipart()[-1])
                        if reply.get("id") not in in_flight[client]:
                            continue
                        if not reply.get("ok"):
                            if reply["error"]["code"] in ("unavailable", "timeout"):
                                continue
                            raise ScenarioFailure(f"the worker refused {reply['id']}: {reply['error']}")
                        del in_flight[client][reply["id"]]
                        self.acknowledged += 1
        finally:
            for socket in sockets:
                socket.close()


# -- the journal -----------------------------------------------------------------------------


@dataclasses.dataclass
class Record:
    handled: bool
    member: str
    position: int
    attempt: int
    stream: str
    version: int
    why: str | None


class Journal:
    """The members' shared journal, read incrementally (whole lines only)."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self.offset = 0
        self.records: list[Record] = []
        self.handled: dict[int, int] = {}  # position -> handlings
        self.torn = 0

    def refresh(self):
        if not self.path.exists():
            return
        with open(self.path, "rb") as file:
            file.seek(self.offset)
            chunk = file.read()
        end = chunk.rfind(b"\n") + 1
        if end == 0:
            return
        chunk = chunk[:end]
        self.offset += end
        for line in chunk.split(b"\n")[:-1]:
            match = RECORD.fullmatch(line + b"\n")
            if match is None:
                # A line cut short by a kill, then the next writer's whole line after it.
                self.torn += 1
                start = max(line.rfind(b"@H "), line.rfind(b"@F "))
                match = RECORD.fullmatch(line[start:] + b"\n") if start > 0 else None
                if match is None:
                    continue
            kind, member, position, attempt, stream, version, why = match.groups()
            record = Record(kind == b"H", member.decode(), int(position), int(attempt), stream.decode(),
                            int(version), why.decode() if why else None)
            self.records.append(record)
            if record.handled:
                self.handled[record.position] = self.handled.get(record.position, 0) + 1


# -- the scenario ----------------------------------------------------------------------------


class GroupsChaos:
    def __init__(self, binary: pathlib.Path, workdir: pathlib.Path, note, fail, seed: int, products: int = 600,
                 rounds: int = 34, members: int = 3):
        self.binary = binary
        self.workdir = workdir
        self.note = note
        self.fail = fail
        self.rng = random.Random(seed)
        self.seed = seed
        self.cluster = Cluster(binary, workdir)
        self.journal = Journal(workdir / "journal")
        self.products = [f"p{number:04d}" for number in range(1, products + 1)]
        self.rounds = rounds
        self.poison_round = rounds // 2
        self.poisoned = set(self.rng.sample(self.products, 3))
        self.member_count = members
        self.members: dict[int, subprocess.Popen] = {}
        self.incarnations = {slot: 0 for slot in range(1, members + 1)}
        self.skipped: set[int] = set()
        self.log: dict[int, tuple[str, int, str]] = {}  # position -> (stream, version, name in data)
        self.log_read_through = 0
        self.figures = {"events": 0, "streams": 0, "deliveries": 0, "redeliveries": 0, "handled": 0, "repeats": 0,
                        "member kills": 0, "groups kills": 0, "random failures": 0, "poison failures": 0,
                        "parked": 0, "parked by the kills": 0, "stale acks": 0, "checkpoint samples": 0}
        self.counters_before_kill = {"delivered": 0, "redelivered": 0}
        self.last_show: dict | None = None

    # -- processes --------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        environment = dict(os.environ)
        for name, endpoint in self.cluster.endpoints.items():
            environment[f"LOGBOOK_{name.upper()}"] = endpoint
        return environment

    def cli(self, *arguments: str, seconds: float = 60) -> tuple[int, dict]:
        """Runs `logbook ARGUMENTS` against the scenario's processes; its exit status and JSON reply."""
        done = subprocess.run([str(self.binary), *arguments], env=self.environment(), capture_output=True,
                              timeout=seconds)
        try:
            reply = json.loads(done.stdout) if done.stdout.strip() else {}
        except ValueError:
            reply = {"unparsed": done.stdout.decode(errors="replace")}
        if not reply and done.stderr:
            reply = {"stderr": done.stderr.decode(errors="replace")}
        return done.returncode, reply

    def start_member(self, slot: int):
        self.incarnations[slot] += 1
        environment = self.environment()
        environment.update(CHAOS_MEMBER=f"m{slot}.{self.incarnations[slot]}", CHAOS_DIR=str(self.workdir),
                           CHAOS_SEED=str(self.seed), CHAOS_MAX_DELIVER=str(MAX_DELIVER))
        stderr = open(self.workdir / f"member-{slot}.{self.incarnations[slot]}.stderr.log", "wb")
        # A session of its own: `consume` puts the command it runs in a process group of its
        # own, so a kill of the member's process group would leave the command running; a kill
        # of the member's session takes both.
        self.members[slot] = subprocess.Popen(
            [str(self.binary), "consume", GROUP, "--exec", f". {self.workdir / 'handle.sh'}"],
            env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
            start_new_session=True, preexec_fn=_end_with_parent)
        stderr.close()

    @staticmethod
    def session_members(session: int) -> list[int]:
        pids = []
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()  # after the name: state, ppid, pgrp, session
            if int(fields[3]) == session and fields[0] != "Z":
                pids.append(int(entry.name))
        return pids

    def kill_member(self, slot: int):
        self.kill_session(self.members[slot])
        self.figures["member kills"] += 1

    def kill_session(self, process: subprocess.Popen):
        """SIGKILL for a member and for whatever it runs: the member first (it starts nothing
        more once reaped), then every process left in its session."""
        process.send_signal(signal.SIGKILL)
        process.wait()
        for _ in range(50):
            left = self.session_members(process.pid)
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def stop_members(self):
        for process in self.members.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for slot, process in self.members.items():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill_session(process)

    # -- reading the log and the group ------------------------------------------------------

    def read_log(self):
        path = self.workdir / "worker" / "events.sqlite3"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
            rows = db.execute("SELECT position, stream, category, version, data FROM events WHERE position > ? "
                              "ORDER BY position", (self.log_read_through,)).fetchall()
        for position, stream, category, version, data in rows:
            if category == CATEGORY:
                self.log[position] = (stream, version, json.loads(data).get("name", ""))
            self.log_read_through = position

    def show(self) -> dict | None:
        try:
            status, reply = self.cli("groups", "show", GROUP, seconds=30)
        except subprocess.TimeoutExpired:
            return None
        if status != 0 or not reply.get("ok"):
            return None
        self.last_show = reply["result"]
        return reply["result"]

    def durable_checkpoint(self) -> int | None:
        path = self.workdir / "groups" / "groups.sqlite3"
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
                row = db.execute("SELECT checkpoint FROM groups WHERE name = ?", (GROUP,)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row else None

    def parked(self) -> list[dict]:
        status, reply = self.cli("groups", "parked", GROUP)
        if status != 0:
            raise ScenarioFailure(f"groups parked: {status} {reply}")
        return reply["result"]["events"]

    def check_checkpoint(self, label: str, checkpoint: int | None):
        """The journal, read after the checkpoint was, must show every event up to it handled."""
        if checkpoint is None:
            return
        self.journal.refresh()
        self.read_log()
        missing = [position for position in self.log if position <= checkpoint
                   and position not in self.journal.handled and position not in self.skipped]
        self.figures["checkpoint samples"] += 1
        if missing:
            self.fail(f"groups: the checkpoint ({label}) is {checkpoint}, but the members have not handled "
                      f"{len(missing)} events up to it: {sorted(missing)[:10]}")

    def sample(self, label: str):
        shown = self.show()
        self.check_checkpoint(f"{label}, groups show", shown and shown["checkpoint"])
        self.check_checkpoint(f"{label}, group store", self.durable_checkpoint())

    def stale_ack(self, positions: list[int]) -> dict:
        """An Ack of `positions` from a DEALER that never joined: the reply."""
        socket = zmq.Context.instance().socket(zmq.DEALER)
        socket.linger = 0
        socket.connect(self.cluster.endpoints["groups"])
        try:
            socket.send_multipart([b"", json.dumps({"id": "stale-1", "type": "Ack", "group": GROUP,
                                                    "positions": positions}).encode()])
            if not socket.poll(30_000):
                raise ScenarioFailure("the groups process did not answer an Ack within 30 s")
            return json.loads(socket.recv_multipart()[-1])
        finally:
            socket.close()

    # -- the run ----------------------------------------------------------------------------

    def run(self) -> dict:
        try:
            self._run()
        except (ClusterFailure, ScenarioFailure, subprocess.TimeoutExpired) as error:
            self.fail(f"groups: {error}")
        finally:
            self.stop_members()
            self.cluster.stop_all()
        return self.figures

    def _run(self):
        (self.workdir / "handle.sh").write_text(HANDLER)
        (self.workdir / "journal").touch()
        self.cluster.start("worker")
        self.cluster.start("groups")
        status, reply = self.cli("groups", "create", GROUP, "--topics", TOPIC, "--max-deliver", str(MAX_DELIVER),
                                 "--ack-wait-ms", str(ACK_WAIT_MS), "--max-in-flight", str(MAX_IN_FLIGHT))
        if status != 0:
            raise ScenarioFailure(f"groups create: {status} {reply}")
        for slot in self.incarnations:
            self.start_member(slot)
        load = RoundLoad(self.cluster.endpoints["commands"], self.products, self.rounds, self.poisoned,
                         self.poison_round)
        load.start()
        self.chaos(load)
        self.settle()
        self.poison_and_release()
        self.killed_holder()
        self.from_head()
        self.finish()

    def chaos(self, load: RoundLoad):
        """Kills a member every few seconds (and restarts it), the groups process once, and
        samples the checkpoint, until the load is in and nearly all of it handled."""
        total = len(self.products) * self.rounds
        next_kill = time.monotonic() + self.rng.uniform(0.5, 2.0)
        groups_killed = False
        stale_sent = False
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if load.failure:
                raise ScenarioFailure(f"the load failed: {load.failure!r}")
            self.sample("during the run")
            handled = len(self.journal.handled)
            if not load.is_alive() and handled >= total * 0.97:
                break
            if not stale_sent and handled >= total * 0.2 and self.last_show:
                # Acks from a DEALER that is not a member, of what lies after the checkpoint
                # (some of it in flight to the members): all refused; that they moved nothing
                # is for the checkpoint samples to show.
                after = self.last_show["checkpoint"]
                positions = list(range(after + 1, after + 41))
                reply = self.stale_ack(positions)
                result = reply.get("result", {})
                if not reply.get("ok") or result.get("stale") != positions or result.get("acked") != []:
                    self.fail(f"groups: a non-member's Ack of {positions[0]}…{positions[-1]} was answered {reply}")
                else:
                    self.figures["stale acks"] += len(positions)
                stale_sent = True
            if not groups_killed and handled >= total * 0.4:
                self.kill_groups()
                groups_killed = True
            if time.monotonic() >= next_kill:
                slot = self.rng.choice(list(self.incarnations))
                self.kill_member(slot)
                time.sleep(self.rng.uniform(0.1, 0.8))
                self.start_member(slot)
                next_kill = time.monotonic() + self.rng.uniform(0.5, 2.0)
            for slot, process in self.members.items():
                if process.poll() is not None:
                    raise ScenarioFailure(f"member {slot} exited by itself with {process.returncode}")
            time.sleep(0.5)
        else:
            raise ScenarioFailure(f"the chaos phase did not end within 900 s: load alive {load.is_alive()}, "
                                  f"handled {len(self.journal.handled)} of {total}")
        load.join()
        if load.failure:
            raise ScenarioFailure(f"the load failed: {load.failure!r}")
        self.note(f"groups: load in ({load.acknowledged} commands acknowledged, {load.resent} resent); "
                  f"{self.figures['member kills']} member kills, {self.figures['groups kills']} groups kill")

    def kill_groups(self):
        shown = self.last_show or {}
        self.cluster.kill("groups")
        self.figures["groups kills"] += 1
        self.counters_before_kill = {"delivered": shown.get("delivered", 0),
                                     "redelivered": shown.get("redelivered", 0)}
        self.check_checkpoint("groups process just killed, group store", self.durable_checkpoint())
        time.sleep(self.rng.uniform(0.2, 1.0))
        self.cluster.start("groups")
        self.note("groups: the groups process was killed with SIGKILL and started again")

    def settle(self):
        """Waits until every stream without a parked event has been handled to its end."""
        self.read_log()
        poison = {position for position, (_, _, name) in self.log.items() if "POISON" in name}
        if len(poison) != len(self.poisoned):
            raise ScenarioFailure(f"the log holds {len(poison)} POISON events, not {len(self.poisoned)}")
        self.poison = sorted(poison)
        self.poison_streams = {self.log[position][0]: position for position in self.poison}
        self.held = {position for position, (stream, _, _) in self.log.items()
                     if stream in self.poison_streams and position > self.poison_streams[stream]}

        def parked_streams() -> dict[str, int]:
            return {event["stream"]: event["position"] for event in self.parked()}

        def quiet():
            """Whether everything is handled but what waits behind a parked event."""
            self.sample("while the poison is parked")
            parked = parked_streams()
            waiting = [position for position, (stream, _, _) in self.log.items()
                       if position not in self.journal.handled and not position >= parked.get(stream, position + 1)]
            return not waiting

        # Events parked because the kills used up their deliveries, not because they fail:
        # correct by the rules (a delivery held by a member that was killed counts), but they
        # must be such events. Retried, they are handled, and what they held goes on.
        retried = set()
        while True:
            if not wait_for(quiet, 600, step=1):
                parked = parked_streams()
                waiting = [position for position in self.log if position not in self.journal.handled
                           and self.log[position][0] not in parked]
                raise ScenarioFailure(f"the streams without a parked event did not finish: {len(waiting)} events "
                                      f"unhandled, such as {waiting[:10]}; parked {parked}")
            parked = self.parked()
            collateral = [event for event in parked if event["position"] not in poison]
            if not collateral and poison <= {event["position"] for event in parked}:
                break
            if not collateral:
                raise ScenarioFailure(f"all is quiet but the POISON events are not all parked: {parked}")
            for event in collateral:
                position = event["position"]
                failures = [r for r in self.journal.records if r.position == position and not r.handled]
                self.note(f"groups: parked by the kills: {position} ({event['stream']}), attempts "
                          f"{event['attempts']}, last failure {event['lastFailure']!r}, failed by the command "
                          f"{len(failures)} times")
                if len(failures) >= MAX_DELIVER or event["attempts"] != MAX_DELIVER or position in retried:
                    self.fail(f"groups: {position} was parked, not a POISON event: {event}")
                    raise ScenarioFailure("an event was parked that should not have been")
                retried.add(position)
                status, reply = self.cli("groups", "retry", GROUP, str(position))
                if status != 0:
                    raise ScenarioFailure(f"groups retry {position}: {status} {reply}")
        self.figures["parked by the kills"] = len(retried)
        # Held: the checkpoint stops just before the first POISON event; nothing is in flight.
        pending = len(self.poison) + len(self.held)

        def held() -> dict | None:
            shown = self.show()
            return shown if shown and (shown["inFlight"], shown["checkpoint"], shown["pending"], shown["parked"]) == (
                0, self.poison[0] - 1, pending, len(self.poison)) else None

        shown = wait_for(held, 120)
        if not shown:
            self.fail(f"groups: with the POISON events parked, the group shows {self.last_show}; expected the "
                      f"checkpoint {self.poison[0] - 1}, {pending} pending, {len(self.poison)} parked, "
                      f"nothing in flight")
            return
        self.note(f"groups: every other stream done; checkpoint {shown['checkpoint']}, head {shown['head']}, "
                  f"lag {shown['lag']}, pending {shown['pending']} (the POISON events and the "
                  f"{len(self.held)} held behind them), parked {shown['parked']}")
        if shown["lag"] != shown["head"] - shown["checkpoint"] or shown["head"] != self.log_read_through:
            self.fail(f"groups: head {self.log_read_through}, the group shows {shown}")
        # Parked stays parked: past a few ack waits nothing more of those streams is delivered.
        self.journal.refresh()
        runs = len(self.journal.records)
        time.sleep(3 * ACK_WAIT_MS / 1000)
        self.journal.refresh()
        later = self.show()
        if len(self.journal.records) != runs or not later or (later["pending"], later["parked"], later["inFlight"]) != (
                pending, len(self.poison), 0):
            self.fail(f"groups: with only parked streams left, the command ran {len(self.journal.records) - runs} "
                      f"times more and the group shows {later}")

    def poison_and_release(self):
        parked = {event["position"]: event for event in self.parked()}
        self.figures["parked"] = len(parked)
        for position in self.poison:
            event = parked.get(position)
            if event is None:
                self.fail(f"groups: the POISON event {position} is not parked")
                continue
            if event["attempts"] != MAX_DELIVER:
                self.fail(f"groups: the POISON event {position} was parked after {event['attempts']} attempts")
            runs = [r for r in self.journal.records if r.position == position]
            self.note(f"groups: POISON event {position} ({event['stream']}) parked after {event['attempts']} "
                      f"attempts, {len(runs)} of them run by a member, last failure {event['lastFailure']!r}")
            if any(r.handled for r in runs) or any(r.attempt > MAX_DELIVER for r in runs):
                self.fail(f"groups: the POISON event {position} was handled or run past maxDeliver: {runs}")
        handled_held = [position for position in self.held if position in self.journal.handled]
        if handled_held:
            self.fail(f"groups: events behind a parked one were handled: {handled_held[:10]}")

        # Not a member: its ack of a parked event is stale and changes nothing.
        reply = self.stale_ack([self.poison[0]])
        result = reply.get("result", {})
        if not reply.get("ok") or result.get("stale") != [self.poison[0]] or result.get("acked") != []:
            self.fail(f"groups: a non-member's Ack of {self.poison[0]} was answered {reply}")
        else:
            self.figures["stale acks"] += 1
        if self.poison[0] not in {event["position"] for event in self.parked()}:
            self.fail("groups: a stale Ack released a parked event")

        # Retry one, now accepted by the command; skip the others.
        retried, *skipped = self.poison
        (self.workdir / f"accept.{retried}").touch()
        status, reply = self.cli("groups", "retry", GROUP, str(retried))
        if status != 0:
            self.fail(f"groups retry {retried}: {status} {reply}")
        for position in skipped:
            self.skipped.add(position)
            status, reply = self.cli("groups", "skip", GROUP, str(position))
            if status != 0:
                self.fail(f"groups skip {position}: {status} {reply}")
        wanted = [position for position in self.log if position not in self.skipped]
        if not wait_for(lambda: self.sample("after the retry and skips") or all(
                position in self.journal.handled for position in wanted), 300, step=1):
            missing = [position for position in wanted if position not in self.journal.handled]
            raise ScenarioFailure(f"after the retry and skips, {len(missing)} events were not handled: {missing[:10]}")
        self.note(f"groups: retried {retried} (handled now), skipped {skipped}; their streams finished")

    def killed_holder(self):
        """A member killed while it holds a delivery: the delivery comes back, to the next
        member, with the next attempt number; the kill costs the event one of its maxDeliver
        attempts, not more."""
        status, reply = self.cli("groups", "create", "probe", "--topics", TOPIC, "--from", "head", "--max-in-flight",
                                 "1", "--ack-wait-ms", str(ACK_WAIT_MS), "--max-deliver", str(MAX_DELIVER))
        if status != 0:
            raise ScenarioFailure(f"groups create probe: {status} {reply}")
        holder = subprocess.Popen([str(self.binary), "consume", "probe", "--exec", "exec sleep 600"],
                                  env=self.environment(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=_end_with_parent)
        attempts = self.workdir / "probe-attempts"
        try:
            status, reply = self.cli("send", "RestockProduct", json.dumps({"productId": self.products[1],
                                                                           "quantity": 1}))
            if status != 0:
                raise ScenarioFailure(f"send: {status} {reply}")

            def held():
                status, reply = self.cli("groups", "show", "probe")
                return status == 0 and reply["result"]["inFlight"] == 1

            if not wait_for(held, 60):
                raise ScenarioFailure("the probe group's member never got its delivery")
            self.kill_session(holder)
            done = subprocess.run(
                [str(self.binary), "consume", "probe", "--limit", "1", "--exec",
                 f"printf '%s\\n' \"$LOGBOOK_ATTEMPT\" >> {attempts}"],
                env=self.environment(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=120, preexec_fn=_end_with_parent)
        finally:
            if holder.poll() is None:
                self.kill_session(holder)
        got = attempts.read_text().split() if attempts.exists() else []
        self.note(f"groups: a member killed while holding a delivery: the next member got it as attempt "
                  f"{', '.join(got) or 'none'} (consume exit status {done.returncode})")
        if got != ["2"]:
            self.fail(f"groups: after the kill of the one member holding it, a delivery came back as attempt "
                      f"{got}, not 2: the kill used up more than one of its {MAX_DELIVER} attempts")
        self.cli("groups", "delete", "probe")

    def from_head(self):
        """A group created at the head gets only what comes after."""
        status, reply = self.cli("groups", "create", "late", "--topics", TOPIC, "--from", "head")
        if status != 0:
            raise ScenarioFailure(f"groups create --from head: {status} {reply}")
        head = reply["result"]["checkpoint"]
        self.read_log()
        if head != self.log_read_through:
            self.fail(f"groups: a group created at the head starts at {head}, the log's head is "
                      f"{self.log_read_through}")
        member = subprocess.Popen([str(self.binary), "consume", "late", "--limit", "2"], env=self.environment(),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=_end_with_parent)
        for command, data in (("RestockProduct", {"productId": self.products[0], "quantity": 1}),
                              ("AddProduct", {"productId": "late-1", "name": "late", "price": "1.00",
                                              "category": "food", "stock": 1})):
            status, reply = self.cli("send", command, json.dumps(data))
            if status != 0:
                raise ScenarioFailure(f"send {command}: {status} {reply}")
        try:
            output, _ = member.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            member.kill()
            member.wait()
            raise ScenarioFailure("the member of the group created at the head got fewer than 2 events")
        positions = [json.loads(line)["position"] for line in output.splitlines()]
        self.read_log()
        fresh = [position for position in sorted(self.log) if position > head]
        if positions != fresh:
            self.fail(f"groups: the group created at the head (at {head}) delivered {positions}, not {fresh}")
        self.cli("groups", "delete", "late")

    def finish(self):
        """The checkpoint at the head; then the order, the coverage and the repeats."""
        self.read_log()
        head = self.log_read_through
        if not wait_for(lambda: (lambda s: s and s["checkpoint"] == head and s["pending"] == 0)(self.show()), 300):
            self.fail(f"groups: the checkpoint did not reach the head {head}: {self.last_show}")
        self.sample("at the end")
        self.stop_members()
        self.journal.refresh()
        shown = self.last_show or {}
        self.check_order()
        wanted = [position for position in self.log if position not in self.skipped]
        missing = [position for position in wanted if position not in self.journal.handled]
        if missing:
            self.fail(f"groups: {len(missing)} events never handled: {missing[:10]}")
        handled_skipped = [position for position in self.skipped if position in self.journal.handled]
        if handled_skipped:
            self.fail(f"groups: skipped events were handled: {handled_skipped}")
        records = self.journal.records
        handled = sum(self.journal.handled.values())
        repeats = handled - len(self.journal.handled)
        kills = self.figures["member kills"] + self.figures["groups kills"] * self.member_count
        self.figures.update(
            events=len(self.log), streams=len({stream for stream, _, _ in self.log.values()}),
            deliveries=self.counters_before_kill["delivered"] + shown.get("delivered", 0),
            redeliveries=self.counters_before_kill["redelivered"] + shown.get("redelivered", 0),
            handled=handled, repeats=repeats,
            **{"random failures": sum(1 for r in records if r.why == "random"),
               "poison failures": sum(1 for r in records if r.why == "poison")})
        self.figures["command runs"] = len(records)
        self.figures["torn lines"] = self.journal.torn
        if repeats > kills * MAX_IN_FLIGHT:
            self.fail(f"groups: {repeats} repeats, more than the kills can explain ({kills} × {MAX_IN_FLIGHT}); "
                      f"expired deliveries {shown.get('expired')}")
        streams = {stream for stream, _, _ in self.log.values()}
        if len(self.log) < 20_000 or len(streams) < 500:
            self.fail(f"groups: only {len(self.log)} events over {len(streams)} streams")

    def check_order(self):
        """In the journal's order, the first handling of each version of a stream comes after
        the first handling of each earlier version (skipped ones count as done already)."""
        versions: dict[str, list[tuple[int, int]]] = {}
        for position, (stream, version, _) in self.log.items():
            versions.setdefault(stream, []).append((version, position))
        expected = {stream: [v for v, _ in sorted(pairs)] for stream, pairs in versions.items()}
        skipped_versions = {(self.log[p][0], self.log[p][1]) for p in self.skipped}
        done = {stream: 0 for stream in expected}  # how many of its versions, in order, are done
        first_seen: set[int] = set()
        violations = []

        def advance(stream):
            order = expected[stream]
            while done[stream] < len(order) and (stream, order[done[stream]]) in skipped_versions:
                done[stream] += 1

        for stream in expected:
            advance(stream)
        for record in self.journal.records:
            if not record.handled or record.position in first_seen:
                continue
            first_seen.add(record.position)
            stream = record.stream
            if self.log.get(record.position, (None, None))[:2] != (stream, record.version):
                violations.append(f"{record}: not the log's event at that position")
                continue
            order = expected[stream]
            next_version = order[done[stream]] if done[stream] < len(order) else None
            if record.version != next_version:
                violations.append(f"{stream} v{record.version} first handled by {record.member} before "
                                  f"v{next_version} was handled")
                continue
            done[stream] += 1
            advance(stream)
        if violations:
            self.fail(f"groups: {len(violations)} handlings out of order: {violations[:5]}")
