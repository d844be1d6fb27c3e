"""IPv6 transition by translation on R1 (RFC 8219 §4, single translation):
what a NAT64 router is, as addresses, a TAYGA configuration and rules (no
commands run here; :mod:`v6bench.lab.emulated.translator` sets it up).

Modes (``[dut] nat64``):

- ``stateless``: SIIT / stateless NAT64 (RFC 7915, RFC 6145's successor):
  TAYGA with a static map of t1's IPv6 address to :data:`STATIC_V4`.
  IPv6 from t1 to ``PREFIX::<IPv4>`` leaves as IPv4 from that address;
  IPv4 from t2 to that address leaves as IPv6 from ``PREFIX::<t2's IPv4>``
  to t1. No state: both directions, every frame translated alone.
- ``stateful``: stateful NAT64 (RFC 6146) as Lencse, Shima and Cho built
  it from TAYGA and iptables ("TAYGA + iptables", Computer Communications
  210, 2023): TAYGA maps each IPv6 source to an address of a private
  dynamic pool (:data:`DYNAMIC_POOL`), and nftables source NAT (with
  connection tracking, one entry per 5-tuple) puts R1's address on the t2
  side in front of them, so that t2 sees one IPv4 address and ports R1
  chose. Only connections t1 opened come back.

Addresses (RFC 6052): the benchmarking block 198.18.0.0/15 is not a
global address, so RFC 6052 §3.1 keeps it out of the well-known prefix
64:ff9b::/96 (and TAYGA refuses it there). The default is a
network-specific /96 inside the IPv6 benchmarking block,
:data:`PREFIX` (its bits 64–71, the "u" octet, are zero as §2.2 asks).
TAYGA's own IPv4 address (for the ICMP errors it sends) and the pools lie
in 198.18.64.0/22, which no topology uses.
"""

from __future__ import annotations

from typing import Any

import ipaddress
from dataclasses import dataclass

MODES = ("stateless", "stateful")
#: The network-specific NAT64 prefix (RFC 6052 §2.2, /96) in 2001:2::/48.
PREFIX = ipaddress.IPv6Network("2001:2:0:6464::/96")
#: A translated frame's growth [bytes] (RFC 7915): a 40-byte IPv6 header in place of a 20-byte IPv4 one.
HEADER_GROWTH_BYTES = 20
#: TAYGA's own IPv4 address (the source of its ICMPv4 errors) and IPv6 address.
TAYGA_V4 = ipaddress.ip_address("198.18.64.1")
TAYGA_V6 = ipaddress.ip_address("2001:2:0:6465::1")
#: Stateless: the IPv4 address t1's IPv6 address is mapped to, one to one.
STATIC_V4 = ipaddress.IPv4Address("198.18.65.2")
STATIC_NET = ipaddress.ip_network("198.18.65.0/24")
#: Stateful: TAYGA's dynamic pool, private to R1 (source NAT puts R1's address in front).
DYNAMIC_POOL = ipaddress.ip_network("198.18.66.0/24")
#: TAYGA's tun device in R1.
TUN_DEV = "nat64"
#: The nftables table of the stateful mode's source NAT (family ip).
NAT64_TABLE = "v6bench_nat64"
#: RFC 6052 §2.2's prefix lengths.
PREFIX_LENGTHS = (32, 40, 48, 56, 64, 96)


def size_change(from_version: int, to_version: int) -> int:
    """How many bytes longer a frame of IP ``from_version`` arrives as ``to_version`` through a translator."""
    return {(4, 6): HEADER_GROWTH_BYTES, (6, 4): -HEADER_GROWTH_BYTES}.get((from_version, to_version), 0)


