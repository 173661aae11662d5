"""A tiny Python client for Logbook's ZeroMQ wire contract (version 1).

Copy this file into your own project and adapt it. It needs Python 3.11+ and pyzmq,
nothing else. It has these parts:

- RequestClient: one request, one reply, with a timeout and a safe retry (the
  "Lazy Pirate" pattern). Use one per server socket: commands, queries or log. For
  commands it may be given several workers: any worker takes any command.
- read_log_pages: ReadLog page after page, until a reply says the head was reached.
- FeedFollower: the change feed of some topics, in position order, each event once,
  with no hole: whatever the feed drops is read from the log.
- GroupConsumer: a member of a consumer group on the groups process: the group shares its
  events among its members, at least once, and remembers how far it got.
- CurveKeys: for a service with CURVE on, this client's key pair and the server's public
  key, read from certificate files (`logbook keygen` or `zmq.auth.create_certificates`);
  give it to RequestClient and FeedFollower.

Every payload is one JSON document per frame; the wire contract is described in
schemas/README.md at the top of the repository.
"""

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator

import zmq

# The endpoints that `logbook up` binds by default.
DEFAULT_COMMANDS = "tcp://127.0.0.1:5555"
DEFAULT_FEED = "tcp://127.0.0.1:5556"
DEFAULT_QUERIES = "tcp://127.0.0.1:5557"
DEFAULT_LOG = "tcp://127.0.0.1:5558"
DEFAULT_GROUPS = "tcp://127.0.0.1:5560"


class CurveKeys:
    """This client's CURVE key pair and the server's public key, for a service that runs
    with CURVE (`--curve-secret` and `--clients`): its secret certificate (`NAME_secret`,
    which only its owner may read) and the server's public certificate. The server admits
    the key only if it is in its allow-list, and its role decides what the client may do
    (writer: commands; reader: queries, the feed, ReadLog; admin: everything); a request
    the role may not make gets `unauthorized`, and an unknown key gets no answer at all.
    """

    def __init__(self, secret_certificate: str, server_certificate: str):
        import zmq.auth

        self.public, self.secret = zmq.auth.load_certificate(secret_certificate)
        if self.secret is None:
            raise ValueError(f"{secret_certificate} holds no secret key: give the NAME_secret file")
        self.server, _ = zmq.auth.load_certificate(server_certificate)

    def apply(self, socket: zmq.Socket) -> None:
        """Makes `socket` a CURVE client; call before connect."""
        socket.curve_secretkey = self.secret
        socket.curve_publickey = self.public
        socket.curve_serverkey = self.server


def ignore(_text: str) -> None:
    """The default for the `note` callbacks below: say nothing."""


class Refused(Exception):
    """The server answered `ok: false`; `code` is one of the error codes of schemas/README.md."""

    def __init__(self, error: dict):
        super().__init__(f"{error['code']}: {error['message']}")
        self.code = error["code"]
        self.details = error.get("details", {})


class NoReply(Exception):
    """No reply came within the timeout, on any attempt."""


def endpoint_list(endpoints: str | Iterable[str]) -> list[str]:
    """`"tcp://a:5555,tcp://b:5555"` (as `logbook --commands` takes it) or a list: the endpoints, in order."""
    items = [e.strip() for e in (endpoints.split(",") if isinstance(endpoints, str) else endpoints)]
    if not items or not all(items) or len(set(items)) != len(items):
        raise ValueError(f"not a list of distinct endpoints: {endpoints!r}")
    return items


def new_id() -> str:
    """A fresh request or command id (the contract allows 1-128 printable ASCII characters)."""
    return str(uuid.uuid4())


