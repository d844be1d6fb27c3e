"""Throwaway labs for root tests: tester, Linux router, tester in network
namespaces joined by veth pairs. Every namespace is removed after its test,
even on failure, and the session checks that none is left."""

from __future__ import annotations

import itertools
import os
import subprocess
from dataclasses import dataclass

import pytest

PREFIX = f"v6bt{os.getpid() % 10000}x"
_counter = itertools.count()


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30)


def our_namespaces() -> list[str]:
    out = sh("ip", "netns", "list").stdout.split()
    return [n for n in out if n.startswith(PREFIX)]


@dataclass(frozen=True)
class RouterLab:
    """t1 --[t1 | ra]-- r1 --[rb | t2]-- t2; router at .1 / ::1."""

    t1: str
    r1: str
    t2: str
    t1_if: str
    t2_if: str
    r1_a: str
    r1_b: str

    def port(self, name: str, **extra) -> dict:
        """A spec port on tester ``t1`` (name "a") or ``t2`` (name "b")."""
        if name == "a":
            p = {"name": "a", "interface": self.t1_if, "netns": self.t1, "ipv4": "198.18.0.2/24", "ipv6": "2001:2::2/64",
                 "gateway_ipv4": "198.18.0.1", "gateway_ipv6": "2001:2::1"}
        else:
            p = {"name": "b", "interface": self.t2_if, "netns": self.t2, "ipv4": "198.19.0.2/24", "ipv6": "2001:2:0:1::2/64",
                 "gateway_ipv4": "198.19.0.1", "gateway_ipv6": "2001:2:0:1::1"}
        p.update(extra)
        return p

    def in_router(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", self.r1, *args, check=check)

    def in_ns(self, ns: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", ns, *args, check=check)


def _build(tag: str) -> RouterLab:
    lab = RouterLab(t1=f"{tag}t1", r1=f"{tag}r1", t2=f"{tag}t2", t1_if=f"{tag}a", t2_if=f"{tag}b", r1_a=f"{tag}ra", r1_b=f"{tag}rb")
    for ns in (lab.t1, lab.r1, lab.t2):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", lab.t1_if, "netns", lab.t1, "type", "veth", "peer", "name", lab.r1_a, "netns", lab.r1)
    sh("ip", "link", "add", lab.t2_if, "netns", lab.t2, "type", "veth", "peer", "name", lab.r1_b, "netns", lab.r1)
    # Tester interfaces carry no addresses: the engine owns them.
    for ns, ifname in ((lab.t1, lab.t1_if), (lab.t2, lab.t2_if)):
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "set", ifname, "up")
    lab.in_router("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
    for ifname, v4, v6 in ((lab.r1_a, "198.18.0.1/24", "2001:2::1/64"), (lab.r1_b, "198.19.0.1/24", "2001:2:0:1::1/64")):
        sh("ip", "-n", lab.r1, "addr", "add", v4, "dev", ifname)
        sh("ip", "-n", lab.r1, "addr", "add", v6, "dev", ifname, "nodad")
        sh("ip", "-n", lab.r1, "link", "set", ifname, "up")
    # Wait for carrier on all four ends.
    for ns, ifname in ((lab.t1, lab.t1_if), (lab.t2, lab.t2_if), (lab.r1, lab.r1_a), (lab.r1, lab.r1_b)):
        for _ in range(100):
            if "LOWER_UP" in sh("ip", "-n", ns, "link", "show", ifname).stdout:
                break
            subprocess.run(["sleep", "0.05"])
    return lab


def _destroy(tag: str) -> None:
    for ns in (f"{tag}t1", f"{tag}r1", f"{tag}t2"):
        sh("ip", "netns", "del", ns, check=False)  # removes its veth ends and nftables with it


@pytest.fixture
def router_lab():
    tag = f"{PREFIX}{next(_counter)}"
    try:
        yield _build(tag)
    finally:
        _destroy(tag)
        assert not [n for n in our_namespaces() if n.startswith(tag)], "a namespace was left behind"


@pytest.fixture(scope="session", autouse=True)
def no_namespace_left_behind():
    yield
    left = our_namespaces()
    for ns in left:
        sh("ip", "netns", "del", ns, check=False)
    assert not left, f"namespaces left behind: {left}"
