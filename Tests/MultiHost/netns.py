"""Separate hosts on one machine, for tests of what crosses a network.

`TestNetwork` creates one network namespace per host, joined by veth pairs to a bridge
that lives in a namespace of its own (the "switch"), so that every address exists only
inside namespaces this test made, and nothing is added to the machine's own namespace.
Everything is removed when the `with` block ends, also after an exception or Ctrl-C.
Needs root (or CAP_NET_ADMIN) and `ip` from iproute2; `TestNetwork.unavailable()` says
why it cannot run here, so a caller can skip with that message.
"""
import os
import shutil
import signal
import subprocess
import uuid

SUBNET = "10.213.77"


class NetworkUnavailable(Exception):
    """Namespaces cannot be created on this machine (no root, no iproute2, no kernel support)."""


def _ip(*arguments, namespace=None, check=True):
    command = ["ip"] + list(arguments)
    if namespace:
        command = ["ip", "netns", "exec", namespace] + command
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


class TestNetwork:
    """Hosts named by the caller, each with one address on a shared /24."""

    def __init__(self, hosts):
        self.tag = uuid.uuid4().hex[:6]
        self.switch = f"lbsw-{self.tag}"
        self.hosts = {}
        for index, name in enumerate(hosts, start=1):
            self.hosts[name] = {"namespace": f"lb{index}-{self.tag}", "address": f"{SUBNET}.{index}"}
        self._created = []

    @staticmethod
    def unavailable():
        """Why namespaces cannot be used here, or None when they can."""
        if shutil.which("ip") is None:
            return "the ip command (iproute2) is not installed"
        if os.geteuid() != 0:
            return "network namespaces need root"
        probe = f"lbprobe-{uuid.uuid4().hex[:6]}"
        result = _ip("netns", "add", probe, check=False)
        if result.returncode != 0:
            return f"ip netns add failed: {result.stderr.strip()}"
        _ip("netns", "del", probe, check=False)
        return None

    def __enter__(self):
        previous = signal.getsignal(signal.SIGTERM)

        def stop(signum, frame):
            self.close()
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, stop)
        self._previous_sigterm = previous
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        signal.signal(signal.SIGTERM, self._previous_sigterm)
        return False

    def _build(self):
        _ip("netns", "add", self.switch)
        self._created.append(self.switch)
        _ip("link", "add", "br0", "type", "bridge", namespace=self.switch)
        _ip("link", "set", "br0", "up", namespace=self.switch)
        for index, (name, host) in enumerate(self.hosts.items(), start=1):
            namespace = host["namespace"]
            _ip("netns", "add", namespace)
            self._created.append(namespace)
            _ip("link", "set", "lo", "up", namespace=namespace)
            outer, inner = f"lbv{index}s{self.tag}", f"lbv{index}h{self.tag}"
            _ip("link", "add", outer, "netns", self.switch, "type", "veth", "peer", "name", inner, "netns", namespace)
            _ip("link", "set", outer, "master", "br0", namespace=self.switch)
            _ip("link", "set", outer, "up", namespace=self.switch)
            _ip("link", "set", inner, "name", "eth0", namespace=namespace)
            _ip("addr", "add", f"{host['address']}/24", "dev", "eth0", namespace=namespace)
            _ip("link", "set", "eth0", "up", namespace=namespace)

    def close(self):
        """Removes every namespace made (their veths and the bridge go with them)."""
        while self._created:
            _ip("netns", "del", self._created.pop(), check=False)

    def address(self, host):
        return self.hosts[host]["address"]

    def command(self, host, argv):
        """`argv` run inside `host`'s namespace."""
        return ["ip", "netns", "exec", self.hosts[host]["namespace"]] + list(argv)

    def popen(self, host, argv, **options):
        return subprocess.Popen(self.command(host, argv), **options)

    def run(self, host, argv, **options):
        return subprocess.run(self.command(host, argv), **options)

    def cut(self, host):
        """Takes `host` off the network (its link goes down) until `restore`."""
        _ip("link", "set", "eth0", "down", namespace=self.hosts[host]["namespace"])

    def restore(self, host):
        _ip("link", "set", "eth0", "up", namespace=self.hosts[host]["namespace"])
