"""The connections a namespace router tracks, emptied (RFC 9693's
measurements start from an empty table; its tear-down rate times the
deletion): one netlink request to the router's connection tracking
(ctnetlink's delete with no tuple: every connection, every family), sent
from a helper already inside the router's namespace, so the time taken is
the kernel's deletion from request to acknowledgement, with no process
start inside it; and the ``ct count`` set of a DUT of known capacity
(lab/model/dut.py) flushed after. How long the router keeps an idle
connection is :func:`hold` (the namespace's own conntrack UDP timeouts,
30 s unreplied by default)."""

from __future__ import annotations

import errno
import socket
import struct
import time

from ...core.errors import LabError
from .ruleset import CONNECTIONS_SET, TABLE
from ..machine import nsctl

#: Netlink: the netfilter family, ctnetlink's subsystem and its delete message, a request with an
#: acknowledgement, and the error/acknowledgement message (include/uapi/linux/netfilter/nfnetlink*.h).
NETLINK_NETFILTER = 12
NFNL_SUBSYS_CTNETLINK = 1
IPCTNL_MSG_CT_DELETE = 2
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLMSG_ERROR = 2
#: struct nlmsghdr, then struct nfgenmsg (family, version, resource id in network order).
_HEADER, _NFGEN = "=LHHLL", "=BBH"


def flush_request() -> bytes:
    """The netlink message that deletes every tracked connection of every family."""
    body = struct.pack(_NFGEN, socket.AF_UNSPEC, 0, 0)
    return struct.pack(_HEADER, struct.calcsize(_HEADER) + len(body), (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE,
                       NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body


def _timed_flush() -> float:
    """Inside the namespace: the request sent on a socket opened before the clock starts; the time to
    its acknowledgement [s]. A refusal raises with the kernel's errno."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER) as sk:
        sk.bind((0, 0))
        sk.settimeout(60)
        message = flush_request()
        start = time.perf_counter()
        sk.send(message)
        reply = sk.recv(65536)
        took = time.perf_counter() - start
    kind = struct.unpack_from(_HEADER, reply)[1]
    code = struct.unpack_from("=i", reply, struct.calcsize(_HEADER))[0] if kind == NLMSG_ERROR else 0
    if code not in (0, -errno.ENOENT):
        raise OSError(-code, f"deleting the tracked connections: {errno.errorcode.get(-code, code)}")
    return took


def clear(netns: str, counted: bool) -> float:
    """Deletes every connection ``netns`` tracks (and, ``counted``, the
    capacity's count); returns how long the deletion took [s] (module docstring)."""
    try:
        took = float(nsctl.run_in(netns, _timed_flush))
    except LabError as e:
        raise LabError(f"emptying the router's connection table: {e}") from None
    if counted:
        nsctl.command(netns, ["nft", "flush", "set", "inet", TABLE, CONNECTIONS_SET])
    return took


def held(netns: str) -> int:
    """The connections ``netns`` tracks now."""
    return int(nsctl.command(netns, ["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]).strip())


#: The namespace's conntrack timeouts of a UDP connection: unreplied, and replied (a "stream").
UDP_TIMEOUTS = ("net.netfilter.nf_conntrack_udp_timeout", "net.netfilter.nf_conntrack_udp_timeout_stream")


def hold(netns: str, timeout_s: float) -> float:
    """Sets ``netns``'s UDP connection timeouts to ``timeout_s`` (whole seconds, at least 1); returns the
    shorter of the two read back [s]."""
    value = max(1, round(timeout_s))

    def apply() -> int:
        for key in UDP_TIMEOUTS:
            nsctl.sysctl(key, value)
        return min(int(nsctl.read_file("/proc/sys/" + key.replace(".", "/"))) for key in UDP_TIMEOUTS)
    return float(nsctl.run_in(netns, apply))