class RequestClient:
    """Request/reply with one of the server's ROUTER sockets (commands, queries or log).

    It uses a DEALER socket and sends the empty delimiter frame itself; the server
    answers `[empty][reply]`, and the reply echoes the request's `id`.

    `endpoints` may name several servers (`"tcp://a:5555,tcp://b:5555"` or a list): with
    several workers, any worker takes any command. The DEALER connects to all of them
    with `zmq.IMMEDIATE`, so it hands each request to one whose connection is up (in
    turn) and never queues it towards one that is down; while none is up, the request
    waits here until one is, or until its attempt's time is up.

    On a timeout it closes the socket (dropping whatever is queued on it), opens a new
    one and sends the *same* document again; a fresh socket reaches only servers that
    connect again, so with several workers the retry goes to one that is alive. That is
    safe: the workers de-duplicate commands by their `id`, so a command that was applied
    (by any worker) but whose reply was lost is answered with its first outcome and not
    applied twice. Queries and ReadLog only read, so sending them again is always safe.
    """

    def __init__(
        self,
        context: zmq.Context,
        endpoints: str | Iterable[str],
        timeout_ms: int = 3000,
        attempts: int = 3,
        note: Callable[[str], None] = ignore,
        curve: CurveKeys | None = None,
    ):
        self.context = context
        self.curve = curve  # CURVE keys, for a secured service
        self.endpoints = endpoint_list(endpoints)
        self.timeout_ms = timeout_ms
        self.attempts = attempts
        self.note = note  # told when a request is sent again
        self.socket = self._open()

    def _open(self) -> zmq.Socket:
        socket = self.context.socket(zmq.DEALER)
        socket.linger = 0  # closing never waits for unsent messages
        socket.immediate = True  # queue only on completed connections, never on a server that is down
        if self.curve:
            self.curve.apply(socket)
        for endpoint in self.endpoints:
            socket.connect(endpoint)
        return socket

    def request(self, document: dict) -> dict:
        """Sends `document` (which must have an `id`) and returns the reply to it.

        The reply may be an error (`ok: false`); `expect_ok` turns that into Refused.
        Raises NoReply when no reply came after `attempts` tries of `timeout_ms` each.
        """
        payload = json.dumps(document, separators=(",", ":")).encode()
        for attempt in range(1, self.attempts + 1):
            deadline = time.monotonic() + self.timeout_ms / 1000
            if self._send(payload, deadline):
                reply = self._wait_for_reply(document["id"], deadline)
                if reply is not None:
                    return reply
            # Lazy Pirate: this socket may still deliver a late reply or hold our request;
            # throw it away and try again, with the same id, on a fresh one.
            self.socket.close()
            self.socket = self._open()
            if attempt < self.attempts:
                self.note(f"no reply to {document['type']} {document['id']} in {self.timeout_ms} ms: sending it again")
        servers = ",".join(self.endpoints)
        raise NoReply(f"no reply from {servers} after {self.attempts} attempts of {self.timeout_ms} ms")

    def _send(self, payload: bytes, deadline: float) -> bool:
        """Sends once a connection is up (a fresh socket is still connecting, or every
        server may be down); False when none came up before `deadline`."""
        while (left_ms := (deadline - time.monotonic()) * 1000) > 0:
            if not self.socket.poll(left_ms, zmq.POLLOUT):
                return False
            try:
                self.socket.send_multipart([b"", payload], flags=zmq.NOBLOCK)
                return True
            except zmq.Again:  # the connection went away again: wait for another
                continue
        return False

    def _wait_for_reply(self, request_id: str, deadline: float) -> dict | None:
        while (left_ms := (deadline - time.monotonic()) * 1000) > 0:
            if not self.socket.poll(left_ms):
                break
            frames = self.socket.recv_multipart()  # [empty delimiter, reply]
            reply = json.loads(frames[-1])
            if reply.get("id") == request_id:
                return reply
            # A reply to some earlier request that we stopped waiting for: skip it.
        return None

    def close(self) -> None:
        self.socket.close()


def expect_ok(reply: dict) -> dict:
    """Returns `reply` if it says `ok: true`, else raises Refused with the server's error."""
    if not reply["ok"]:
        raise Refused(reply["error"])
    return reply


def send_command(commands: RequestClient, type: str, data: dict, command_id: str | None = None) -> dict:
    """Sends one command; returns the reply `{id, ok, position, events}` or raises Refused.

    Choose `command_id` yourself (and store it) when you may have to send the same command
    again later, say after your own process restarted: a repeated id is answered with the
    first outcome, and nothing is appended.
    """
    return expect_ok(commands.request({"id": command_id or new_id(), "type": type, "data": data}))


def query(queries: RequestClient, type: str, data: dict, min_position: int | None = None) -> dict:
    """Asks the query process; returns `{id, ok, position, result}` or raises Refused.

    With `min_position` the query process waits until its read models include that position
    (read-your-writes: pass the position of your own command's reply).
    """
    document = {"id": new_id(), "type": type, "data": data}
    if min_position is not None:
        document["minPosition"] = min_position
    return expect_ok(queries.request(document))