def embed(prefix: ipaddress.IPv6Network, v4: ipaddress.IPv4Address | str) -> ipaddress.IPv6Address:
    """The IPv4-embedded IPv6 address of ``v4`` under ``prefix`` (RFC 6052
    §2.2): the IPv4 address's 32 bits after the prefix, skipping bits 64–71
    (the "u" octet, zero), the rest zero."""
    plen = prefix.prefixlen
    if plen not in PREFIX_LENGTHS:
        raise ValueError(f"{prefix}: an RFC 6052 prefix is /32, /40, /48, /56, /64 or /96")
    a = bytearray(prefix.network_address.packed)
    if any(a[plen // 8:]):
        raise ValueError(f"{prefix}: bits after the prefix length must be zero")
    v4b = ipaddress.IPv4Address(v4).packed
    at = plen // 8
    for b in v4b:
        if at == 8:  # the u octet
            at += 1
        a[at] = b
        at += 1
    return ipaddress.IPv6Address(bytes(a))


def extract(prefix: ipaddress.IPv6Network, v6: ipaddress.IPv6Address | str) -> ipaddress.IPv4Address:
    """The IPv4 address embedded in ``v6`` under ``prefix`` (RFC 6052 §2.3)."""
    b = ipaddress.IPv6Address(v6).packed
    at = prefix.prefixlen // 8
    out: list[int] = []
    while len(out) < 4:
        if at != 8:
            out.append(b[at])
        at += 1
    return ipaddress.IPv4Address(bytes(out))


def flow2_words(mode: str) -> str:
    """What IPv6 frames meet on a translating R1, in words."""
    return f"{mode} NAT64"


def tayga_conf(mode: str, t1_ipv6: str, data_dir: str) -> str:
    """TAYGA's configuration (tayga.conf(5)) for ``mode``; ``t1_ipv6`` is
    t1's IPv6 address (the stateless mode maps it to :data:`STATIC_V4`)."""
    lines = [f"tun-device {TUN_DEV}", f"ipv4-addr {TAYGA_V4}", f"ipv6-addr {TAYGA_V6}", f"prefix {PREFIX}",
             f"data-dir {data_dir}"]
    if mode == "stateless":
        lines.append(f"map {STATIC_V4} {t1_ipv6}")
    else:
        lines.append(f"dynamic-pool {DYNAMIC_POOL}")
    return "".join(f"{x}\n" for x in lines)


@dataclass(frozen=True)
class Tayga:
    """One TAYGA on a router: its tun device, its configuration (tayga.conf(5)
    lines without ``data-dir``, which is the lab's), the ``ip`` arguments
    of the routes into it and past it, and whether it keeps state (a
    dynamic pool behind source NAT: the router's connections are read
    around each trial)."""

    router: str
    tun: str
    conf: tuple[str, ...]
    routes: tuple[tuple[str, ...], ...]
    stateful: bool


def nat64(mode: str, t1_ipv6: str) -> Tayga:
    """R1's NAT64 of ``mode`` (t1's IPv6 address: the stateless mode maps it)."""
    conf = tuple(x for x in tayga_conf(mode, t1_ipv6, "").splitlines() if not x.startswith("data-dir"))
    return Tayga("r1", TUN_DEV, conf, tuple(tuple(r) for r in routes(mode)), mode == "stateful")


def routes(mode: str) -> list[list[str]]:
    """``ip`` arguments that route the prefix and the mode's IPv4 side into
    TAYGA's tun device on R1."""
    v4 = STATIC_NET if mode == "stateless" else DYNAMIC_POOL
    return [["-6", "route", "replace", str(PREFIX), "dev", TUN_DEV],
            ["-4", "route", "replace", str(v4), "dev", TUN_DEV],
            ["-4", "route", "replace", f"{TAYGA_V4}/32", "dev", TUN_DEV]]


def stateful_nat(out_ifname: str, out_ipv4: str) -> str:
    """The stateful mode's source NAT: what TAYGA sends from its dynamic
    pool leaves by R1's port toward t2 with R1's address there, ports
    chosen by R1 (connection tracking: one entry a 5-tuple)."""
    return (f"table ip {NAT64_TABLE} {{\n  chain postrouting {{\n"
            f"    type nat hook postrouting priority srcnat; policy accept;\n"
            f'    oifname "{out_ifname}" ip saddr {DYNAMIC_POOL} counter snat to {out_ipv4}\n  }}\n}}\n')


@dataclass(frozen=True)
class Addresses:
    """Where a translator puts the other family: its RFC 6052 ``prefix``
    (a /32 … /96), and ``mapped_ipv4``, the IPv4 address a stateless
    translator maps t1's IPv6 address to (None: none declared, so IPv4 is
    not sent toward t1 through it). The routers v6bench builds use
    :data:`PREFIX` and :data:`STATIC_V4` (:data:`BUILT`); an external
    translator's come from its lab file (``[translation]``)."""

    prefix: ipaddress.IPv6Network = PREFIX
    mapped_ipv4: ipaddress.IPv4Address | None = STATIC_V4

    def to_json(self) -> dict[str, Any]:
        return {"prefix": str(self.prefix), "mapped_ipv4": str(self.mapped_ipv4) if self.mapped_ipv4 else None}


BUILT = Addresses()


def destination(mode: str, version: int, to_ipv4: str, addresses: Addresses = BUILT) -> tuple[str, int]:
    """Where a translated stream of IP version ``version`` is sent and the
    version it arrives as: IPv6 to the receiver's IPv4 address embedded in
    the translator's prefix, arriving as IPv4; IPv4 (stateless only) to the
    address t1's is mapped to, arriving at t1 as IPv6."""
    if version == 6:
        return str(embed(addresses.prefix, to_ipv4.split("/")[0])), 4
    if mode != "stateless":
        raise ValueError("stateful NAT64 translates connections IPv6 opened: IPv6 in, IPv4 out")
    if addresses.mapped_ipv4 is None:
        raise ValueError("the translator maps no IPv4 address to t1's: IPv4 is not sent toward t1 through it")
    return str(addresses.mapped_ipv4), 6
