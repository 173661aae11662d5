"""Talks to the service the way any client would (pyzmq REQ, DEALER and SUB sockets) and
records every request sent, every reply received and every feed message, byte for byte
and parsed, for the validation that follows.

With CURVE keys (`keys`: role -> ClientKeys) every socket is a CURVE client with the
admin's key unless a request names another role (`as_role`).

A request is one JSON frame. From a REQ socket it goes as is; from a DEALER it goes after
an empty delimiter frame, and its reply must come back as [empty][reply]. Both kinds of
socket are used on every request socket, in turn.

A member of a consumer group (`GroupMember`) is a DEALER on the groups socket: besides the
replies to its requests it receives deliveries, unasked, as [empty][Deliver]; they are
recorded too (`WireClient.deliveries`).
"""

import dataclasses
import json
import time

import zmq

REPLY_TIMEOUT_MS = 10_000


class WireFailure(Exception):
    pass


@dataclasses.dataclass
class Expectation:
    """What the scenario expects of one exchange.

    reply: "ok" or the error code the service must answer.
    request_valid: whether the request must pass its schema (True) or fail it (False).
    note: why a request that the service refuses still passes its schema (a rule JSON
          Schema cannot express), or why one the service accepts fails it (leniency).
    """

    reply: str = "ok"
    request_valid: bool = True
    note: str = ""


@dataclasses.dataclass
class Exchange:
    socket: str  # commands | queries | log | groups
    via: str  # REQ | DEALER | DEALER (raw frames), with " as ROLE" for a role other than the default
    frames: list  # the request frames after any delimiter, as bytes
    request: object  # the parsed request document, or None when the frame is not JSON
    reply: dict
    label: str
    expect: Expectation
    query_type: str = ""  # for query replies: the type asked (the reply does not name it)


@dataclasses.dataclass
class Delivery:
    """A message a member received without asking: the frames as they came, and the document."""

    label: str  # the member's group and what it was doing
    frames: list
    message: dict


