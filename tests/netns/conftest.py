"""Throwaway labs for root tests: tester, Linux router, tester in network
namespaces joined by veth pairs. Every namespace is removed after its test,
even on failure, and the session checks that none is left."""

from __future__ import annotations

import itertools
import os
import subprocess
from dataclasses import dataclass

import pytest

import stale

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


def _build(tag: str, queues: int = 1) -> RouterLab:
    lab = RouterLab(t1=f"{tag}t1", r1=f"{tag}r1", t2=f"{tag}t2", t1_if=f"{tag}a", t2_if=f"{tag}b", r1_a=f"{tag}ra", r1_b=f"{tag}rb")
    for ns in (lab.t1, lab.r1, lab.t2):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    q = ("numtxqueues", str(queues), "numrxqueues", str(queues))
    sh("ip", "link", "add", lab.t1_if, "netns", lab.t1, *q, "type", "veth", "peer", "name", lab.r1_a, "netns", lab.r1, *q)
    sh("ip", "link", "add", lab.t2_if, "netns", lab.t2, *q, "type", "veth", "peer", "name", lab.r1_b, "netns", lab.r1, *q)
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


def _lab(queues: int):
    tag = f"{PREFIX}{next(_counter)}"
    try:
        yield _build(tag, queues)
    finally:
        _destroy(tag)
        assert not [n for n in our_namespaces() if n.startswith(tag)], "a namespace was left behind"


@pytest.fixture
def router_lab():
    yield from _lab(1)


@pytest.fixture
def router_lab_2q():
    """The router lab with veths of two transmit and two receive queues."""
    yield from _lab(2)


@dataclass(frozen=True)
class P2pLab:
    """t1 --[a | b]-- t2: two tester namespaces back to back, veths of two
    queues each way; the engine owns 198.18.0.2 / 2001:2::2 (a) and
    198.18.0.3 / 2001:2::3 (b)."""

    t1: str
    t2: str
    a_if: str
    b_if: str

    def port(self, name: str, **extra) -> dict:
        me, peer = (2, 3) if name == "a" else (3, 2)
        p = {"name": name, "interface": self.a_if if name == "a" else self.b_if, "netns": self.t1 if name == "a" else self.t2,
             "ipv4": f"198.18.0.{me}/24", "ipv6": f"2001:2::{me}/64", "gateway_ipv4": f"198.18.0.{peer}", "gateway_ipv6": f"2001:2::{peer}"}
        p.update(extra)
        return p

    def in_ns(self, ns: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", ns, *args, check=check)


@pytest.fixture
def p2p_2q():
    tag = f"{PREFIX}{next(_counter)}"
    lab = P2pLab(t1=f"{tag}t1", t2=f"{tag}t2", a_if=f"{tag}a", b_if=f"{tag}b")
    try:
        for ns in (lab.t1, lab.t2):
            sh("ip", "netns", "add", ns)
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        q = ("numtxqueues", "2", "numrxqueues", "2")
        sh("ip", "link", "add", lab.a_if, "netns", lab.t1, *q, "type", "veth", "peer", "name", lab.b_if, "netns", lab.t2, *q)
        for ns, ifname in ((lab.t1, lab.a_if), (lab.t2, lab.b_if)):
            sh("ip", "-n", ns, "link", "set", ifname, "up")
        for _ in range(100):
            if "LOWER_UP" in sh("ip", "-n", lab.t2, "link", "show", lab.b_if).stdout:
                break
            subprocess.run(["sleep", "0.05"])
        yield lab
    finally:
        for ns in (lab.t1, lab.t2):
            sh("ip", "netns", "del", ns, check=False)
        assert not [n for n in our_namespaces() if n.startswith(tag)], "a namespace was left behind"


@pytest.fixture
def ns_tag():
    """A new prefix for a test's own namespaces: every namespace whose name starts with it is removed
    after the test (after the test's other fixtures end), whatever happened, and checked gone."""
    tag = f"{PREFIX}{next(_counter)}"
    yield tag
    for ns in our_namespaces():
        if ns.startswith(tag):
            sh("ip", "netns", "del", ns, check=False)
    assert not [n for n in our_namespaces() if n.startswith(tag)], "a namespace was left behind"


@pytest.fixture(scope="session", autouse=True)
def no_namespace_left_behind():
    stale.sweep()  # what a killed session left
    yield
    left = our_namespaces()
    for ns in left:
        sh("ip", "netns", "del", ns, check=False)
    assert not left, f"namespaces left behind: {left}"
