"""The real service for the test: `logbook run worker`, `logbook run query` and `logbook run
groups` as three processes on free loopback ports, each with its own data directory in a
temporary folder.

With `curve=True` all run with CURVE (`--curve-secret`, `--clients`; the query and the groups
process reach the worker with a reader key of their own), and `keys` holds every client key the
test uses, by role: made with `logbook keygen`, except the reader's, which pyzmq's
`zmq.auth.create_certificates` makes and which goes into the allow-list unchanged (in its
role folder, as pyzmq's public files carry no metadata).

`ServiceProcesses` is a context manager: leaving it (normally or by an exception) sends
SIGTERM to every process, waits, and kills whatever is still running, so no process
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


class ClientKeys:
    """A client's CURVE keys (Z85 bytes, as pyzmq's socket options take them) and the server's."""

    def __init__(self, secret_file: pathlib.Path, server_file: pathlib.Path):
        import zmq.auth
        self.public, self.secret = zmq.auth.load_certificate(secret_file)
        self.server, _ = zmq.auth.load_certificate(server_file)

    def apply(self, socket):
        socket.curve_secretkey = self.secret
        socket.curve_publickey = self.public
        socket.curve_serverkey = self.server


def make_keys(binary: pathlib.Path, folder: pathlib.Path) -> dict:
    """The servers' pair, the query process's reader pair (the groups process's too) and one pair per role, with the
    allow-list in folder/clients; returns the flags of each process and the clients' keys."""
    import shutil
    import zmq.auth
    clients = folder / "clients"
    (clients / "reader").mkdir(parents=True)
    for name, role in (("server", None), ("query", "reader"), ("admin", "admin"), ("writer", "writer")):
        extra = ["--role", role] if role else []
        subprocess.run([str(binary), "keygen", name, "--dir", str(folder), *extra], check=True,
                       stdout=subprocess.DEVNULL)
        if role:
            shutil.copy(folder / name, clients / name)
    old = os.umask(0o077)  # pyzmq writes with the umask; Logbook refuses a secret others may read
    try:
        public, secret = zmq.auth.create_certificates(folder, "pyreader", metadata={"role": "reader"})
    finally:
        os.umask(old)
    shutil.copy(public, clients / "reader" / "pyreader.key")
    server_public = folder / "server"
    server_flags = ["--curve-secret", str(folder / "server_secret"), "--clients", str(clients)]
    reader_of_worker = ["--curve-key", str(folder / "query_secret"), "--server-key", str(server_public)]
    return {
        "worker": server_flags,
        "query": server_flags + reader_of_worker,
        "groups": server_flags + reader_of_worker,
        "clients": {
            "admin": ClientKeys(folder / "admin_secret", server_public),
            "writer": ClientKeys(folder / "writer_secret", server_public),
            "reader": ClientKeys(pathlib.Path(secret), server_public),
        },
    }


class ServiceProcesses:
    def __init__(self, binary: pathlib.Path, workdir: pathlib.Path, curve: bool = False):
        self.binary = binary
        self.workdir = workdir
        self.curve = make_keys(binary, workdir / "keys") if curve else None
        commands, feed, queries, log, groups = free_loopback_ports(5)
        self.endpoints = {
            "commands": f"tcp://127.0.0.1:{commands}",
            "feed": f"tcp://127.0.0.1:{feed}",
            "queries": f"tcp://127.0.0.1:{queries}",
            "log": f"tcp://127.0.0.1:{log}",
            "groups": f"tcp://127.0.0.1:{groups}",
        }
        self.worker_dir = workdir / "worker"
        self.query_dir = workdir / "query"
        self.groups_dir = workdir / "groups"
        self.processes: dict[str, subprocess.Popen] = {}
        self.log_files: dict[str, pathlib.Path] = {}

    @property
    def client_keys(self) -> dict:
        """The clients' keys by role (admin, writer, reader); empty when CURVE is off."""
        return self.curve["clients"] if self.curve else {}

    @property
    def event_log_path(self) -> pathlib.Path:
        return self.worker_dir / "events.sqlite3"

    def __enter__(self):
        flags = []
        for name in ("commands", "feed", "queries", "log", "groups"):
            flags += [f"--{name}", self.endpoints[name]]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
        for role, folder in (("worker", self.worker_dir), ("query", self.query_dir), ("groups", self.groups_dir)):
            log_path = self.workdir / f"{role}.stderr.log"
            self.log_files[role] = log_path
            with open(log_path, "wb") as stderr:
                self.processes[role] = subprocess.Popen(
                    [str(self.binary), "run", role, "--data-dir", str(folder), "--log-level", "info", *flags,
                     *(self.curve[role] if self.curve else [])],
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
        """Returns once `answers_status(socket_name)` is true for the commands, queries and groups sockets."""
        deadline = time.monotonic() + timeout_seconds
        for name in ("commands", "queries", "groups"):
            while True:
                self.check_running()
                if answers_status(name):
                    break
                if time.monotonic() > deadline:
                    raise ServiceError(f"the {name} socket did not answer Status within {timeout_seconds} s")
                time.sleep(0.05)