class WireClient:
    def __init__(self, context: zmq.Context, endpoints: dict, keys: dict | None = None):
        self.context = context
        self.endpoints = endpoints
        self.keys = keys or {}
        self.exchanges: list[Exchange] = []
        self.deliveries: list[Delivery] = []
        self._sockets: dict = {}
        self._turn = 0

    def _new_socket(self, kind: int, role: str = "admin"):
        """A socket with linger 0, a CURVE client with `role`'s key when keys are set."""
        s = self.context.socket(kind)
        s.setsockopt(zmq.LINGER, 0)
        if self.keys:
            self.keys[role].apply(s)
        return s

    def close(self):
        for s in self._sockets.values():
            s.close(linger=0)
        self._sockets.clear()

    def _socket(self, name: str, kind: int, role: str = "admin"):
        key = (name, kind, role)
        if key not in self._sockets:
            s = self._new_socket(kind, role)
            s.connect(self.endpoints[name])
            self._sockets[key] = s
        return self._sockets[key]

    def request(self, socket: str, document, label: str, expect: Expectation = None, via: str = None,
                as_role: str = "admin") -> dict:
        """Sends one request (a dict, or bytes sent as the frame exactly) and returns the parsed reply."""
        body = document if isinstance(document, bytes) else json.dumps(document, ensure_ascii=False).encode()
        if via is None:
            self._turn += 1
            via = "REQ" if self._turn % 2 else "DEALER"
        if via == "REQ":
            s = self._socket(socket, zmq.REQ, as_role)
            s.send(body)
            frames = self._receive(s, label)
            if len(frames) != 1:
                raise WireFailure(f"{label}: a REQ socket got {len(frames)} reply frames, expected 1")
        else:
            s = self._socket(socket, zmq.DEALER, as_role)
            s.send_multipart([b"", body])
            frames = self._receive(s, label)
            if len(frames) != 2 or frames[0] != b"":
                raise WireFailure(f"{label}: a DEALER got reply frames {frames[:3]!r}, expected [empty][reply]")
        shown = via if as_role == "admin" else f"{via} as {as_role}"
        return self._record(socket, shown, [body], frames[-1], label, expect)

    def answers_status(self, socket: str, timeout_ms: int = 250) -> bool:
        """One `Status` from a fresh DEALER (a process still starting may not answer); recorded when answered."""
        s = self._new_socket(zmq.DEALER)
        body = json.dumps({"id": f"ready-{socket}", "type": "Status"}).encode()
        try:
            s.connect(self.endpoints[socket])
            s.send_multipart([b"", body])
            if not s.poll(timeout_ms):
                return False
            frames = s.recv_multipart()
        finally:
            s.close()
        if len(frames) != 2 or frames[0] != b"":
            raise WireFailure(f"Status on {socket}: reply frames {frames[:3]!r}, expected [empty][reply]")
        reply = self._record(socket, "DEALER", [body], frames[1], f"Status on {socket} (readiness)", Expectation())
        return reply.get("ok") is True

    def raw_frames(self, socket: str, frames: list, label: str, expect: Expectation) -> dict:
        """Sends exactly these frames from a fresh DEALER (no delimiter added) and returns the reply."""
        s = self._new_socket(zmq.DEALER)
        try:
            s.connect(self.endpoints[socket])
            s.send_multipart(frames)
            reply = self._receive(s, label)
        finally:
            s.close()
        if not reply or reply[0] != b"":
            raise WireFailure(f"{label}: reply frames {reply[:3]!r} do not start with the empty delimiter")
        return self._record(socket, "DEALER (raw frames)", frames, reply[-1], label, expect)

    def flood(self, socket: str, documents: list, label: str, expect_by_id: dict, deadline_seconds: float) -> list:
        """Sends many requests from one DEALER at once, then collects one reply per request."""
        s = self._new_socket(zmq.DEALER)
        s.setsockopt(zmq.SNDHWM, 0)
        s.setsockopt(zmq.RCVHWM, 0)
        bodies = {}
        try:
            s.connect(self.endpoints[socket])
            for document in documents:
                body = json.dumps(document).encode()
                bodies[document["id"]] = body
                s.send_multipart([b"", body])
            replies = []
            deadline = time.monotonic() + deadline_seconds
            while len(replies) < len(documents):
                remaining = int((deadline - time.monotonic()) * 1000)
                if remaining <= 0 or not s.poll(remaining):
                    raise WireFailure(
                        f"{label}: {len(replies)} of {len(documents)} replies within {deadline_seconds} s")
                frames = s.recv_multipart()
                if len(frames) != 2 or frames[0] != b"":
                    raise WireFailure(f"{label}: a DEALER got reply frames {frames[:3]!r}")
                reply = _parse_reply(frames[1], label)
                rid = reply.get("id")
                if rid not in bodies:
                    raise WireFailure(f"{label}: a reply echoes id {rid!r}, which was not sent")
                replies.append(self._record(socket, "DEALER", [bodies[rid]], frames[1], label, expect_by_id[rid]))
            return replies
        finally:
            s.close()

    def member(self, group: str, role: str = "admin") -> "GroupMember":
        """A new member's connection to the groups socket (it joins when it sends Join)."""
        return GroupMember(self, group, role)

    def _receive(self, s, label: str) -> list:
        if not s.poll(REPLY_TIMEOUT_MS):
            raise WireFailure(f"{label}: no reply within {REPLY_TIMEOUT_MS} ms")
        return s.recv_multipart()

    def _record(self, socket, via, frames, reply_frame, label, expect) -> dict:
        request = None
        if len(frames) == 1:
            try:
                request = json.loads(frames[0])
            except ValueError:
                request = None
        reply = _parse_reply(reply_frame, label)
        query_type = request.get("type", "") if socket == "queries" and isinstance(request, dict) else ""
        self.exchanges.append(Exchange(socket, via, frames, request, reply, label, expect or Expectation(), query_type))
        return reply


