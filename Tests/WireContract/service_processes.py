"""The real service for the test: `logbook run worker` and `logbook run query` as two
processes on free loopback ports, each with its own data directory in a temporary folder.

`ServiceProcesses` is a context manager: leaving it (normally or by an exception) sends
SIGTERM to both processes, waits, and kills whatever is still running, so no process
outlives the test.
"""

import ctypes
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time


def free_loopback_ports(count: int) -> list[int]:
    """Ports the kernel just handed out on 127.0.0.1 (held together so they differ)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _end_with_parent():
    """In the child before exec: on Linux, have the kernel send SIGTERM if the test itself dies
    (even by SIGKILL), so no service process is left behind."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ServiceError(Exception):
    pass


class ServiceProcesses:
    def __init__(self, binary: pathlib.Path, workdir: pathlib.Path):
        self.binary = binary
        self.workdir = workdir
        commands, feed, queries, log = free_loopback_ports(4)
        self.endpoints = {
            "commands": f"tcp://127.0.0.1:{commands}",
            "feed": f"tcp://127.0.0.1:{feed}",
            "queries": f"tcp://127.0.0.1:{queries}",
            "log": f"tcp://127.0.0.1:{log}",
        }
        self.worker_dir = workdir / "worker"
        self.query_dir = workdir / "query"
        self.processes: dict[str, subprocess.Popen] = {}
        self.log_files: dict[str, pathlib.Path] = {}

    @property
    def event_log_path(self) -> pathlib.Path:
        return self.worker_dir / "events.sqlite3"

    def __enter__(self):
        flags = []
        for name in ("commands", "feed", "queries", "log"):
            flags += [f"--{name}", self.endpoints[name]]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
        for role, folder in (("worker", self.worker_dir), ("query", self.query_dir)):
            log_path = self.workdir / f"{role}.stderr.log"
            self.log_files[role] = log_path
            with open(log_path, "wb") as stderr:
                self.processes[role] = subprocess.Popen(
                    [str(self.binary), "run", role, "--data-dir", str(folder), "--log-level", "info", *flags],
                    cwd=self.workdir, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=stderr, preexec_fn=_end_with_parent,
                )
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def check_running(self):
        for role, process in self.processes.items():
            if process.poll() is not None:
                raise ServiceError(
                    f"`logbook run {role}` exited with status {process.returncode}:\n{self.log_tail(role)}")

    def log_tail(self, role: str, lines: int = 15) -> str:
        path = self.log_files.get(role)
        if not path or not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def wait_until_ready(self, answers_status, timeout_seconds: float = 20):
        """Returns once `answers_status(socket_name)` is true for the commands and the queries socket."""
        deadline = time.monotonic() + timeout_seconds
        for name in ("commands", "queries"):
            while True:
                self.check_running()
                if answers_status(name):
                    break
                if time.monotonic() > deadline:
                    raise ServiceError(f"the {name} socket did not answer Status within {timeout_seconds} s")
                time.sleep(0.05)
