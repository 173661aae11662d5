"""Load for the chaos suite: clients that each keep a window of commands in flight on a DEALER,
every command an `AddProduct` of a product of its own with a name of 100 characters (so each
appends exactly one event under its command id, and a page of 10,000 is megabytes), and the
check of the log against every reply received.

With `resend`, a client whose oldest command has waited `resend_after` seconds (a killed
worker) opens a fresh socket and sends every unanswered command again with the same id, as a
real client must; without it (the SIGTERM test) nothing is sent twice.
"""

import dataclasses
import itertools
import json
import threading
import time

import zmq

RETRYABLE = {"unavailable", "timeout"}


@dataclasses.dataclass
class LoadFigures:
    sent: int = 0
    acknowledged: int = 0
    refused: int = 0
    resent: int = 0
    unanswered: int = 0


class CommandLoad(threading.Thread):
    def __init__(self, endpoint: str, label: str, clients: int = 8, window: int = 16, resend: bool = True,
                 resend_after: float = 2.0, limit: int | None = None):
        super().__init__(name=f"load-{label}", daemon=True)
        self.endpoint = endpoint
        self.label = label
        self.clients = clients
        self.window = window
        self.resend = resend
        self.resend_after = resend_after
        self.limit = limit
        self.acknowledged: dict[str, int] = {}  # command id -> events its reply named
        self.refused: dict[str, str] = {}
        self.pending: dict[str, tuple] = {}  # command id -> (client, document, sent at)
        self.figures = LoadFigures()
        self.stopping = threading.Event()
        self.drain_seconds = 20.0
        self.failure: BaseException | None = None
        self._ids = itertools.count(1)

    def stop(self, drain_seconds: float = 20.0):
        """Stops sending new commands; the thread ends once every command is answered (or
        `drain_seconds` passed) and `join()` returns then."""
        self.drain_seconds = drain_seconds
        self.stopping.set()

    def _socket(self, context):
        socket = context.socket(zmq.DEALER)
        socket.linger = 0
        socket.connect(self.endpoint)
        return socket

    def _document(self) -> tuple[str, bytes]:
        number = next(self._ids)
        command_id = f"{self.label}-{number}"
        data = {"productId": command_id, "name": f"thing {number} ".ljust(100, "x"), "price": "1.50",
                "category": "food", "stock": 1}
        return command_id, json.dumps({"id": command_id, "type": "AddProduct", "data": data}).encode()

    def run(self):
        try:
            self._run()
        except BaseException as error:  # reported by the suite, not lost in the thread
            self.failure = error

    def _run(self):
        context = zmq.Context.instance()
        sockets = [self._socket(context) for _ in range(self.clients)]
        in_flight = [dict() for _ in range(self.clients)]  # per client: id -> (document, sent at)
        drain_deadline = None
        poller = zmq.Poller()
        for socket in sockets:
            poller.register(socket, zmq.POLLIN)
        while True:
            now = time.monotonic()
            if self.limit is not None and self.figures.sent >= self.limit:
                self.stopping.set()
            if self.stopping.is_set() and drain_deadline is None:
                drain_deadline = now + self.drain_seconds
            if drain_deadline is not None and (now > drain_deadline or not any(in_flight)):
                break
            for client in range(self.clients):
                while (drain_deadline is None and len(in_flight[client]) < self.window
                       and (self.limit is None or self.figures.sent < self.limit)):
                    command_id, document = self._document()
                    sockets[client].send_multipart([b"", document])
                    in_flight[client][command_id] = (document, now)
                    self.figures.sent += 1
                if self.resend and in_flight[client]:
                    oldest = min(sent for _, sent in in_flight[client].values())
                    if now - oldest > self.resend_after:
                        poller.unregister(sockets[client])
                        sockets[client].close()
                        sockets[client] = self._socket(context)
                        poller.register(sockets[client], zmq.POLLIN)
                        for command_id, (document, _) in list(in_flight[client].items()):
                            sockets[client].send_multipart([b"", document])
                            in_flight[client][command_id] = (document, now)
                            self.figures.resent += 1
            for socket, _ in poller.poll(50):
                client = sockets.index(socket)
                while True:
                    try:
                        frames = socket.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    reply = json.loads(frames[-1])
                    command_id = reply.get("id")
                    if command_id not in in_flight[client]:
                        continue  # a late reply to a command already answered
                    if reply["ok"]:
                        self.acknowledged[command_id] = len(reply["events"])
                    elif reply["error"]["code"] in RETRYABLE and self.resend:
                        continue  # answered by the resend
                    else:
                        self.refused[command_id] = reply["error"]["code"]
                    del in_flight[client][command_id]
        self.figures.acknowledged = len(self.acknowledged)
        self.figures.refused = len(self.refused)
        self.figures.unanswered = sum(len(pending) for pending in in_flight)
        for socket in sockets:
            socket.close()


@dataclasses.dataclass
class LedgerCheck:
    """The log against the replies: `lost` acknowledged commands the log lacks, `duplicated`
    commands of the load whose events the log holds more than once, `unreplied` commands the
    log holds that got no reply (only a failure where nothing may go unanswered: SIGTERM)."""
    acknowledged: int
    lost: list
    duplicated: list
    unreplied: list

    @property
    def passed(self) -> bool:
        return not self.lost and not self.duplicated


def check_ledger(load: CommandLoad, events_by_command: dict[str, int]) -> LedgerCheck:
    ours = {command_id: count for command_id, count in events_by_command.items()
            if command_id.startswith(load.label + "-")}
    lost = [command_id for command_id in load.acknowledged if ours.get(command_id, 0) == 0]
    duplicated = [command_id for command_id, count in ours.items() if count > 1]
    wrong = [command_id for command_id, events in load.acknowledged.items()
             if events != 1 and command_id not in duplicated]
    unreplied = [command_id for command_id in ours if command_id not in load.acknowledged]
    return LedgerCheck(len(load.acknowledged), lost, duplicated + wrong, unreplied)
