"""The connections a namespace router tracks, emptied (RFC 9693's
measurements start from an empty table; its tear-down rate times the
deletion): Debian's ``conntrack`` tool in the router's namespace, and the
``ct count`` set of a DUT of known capacity (lab/model/dut.py) flushed
with it."""

from __future__ import annotations

import shutil
import time

from ...core.errors import LabError
from ..model.dut import CONNECTIONS_SET, TABLE
from ..machine import nsctl


def clear(netns: str, counted: bool) -> float:
    """Deletes every connection ``netns`` tracks (and, ``counted``, the
    capacity's count); returns how long the deletion took [s], the
    ``conntrack -F`` command's whole run."""
    if not shutil.which("conntrack"):
        raise LabError("emptying the router's connection table needs conntrack: apt-get install conntrack "
                       "(make setup installs it)")
    start = time.perf_counter()
    nsctl.command(netns, ["conntrack", "-F"])
    took = time.perf_counter() - start
    if counted:
        nsctl.command(netns, ["nft", "flush", "set", "inet", TABLE, CONNECTIONS_SET])
    return took


def held(netns: str) -> int:
    """The connections ``netns`` tracks now."""
    return int(nsctl.command(netns, ["cat", "/proc/sys/net/netfilter/nf_conntrack_count"]).strip())
