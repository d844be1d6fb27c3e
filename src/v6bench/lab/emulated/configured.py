"""The DUT configuration in the routers, as it is now: the nftables rule
sets of :mod:`v6bench.lab.model.dut` loaded into a namespace router
(:func:`apply`), the ACL counters read back (:func:`acl_counters`), and
every router's rule set and datapath read for a run's record
(:func:`rulesets`, :func:`datapaths`) through the command runner the
lab's backend gives (a router's namespace, or its VM's guest)."""

from __future__ import annotations

import json

from ...core.address_blocks import BENCHMARKING
from ...core.errors import LabError
from typing import Any, Callable

from ..machine import nsctl
from ..model.topology import ROUTER
from .ruleset import NAT_TABLE, TABLE
from ..model.translation import NAT64_TABLE


def apply(netns: str, text: str) -> None:
    """Loads ``text`` into ``netns``, replacing our tables if present."""
    ours = (("inet", TABLE), ("ip", NAT_TABLE), ("ip", NAT64_TABLE))
    fresh = "".join(f"table {fam} {name}\ndelete table {fam} {name}\n" for fam, name in ours)
    nsctl.command(netns, ["nft", "-f", "-"], fresh + text)


def acl_counters(netns: str) -> dict[str, dict[str, int]]:
    """Packets the permit and the implicit deny of each list matched so far:
    ``{"v4": {"permit": n, "deny": n}, "v6": {…}}``; empty without ACLs."""
    try:
        doc = json.loads(nsctl.command(netns, ["nft", "-j", "list", "table", "inet", TABLE]))
    except LabError:  # no table: no ACL
        return {}
    out: dict[str, dict[str, int]] = {}
    for item in doc.get("nftables", []):
        rule = item.get("rule")
        if not rule or not rule["chain"].startswith("acl_"):
            continue
        exprs = rule["expr"]
        packets = next((e["counter"]["packets"] for e in exprs if "counter" in e), None)
        if packets is None:
            continue
        verdict = "deny" if any("drop" in e for e in exprs) else "permit"
        out.setdefault(rule["chain"].removeprefix("acl_"), {})[verdict] = packets
    return out


#: Runs a command on a router node (its record in the lab's node list) and returns its output.
Command = Callable[[dict[str, Any], list[str]], str]


def _per_router(nodes: list[dict[str, Any]], command: Command, argv: list[str]) -> dict[str, str]:
    """The output of ``argv`` on every router, by router."""
    return {n["name"]: command(n, argv) for n in nodes if n["role"] == ROUTER}


def rulesets(nodes: list[dict[str, Any]], command: Command) -> dict[str, str]:
    """``nft list ruleset`` of every router, as it is now."""
    return _per_router(nodes, command, ["nft", "list", "ruleset"])


#: What else configures a router's datapath, recorded verbatim with every
#: run: qdiscs (``--shape``), routes (static, tunnel encapsulation),
#: links with their MTUs and tunnel devices (``--mtu``, ``--tunnel``), and
#: the size of the connection table ("none" before connection tracking loads).
DATAPATH_COMMANDS = {
    "tc_qdisc": ["tc", "qdisc", "show"],
    "ipv4_routes": ["ip", "-4", "route", "show"],
    "ipv6_routes": ["ip", "-6", "route", "show"],
    "links": ["ip", "-d", "-o", "link", "show"],
    "conntrack_max": ["sh", "-c", "cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo none"],
}


#: The route commands on a router holding a table (``DutConfig.table``): the lab's own routes, which all lie in
#: the benchmarking blocks (and IPv6 link-local), not the table's million (counted in the lab's ``fib`` record).
_V4, _V6 = (str(next(n for n in BENCHMARKING if n.version == v)) for v in (4, 6))
TABLE_ROUTE_COMMANDS = {
    "ipv4_routes": ["ip", "-4", "route", "show", "root", _V4],
    "ipv6_routes": ["sh", "-c", f"ip -6 route show root {_V6}; ip -6 route show root fe80::/10"],
}


def datapaths(nodes: list[dict[str, Any]], command: Command, table: bool = False) -> dict[str, dict[str, str]]:
    """Per router, the output of each of :data:`DATAPATH_COMMANDS`, as it
    is now; with ``table``, the routes of :data:`TABLE_ROUTE_COMMANDS`."""
    out: dict[str, dict[str, str]] = {}
    for key, argv in {**DATAPATH_COMMANDS, **(TABLE_ROUTE_COMMANDS if table else {})}.items():
        for router, text in _per_router(nodes, command, argv).items():
            out.setdefault(router, {})[key] = text
    return out