def read_log_pages(
    log: RequestClient, start: int, topics: list[str] | None = None, limit: int = 1000
) -> Iterator[dict]:
    """Yields ReadLog replies `{events, next, head}` from position `start` up to the head.

    A page holds at most `limit` events and about 4 MiB, so a short page does not mean the
    head was reached: only `next > head` does. Each read starts where the previous reply
    said (`next`); `next` never skips an event of the asked topics.
    """
    position = start
    while True:
        document = {"id": new_id(), "type": "ReadLog", "from": position, "limit": limit}
        if topics is not None:
            document["topics"] = topics
        page = expect_ok(log.request(document))
        yield page
        if page["next"] > page["head"]:
            return
        position = page["next"]


class FeedFollower:
    """The feed of some topics as events in position order, each once, with no hole.

    A PUB socket drops messages silently: those published before our subscription took
    effect, those published while we were disconnected, and those beyond a slow
    subscriber's queue. So the feed alone is not enough; this follows the recipe of schemas/README.md.
    `cursor` is P: every event of our topics up to P has been handed out.

    - a feed message at position q <= P is a repeat: drop it;
    - if, for every topic we follow, `previous` (a position after which that topic had
      no event before this one) is <= P, nothing was missed: hand it out, P = q;
    - otherwise something was missed: drop the message and read the log from P + 1 for
      our topics, page by page, until `next > head`; hand those events out and set
      P = next - 1 (the dropped message came with the log; live ones up to P are repeats).

    The same log read runs at the start (what was published before we connected never
    reaches us) and whenever the feed has been quiet for `quiet_ms` (a lost last message
    has nothing after it to reveal the hole).
    """

    def __init__(
        self,
        context: zmq.Context,
        feed_endpoint: str,
        log: RequestClient,
        topics: list[str],
        after: int = 0,
        quiet_ms: int = 1000,
        note: Callable[[str], None] = ignore,
        curve: CurveKeys | None = None,
    ):
        self.log = log
        self.topics = topics
        self.cursor = after  # P
        self.quiet_ms = quiet_ms
        self.holes = 0  # how many times the feed showed a hole
        self.note = note  # told whenever the log had something the feed did not deliver
        self.sub = context.socket(zmq.SUB)
        self.sub.linger = 0
        if curve:
            curve.apply(self.sub)  # a secured feed admits readers and admins only
        self.sub.connect(feed_endpoint)
        for topic in topics:
            self.sub.subscribe(topic.encode())  # a feed message's first frame is its topic
        self.pending_log_read = "start"  # the reason for a log read still to do, if any
        self.last_heard = time.monotonic()

    def poll(self, timeout_ms: int) -> list[dict]:
        """Waits up to `timeout_ms` for the feed; returns the new events in order (maybe none).

        Raises NoReply or Refused if the log cannot be read; the cursor is then unchanged,
        so calling poll again later simply tries again.
        """
        if self.pending_log_read:
            return self.catch_up(self.pending_log_read)
        if not self.sub.poll(timeout_ms):
            if (time.monotonic() - self.last_heard) * 1000 >= self.quiet_ms:
                return self.catch_up("quiet feed")
            return []
        self.last_heard = time.monotonic()
        frames = self.sub.recv_multipart()  # [topic, envelope]
        try:
            event = json.loads(frames[1])
            position = event["position"]
            previous = event.pop("previous")  # only feed messages carry it
            missed = any(previous[topic] > self.cursor for topic in self.topics)
        except (ValueError, KeyError, TypeError, IndexError):
            return self.catch_up("unreadable feed message")  # the log has the real one
        if position <= self.cursor:
            return []  # a repeat: handed out already
        if missed:
            self.holes += 1
            return self.catch_up(f"hole: feed message at {position}, but events after {self.cursor} were missed")
        self.cursor = position
        return [event]

    def catch_up(self, reason: str) -> list[dict]:
        """Reads the log from P + 1 up to the head for our topics; returns those events."""
        self.pending_log_read = reason  # stays set if the read fails: the next poll retries
        events = []
        for page in read_log_pages(self.log, self.cursor + 1, self.topics):
            events.extend(page["events"])
            next_position = page["next"]
        if events:
            read = f"positions {self.cursor + 1}-{next_position - 1}"
            self.note(f"{reason}: read {len(events)} event(s) from the log, {read}")
        self.cursor = next_position - 1
        self.pending_log_read = None
        self.last_heard = time.monotonic()
        return events

    def close(self) -> None:
        self.sub.close()


