"""A worker, a query process and a groups process of the real `logbook` binary on free
loopback ports, each started when a scenario needs it, which the chaos suite kills (SIGKILL),
stops (SIGTERM) and starts again on the same data, and whose log it reads straight from the
SQLite file to check it against the replies.
"""

import json
import pathlib
import signal
import sqlite3
import subprocess
import sys
import time

import zmq

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "WireContract"))
from service_processes import _end_with_parent, free_loopback_ports  # noqa: E402


class ClusterFailure(Exception):
    pass


class Cluster:
    ROLES = ("worker", "query", "groups")
    SOCKETS = ("commands", "feed", "queries", "log", "groups")
    # The socket on which each role answers Status.
    STATUS_SOCKETS = {"worker": "commands", "query": "queries", "groups": "groups"}

    def __init__(self, binary: pathlib.Path, workdir: pathlib.Path):
        self.binary = binary
        self.workdir = workdir
        ports = free_loopback_ports(len(self.SOCKETS))
        self.endpoints = {name: f"tcp://127.0.0.1:{port}" for name, port in zip(self.SOCKETS, ports)}
        self.processes: dict[str, subprocess.Popen] = {}
        self.starts = {role: 0 for role in self.ROLES}
        self.context = zmq.Context.instance()

    def start(self, role: str):
        flags = []
        for name in self.SOCKETS:
            flags += [f"--{name}", self.endpoints[name]]
        self.starts[role] += 1
        stderr = open(self.workdir / f"{role}-{self.starts[role]}.stderr.log", "wb")
        self.processes[role] = subprocess.Popen(
            [str(self.binary), "run", role, "--data-dir", str(self.workdir / role), *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=_end_with_parent)
        stderr.close()
        self.wait_ready(role)

    def wait_ready(self, role: str, seconds: float = 30):
        """Returns once the role's request socket answers Status."""
        socket_name = self.STATUS_SOCKETS[role]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.processes[role].poll() is not None:
                raise ClusterFailure(f"{role} exited with {self.processes[role].returncode}: {self.log_tail(role)}")
            if self.status(socket_name, 500) is not None:
                return
        raise ClusterFailure(f"{role} did not answer Status within {seconds} s")

    def status(self, socket_name: str, milliseconds: int):
        socket = self.context.socket(zmq.DEALER)
        socket.linger = 0
        try:
            socket.connect(self.endpoints[socket_name])
            socket.send_multipart([b"", b'{"id":"status","type":"Status"}'])
            if socket.poll(milliseconds):
                return json.loads(socket.recv_multipart()[-1])
            return None
        finally:
            socket.close()

    def kill(self, role: str):
        process = self.processes[role]
        process.send_signal(signal.SIGKILL)
        process.wait()

    def terminate(self, role: str, seconds: float = 20) -> int:
        """SIGTERM; returns the exit status (killing the process if it outlives `seconds`)."""
        process = self.processes[role]
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise ClusterFailure(f"{role} did not exit within {seconds} s of SIGTERM")

    def pid(self, role: str) -> int:
        return self.processes[role].pid

    def peak_rss_kib(self, role: str) -> int:
        """VmHWM: the most resident memory the process has had so far."""
        for line in pathlib.Path(f"/proc/{self.pid(role)}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise ClusterFailure("no VmHWM in /proc")

    def rss_kib(self, role: str) -> int:
        for line in pathlib.Path(f"/proc/{self.pid(role)}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise ClusterFailure("no VmRSS in /proc")

    def alive(self, role: str) -> bool:
        return self.processes[role].poll() is None

    def log_tail(self, role: str, lines: int = 10) -> str:
        path = self.workdir / f"{role}-{self.starts[role]}.stderr.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"

    def events_by_command(self) -> dict[str, int]:
        """Per command id, how many events the log holds (read from the file, read-only)."""
        path = self.workdir / "worker" / "events.sqlite3"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
            return dict(db.execute("SELECT command_id, COUNT(*) FROM events GROUP BY command_id"))

    def head(self) -> int:
        path = self.workdir / "worker" / "events.sqlite3"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
            return db.execute("SELECT COALESCE(MAX(position), 0) FROM events").fetchone()[0]

    def stop_all(self):
        for role, process in self.processes.items():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