def _parse_reply(frame: bytes, label: str) -> dict:
    try:
        reply = json.loads(frame.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise WireFailure(f"{label}: the reply is not UTF-8 JSON ({error}): {frame[:200]!r}")
    if not isinstance(reply, dict):
        raise WireFailure(f"{label}: the reply is not a JSON object: {frame[:200]!r}")
    return reply


class GroupMember:
    """One DEALER on the groups socket, as a member of consumer groups is: each request waits
    for the reply with its id, keeping the deliveries that come meanwhile (`waiting`), and
    `deliveries_until` waits for deliveries, sending Heartbeat as a member must while it waits.
    Every reply and every delivery is recorded on the WireClient.
    """

    def __init__(self, client: WireClient, group: str, role: str = "admin"):
        self.client = client
        self.group = group
        self.role = role
        self.socket = client._new_socket(zmq.DEALER, role)
        self.socket.connect(client.endpoints["groups"])
        self.waiting: list[dict] = []  # deliveries received and not yet taken, in arrival order
        self.heartbeat_seconds = 1.0  # until a Join reply says otherwise
        self._last_sent = time.monotonic()
        self._counter = 0

    def request(self, document: dict, label: str, expect: Expectation) -> dict:
        body = json.dumps(document, ensure_ascii=False).encode()
        self.socket.send_multipart([b"", body])
        self._last_sent = time.monotonic()
        deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
        while True:
            frames = self._next_frames(deadline, label)
            message = self._parse(frames, label)
            if message.get("type") == "Deliver" and "id" not in message:
                self._keep(frames, message, label)
                continue
            via = "DEALER" if self.role == "admin" else f"DEALER as {self.role}"
            reply = self.client._record("groups", via, [body], frames[1], label, expect)
            if reply.get("id") != document.get("id"):
                raise WireFailure(f"{label}: the member got a reply to another request: {json.dumps(reply)[:300]}")
            result = reply.get("result") if reply.get("ok") is True else None
            if document.get("type") == "Join" and isinstance(result, dict) and "heartbeatMs" in result:
                self.heartbeat_seconds = result["heartbeatMs"] / 1000
            return reply

    def deliveries_until(self, done, label: str, deadline_seconds: float = 30) -> list[dict]:
        """Takes the deliveries that come until `done(taken)` holds for those taken so far; a
        Heartbeat goes out whenever the member has sent nothing for its heartbeat interval."""
        taken: list[dict] = []
        deadline = time.monotonic() + deadline_seconds
        while True:
            while self.waiting and not done(taken):
                taken.append(self.waiting.pop(0))
            if done(taken):
                return taken
            if time.monotonic() > deadline:
                raise WireFailure(f"{label}: after {deadline_seconds} s the member has {len(taken)} deliveries: "
                                  f"{[(d['position'], d['attempt']) for d in taken]}")
            if time.monotonic() - self._last_sent >= self.heartbeat_seconds:
                self._counter += 1
                document = {"id": f"beat-{self.group}-{self._counter}", "type": "Heartbeat", "group": self.group}
                reply = self.request(document, f"Heartbeat of a member of {self.group}", Expectation())
                if reply.get("ok") is not True:
                    raise WireFailure(f"{label}: a member's Heartbeat was refused: {json.dumps(reply)[:300]}")
                continue
            wait_ms = max(1, int(min(deadline, self._last_sent + self.heartbeat_seconds) * 1000
                                 - time.monotonic() * 1000))
            if self.socket.poll(wait_ms):
                frames = self.socket.recv_multipart()
                message = self._parse(frames, label)
                if message.get("type") == "Deliver" and "id" not in message:
                    self._keep(frames, message, label)
                else:
                    raise WireFailure(f"{label}: a member got a reply it did not wait for: {json.dumps(message)[:300]}")

    def close(self):
        self.socket.close(linger=0)

    def _next_frames(self, deadline: float, label: str) -> list:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0 or not self.socket.poll(left_ms):
            raise WireFailure(f"{label}: no reply within {REPLY_TIMEOUT_MS} ms")
        return self.socket.recv_multipart()

    def _parse(self, frames: list, label: str) -> dict:
        if len(frames) != 2 or frames[0] != b"":
            raise WireFailure(f"{label}: a member got frames {frames[:3]!r}, expected [empty][message]")
        return _parse_reply(frames[1], label)

    def _keep(self, frames: list, message: dict, label: str):
        self.client.deliveries.append(Delivery(f"{label} (member of {self.group})", frames, message))
        self.waiting.append(message)


class FeedRecorder:
    """A SUB socket subscribed to every topic (the empty prefix), connected before any command;
    a CURVE client with `keys` when given."""

    def __init__(self, context: zmq.Context, endpoint: str, keys=None):
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        if keys is not None:
            keys.apply(self.socket)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        self.socket.setsockopt(zmq.SUBSCRIBE, b"")
        self.socket.connect(endpoint)
        self.messages: list[list[bytes]] = []

    def drain(self, wait_ms: int = 0) -> int:
        """Takes every message waiting (waiting up to wait_ms for the first); returns how many."""
        taken = 0
        while self.socket.poll(wait_ms if taken == 0 else 0):
            self.messages.append(self.socket.recv_multipart())
            taken += 1
        return taken

    def close(self):
        self.socket.close(linger=0)