@dataclasses.dataclass(frozen=True)
class Delivery:
    """One event a consumer group handed to this member: ack or nack it by `position`."""

    group: str
    position: int
    attempt: int  # 1 for the first delivery of the event, 2 for the next one, ...
    event: dict  # the event's envelope, as ReadLog returns it


class GroupConsumer:
    """A member of one consumer group (schemas/README.md, "Consumer groups").

    An admin creates the group (`logbook groups create shop --topics products`); the groups
    process then hands each event of its topics to one of its members, at least once: within
    a stream one event at a time, in position order; different streams spread over the
    members. An event that is not acknowledged in time, nacked, or held by a member that
    left or went silent is delivered again (`attempt` counts up); after the group's
    `maxDeliver` attempts it is parked, and only its stream waits.

        consumer = GroupConsumer(context, "tcp://127.0.0.1:5560", "shop")
        consumer.join()
        while running:
            for delivery in consumer.poll(1000):
                handle(delivery.event)            # at least once: make it safe to repeat
                consumer.ack([delivery.position])  # or consumer.nack(delivery.position, "why")
        consumer.leave()
        consumer.close()

    It is one DEALER socket: requests and their replies, and the deliveries, which come
    unasked whenever the group has one for this member. Call `poll` often: it sends the
    Heartbeat the Join reply asks for (every `heartbeatMs`), and a member silent for
    `memberTimeoutMs` (handling one event for longer, say) is taken for gone and its
    deliveries go to others. When a Heartbeat is answered `not_a_member` (the groups process
    restarted, or took this member for gone), `poll` joins again by itself; what the member
    held comes again, here or elsewhere, and acknowledging it now says `stale`.

    `ack`, `nack`, `join` and `leave` wait for their reply (an Ack's reply comes once it is
    durable) up to `timeout_ms` and raise NoReply when none comes (the groups process is
    away: an unacknowledged event simply comes again), Refused for an error reply.
    """

    JOIN_RETRY_SECONDS = 1.0  # how long to wait for the reply to a Join before sending another

    def __init__(
        self,
        context: zmq.Context,
        endpoint: str,
        group: str,
        timeout_ms: int = 3000,
        note: Callable[[str], None] = ignore,
        curve: CurveKeys | None = None,
    ):
        self.group = group
        self.timeout_ms = timeout_ms
        self.note = note  # told when the member joins again
        self.heartbeat_seconds = 1.0  # until a Join reply says otherwise
        self.joined = False
        self.socket = context.socket(zmq.DEALER)
        self.socket.linger = 0
        if curve:
            curve.apply(self.socket)  # a secured groups process admits readers and admins as members
        self.socket.connect(endpoint)
        self._ready: list[Delivery] = []  # received, not yet returned by poll
        self._unanswered: dict[str, str] = {}  # id -> type of the Heartbeat and Join that poll sent
        self._awaited: str | None = None  # the id of the request `_request` waits for
        self._answer: dict | None = None  # and its reply, once it came
        self._last_sent = time.monotonic()
        self._join_sent: float | None = None  # when poll's Join went out, while unanswered

    def join(self) -> dict:
        """Joins the group; returns `{group, heartbeatMs, memberTimeoutMs}`. Refused with
        `unknown_group` when there is no such group, `unauthorized` for a key that may not consume."""
        result = expect_ok(self._request({"type": "Join", "group": self.group}))["result"]
        self._joined(result)
        return result

    def poll(self, timeout_ms: int) -> list[Delivery]:
        """Waits up to `timeout_ms` for deliveries and returns those that came (maybe none),
        sending heartbeats and joining again meanwhile as needed."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            self._keep_alive()
            if self._ready:
                delivered, self._ready = self._ready, []
                return delivered
            now = time.monotonic()
            if now >= deadline:
                return []
            self._receive(min(deadline, self._next_keep_alive()) - now)

    def ack(self, positions: list[int]) -> dict:
        """Acknowledges deliveries; returns `{group, acked, stale}`: the positions done now, and
        those this member did not hold (already acknowledged, or delivered again elsewhere)."""
        return expect_ok(self._request({"type": "Ack", "group": self.group, "positions": positions}))["result"]

    def nack(self, position: int, reason: str | None = None) -> bool:
        """Fails a delivery, so it is delivered again (or parked after the group's maxDeliver
        attempts); False when this member did not hold it (stale), which changes nothing."""
        document = {"type": "Nack", "group": self.group, "position": position}
        if reason:
            document["reason"] = reason
        reply = self._request(document)
        if not reply["ok"] and reply["error"]["code"] == "stale_delivery":
            return False
        expect_ok(reply)
        return True

    def leave(self) -> None:
        """Leaves the group: what this member holds goes to the others at once."""
        expect_ok(self._request({"type": "Leave", "group": self.group}))
        self.joined = False

    def close(self) -> None:
        self.socket.close()

    # --- the socket -------------------------------------------------------------------

    def _request(self, document: dict) -> dict:
        """Sends one request and waits for its reply, keeping the deliveries that come meanwhile."""
        self._awaited, self._answer = self._send(document), None
        deadline = time.monotonic() + self.timeout_ms / 1000
        try:
            while self._answer is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise NoReply(f"no reply to {document['type']} {self.group} within {self.timeout_ms} ms")
                self._receive(left)
            return self._answer
        finally:
            self._awaited = None  # a late reply is ignored

    def _send(self, document: dict) -> str:
        request_id = f"{document['type']}-{new_id()}"
        payload = json.dumps({"id": request_id, **document}, separators=(",", ":")).encode()
        try:
            self.socket.send_multipart([b"", payload], flags=zmq.NOBLOCK)
        except zmq.Again:
            pass  # the queue towards the groups process is full: as if lost, no reply comes
        self._last_sent = time.monotonic()
        return request_id

    def _receive(self, seconds: float) -> None:
        """Takes what arrives within `seconds`, then whatever else is waiting."""
        if not self.socket.poll(max(0, int(seconds * 1000))):
            return
        while self.socket.poll(0):
            message = json.loads(self.socket.recv_multipart()[-1])  # [empty delimiter, message]
            if message.get("type") == "Deliver" and "id" not in message:
                event = message["event"]
                self._ready.append(Delivery(message["group"], message["position"], message["attempt"], event))
            elif message.get("id") is not None and message["id"] == self._awaited:
                self._answer = message
            else:
                self._on_unasked_reply(message)

    def _on_unasked_reply(self, reply: dict) -> None:
        """The reply to a Heartbeat or Join that poll sent (or a late one, ignored)."""
        request_type = self._unanswered.pop(reply.get("id"), None)
        error = None if reply["ok"] else reply["error"]
        if request_type == "Heartbeat" and error is not None:
            if error["code"] != "not_a_member":
                raise Refused(error)  # unknown_group: the group was deleted
            if self.joined:
                self.joined = False
                self.note(f"the groups process does not know this member of {self.group} (not_a_member): "
                          "joining again")
        elif request_type == "Join":
            self._join_sent = None
            if error is not None:
                raise Refused(error)
            self._joined(reply["result"])
            self.note(f"joined {self.group} again")

    def _joined(self, result: dict) -> None:
        self.joined = True
        self._join_sent = None
        self.heartbeat_seconds = result["heartbeatMs"] / 1000

    def _keep_alive(self) -> None:
        now = time.monotonic()
        if not self.joined:
            if self._join_sent is None or now - self._join_sent >= self.JOIN_RETRY_SECONDS:
                self._join_sent = now
                self._expect_reply("Join")
        elif now >= self._next_beat():
            self._expect_reply("Heartbeat")

    def _expect_reply(self, request_type: str) -> None:
        """Sends a Join or Heartbeat whose reply `_on_unasked_reply` reads when it comes."""
        self._unanswered[self._send({"type": request_type, "group": self.group})] = request_type
        while len(self._unanswered) > 64:  # replies that never came (the groups process was away)
            del self._unanswered[next(iter(self._unanswered))]

    def _next_beat(self) -> float:
        return self._last_sent + self.heartbeat_seconds

    def _next_keep_alive(self) -> float:
        """When `_keep_alive` has something to send next: a Heartbeat, or another Join."""
        if self.joined:
            return self._next_beat()
        return (self._join_sent or 0) + self.JOIN_RETRY_SECONDS
