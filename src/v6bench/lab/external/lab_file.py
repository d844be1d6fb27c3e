"""An external lab file (TOML, ``docs/external-lab.md``): the tester ports
cabled to a router v6bench did not build, and how to manage that router.
Checked into a frozen :class:`ExternalSpec`; errors name the field
(``port.t1.gateway_ipv4``), and the caller names the file.

The file has

- ``[lab]``: ``name``, ``link_speed`` (10M to 400G), ``mtu`` (the IP MTU
  of both links), ``tester_cpus`` (the CPUs the engine may use; all by
  default), ``shared_machine`` (the DUT runs on this machine too; then
  ``dut_cpus``, kept apart from ``tester_cpus``), ``allow_other_addresses``;
- ``[port.t1]`` and ``[port.t2]``: ``interface``, ``netns`` (optional; one
  namespace for both), the tester's ``ipv4``/``ipv6`` with prefix length,
  the DUT's ``gateway_ipv4``/``gateway_ipv6``, ``dut_interface`` (the DUT's
  port on this cable, by IF-MIB ifName or ifDescr, or ifIndex),
  ``allow_default_route`` and ``allow_management_address``;
- ``[dut]``: ``name``, ``description``, ``config_file`` (recorded with
  every run), ``apply``, ``reset_soft``, ``reset_hard`` (shell commands),
  ``command_timeout_s``;
- ``[dut.snmp]``: ``host``, ``port``, ``version`` (``2c`` or ``3``),
  ``community`` or the v3 user (``user``, ``auth_protocol``,
  ``auth_password``, ``priv_protocol``, ``priv_password``), ``netns``,
  ``cpu`` (:data:`CPU_SOURCES`), ``poll_interval_s``,
  ``counter_refresh_s``, ``timeout_s``.
- ``[table]`` (optional): the DUT may be told a forwarding table like the
  Internet's over BGP (lab/external/bgp_speaker.py): ``allow_full_table`` must be
  ``true`` (the DUT then holds routes to much of the address space, all
  toward t2), ``local_as`` and ``peer_as`` (the speaker's and the DUT's AS),
  the speaker's ``speaker_ipv4``/``speaker_ipv6`` on t2's link (with
  prefix; by default t2's address + 1), the DUT's ``peer_ipv4``/
  ``peer_ipv6`` (t2's gateways by default), ``hold_time_s``,
  ``learning_timeout_s``.

Addresses default to the benchmarking blocks (RFC 2544 App. C.2.2,
198.18.0.0/15; RFC 5180 §5, 2001:2::/48) as topology ``a`` has them; any
other address of a port or gateway is refused unless
``allow_other_addresses = true``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import address_blocks
from ...core.address_blocks import BENCHMARKING
from ...core.errors import UsageError
from ...core.params import only_keys, subtable
from ...core.rates import parse_port_speed
from ..model import translation
from ..model.mtu import IPV6_MIN
from ..model.mtu import MAX as MTU_MAX
from ..model.mtu import Mtus
from ..model.spec import LabSpec

PORTS = ("t1", "t2")
#: Where the DUT's CPU load is read (lab/external/snmp.py has the OIDs); ``auto`` takes the first the agent answers.
CPU_SOURCES = ("auto", "ucd", "cisco", "juniper", "host-resources", "none")
SNMP_VERSIONS = ("2c", "3")
AUTH_PROTOCOLS = ("MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512")
PRIV_PROTOCOLS = ("DES", "AES", "AES-192", "AES-256")
#: The addresses each port gets by default, as topology ``a`` gives t1 and t2 (lab/model/topology.py).
DEFAULT_ADDRESSES = {
    "t1": {"ipv4": "198.18.0.2/24", "ipv6": "2001:2::2/64", "gateway_ipv4": "198.18.0.1", "gateway_ipv6": "2001:2::1"},
    "t2": {"ipv4": "198.19.0.2/24", "ipv6": "2001:2:0:1::2/64", "gateway_ipv4": "198.19.0.1",
           "gateway_ipv6": "2001:2:0:1::1"},
}


@dataclass(frozen=True)
class PortSpec:
    """A tester port cabled to the DUT."""

    name: str
    interface: str
    netns: str | None
    ipv4: str
    ipv6: str
    gateway_ipv4: str
    gateway_ipv6: str
    dut_interface: str | int | None = None
    allow_default_route: bool = False
    allow_management_address: bool = False


@dataclass(frozen=True)
class SnmpSpec:
    """How to reach the DUT's SNMP agent (v2c or v3, RFC 3414 USM)."""

    host: str
    port: int = 161
    version: str = "2c"
    community: str = "public"
    user: str | None = None
    auth_protocol: str | None = None
    auth_password: str | None = None
    priv_protocol: str | None = None
    priv_password: str | None = None
    netns: str | None = None
    cpu: str = "auto"
    poll_interval_s: float = 1.0
    counter_refresh_s: float = 5.0
    timeout_s: float = 2.0

    @property
    def security_level(self) -> str:
        if self.priv_password:
            return "authPriv"
        return "authNoPriv" if self.auth_password else "noAuthNoPriv"

    def to_json(self) -> dict[str, Any]:
        """Recorded with every run: the secrets left out."""
        return {k: v for k, v in self.__dict__.items() if k not in ("community", "auth_password", "priv_password")} | {
            "security_level": self.security_level if self.version == "3" else None}


#: The ASes by default: private 4-byte ASes (RFC 6996).
DEFAULT_LOCAL_AS = 4_200_000_001
DEFAULT_PEER_AS = 4_200_000_002


@dataclass(frozen=True)
class TableSpec:
    """How the DUT learns a table over BGP (``[table]``): one IPv4 and one
    IPv6 eBGP session from the speaker (``speaker_ipv4``/``_ipv6``, AS
    ``local_as``, on t2's link) to the DUT's ``peer_ipv4``/``_ipv6`` (AS
    ``peer_as``); every route's next hop is t2's own address (the engine's)."""

    local_as: int
    peer_as: int
    speaker_ipv4: str
    speaker_ipv6: str
    peer_ipv4: str
    peer_ipv6: str
    hold_time_s: int = 240
    learning_timeout_s: float = 600.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class TranslationSpec:
    """The DUT translates IPv6 to IPv4 (``[translation]``, RFC 8219 §4):
    ``mode`` (``stateless`` or ``stateful``) and where it puts the other
    family (:class:`~.translation.Addresses`: its RFC 6052 prefix, and the
    IPv4 address a stateless translator maps t1's IPv6 address to)."""

    mode: str
    addresses: translation.Addresses

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, **self.addresses.to_json()}


@dataclass(frozen=True)
class DutSpec:
    name: str = "dut"
    description: str = ""
    config_file: str | None = None
    config_text: str | None = None
    apply: str | None = None
    reset_soft: str | None = None
    reset_hard: str | None = None
    command_timeout_s: float = 120.0
    snmp: SnmpSpec | None = None


@dataclass(frozen=True)
class ExternalSpec:
    """A checked external lab file."""

    path: str
    sha256: str
    name: str
    link_speed_bps: float
    mtu: int
    ports: tuple[PortSpec, ...]
    dut: DutSpec
    tester_cpus: tuple[int, ...] | None = None
    shared_machine: bool = False
    dut_cpus: tuple[int, ...] = ()
    allow_other_addresses: bool = False
    text: str = field(default="", repr=False)
    #: ``[table]``: the DUT may be told a table over BGP; None: it may not.
    table: TableSpec | None = None
    #: ``[translation]``: the DUT is a NAT64 translator; None: it forwards each family as it is.
    translation: TranslationSpec | None = None

    def port(self, name: str) -> PortSpec:
        return next(p for p in self.ports if p.name == name)

    @property
    def netns(self) -> str | None:
        """The tester ports' namespace (one for both), or None: this machine's own."""
        return self.ports[0].netns

    def to_json(self) -> dict[str, Any]:
        """What every result records of the lab: the file's path and hash, the ports, the DUT (no secrets)."""
        d = self.dut
        return {"file": self.path, "sha256": self.sha256, "name": self.name, "link_speed_bps": self.link_speed_bps,
                "mtu": self.mtu, "ports": [p.__dict__ for p in self.ports], "tester_cpus": self.tester_cpus,
                "shared_machine": self.shared_machine, "dut_cpus": list(self.dut_cpus),
                "dut": {"name": d.name, "description": d.description, "config_file": d.config_file,
                        "config_sha256": hashlib.sha256(d.config_text.encode()).hexdigest() if d.config_text else None,
                        "apply": d.apply, "reset_soft": d.reset_soft, "reset_hard": d.reset_hard,
                        "snmp": d.snmp.to_json() if d.snmp else None},
                "table": self.table.to_json() if self.table else None,
                "translation": self.translation.to_json() if self.translation else None}


def load(path: str | Path) -> ExternalSpec:
    """The lab file at ``path``; errors name the field (the caller adds the file)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not a text file") from None
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not TOML: {e}") from None
    try:
        return parse(d, str(p), text, p.parent)
    except UsageError as e:  # the file's own field, after its name: lab.file: x.toml: port.t1.ipv4: …
        raise UsageError(f"{path}: {e}") from None


def parse(d: dict[str, Any], path: str, text: str, base: Path) -> ExternalSpec:
    only_keys(d, ("lab", "port", "dut", "table", "translation"), ())
    lab = subtable(d, "lab", ())
    only_keys(lab, ("name", "link_speed", "mtu", "tester_cpus", "shared_machine", "dut_cpus", "allow_other_addresses"),
          ("lab",))
    name = _str(lab.get("name", Path(path).stem), ("lab", "name"))
    speed = lab.get("link_speed")
    if speed is None:
        raise UsageError("required: the ports' link speed, such as \"10G\"", ("lab", "link_speed"))
    try:
        speed_bps = parse_port_speed(speed)
    except UsageError as e:
        raise UsageError(e.message, ("lab", "link_speed")) from None
    mtu = _int(lab.get("mtu", 1500), ("lab", "mtu"), IPV6_MIN, MTU_MAX)
    other = _bool(lab.get("allow_other_addresses", False), ("lab", "allow_other_addresses"))
    shared = _bool(lab.get("shared_machine", False), ("lab", "shared_machine"))
    tester_cpus = _cpus(lab["tester_cpus"], ("lab", "tester_cpus")) if "tester_cpus" in lab else None
    dut_cpus = _cpus(lab["dut_cpus"], ("lab", "dut_cpus")) if "dut_cpus" in lab else ()
    if shared and not dut_cpus:
        raise UsageError("a DUT on this machine needs dut_cpus (the CPUs it runs on), kept apart from the tester's",
                         ("lab", "dut_cpus"))
    if dut_cpus and not shared:
        raise UsageError("only with shared_machine = true", ("lab", "dut_cpus"))
    if shared and tester_cpus is None:
        raise UsageError("a DUT on this machine needs tester_cpus, apart from its dut_cpus", ("lab", "tester_cpus"))
    if shared and set(dut_cpus) & set(tester_cpus or ()):
        raise UsageError(f"CPUs {sorted(set(dut_cpus) & set(tester_cpus or ()))} are the tester's and the DUT's: "
                         "keep them apart", ("lab", "dut_cpus"))
    ports_d = subtable(d, "port", ())
    only_keys(ports_d, PORTS, ("port",))
    ports = tuple(_port(n, subtable(ports_d, n, ("port",)), other) for n in PORTS)
    if len({p.netns for p in ports}) > 1:
        raise UsageError("both ports live in one namespace (or both in this machine's own)", ("port", "t2", "netns"))
    if ports[0].interface == ports[1].interface:
        raise UsageError(f"t1 and t2 are the same interface {ports[0].interface!r}", ("port", "t2", "interface"))
    for v in ("ipv4", "ipv6"):
        n1, n2 = (ipaddress.ip_interface(getattr(p, v)).network for p in ports)
        if n1.overlaps(n2):
            raise UsageError(f"t1's and t2's networks {n1} and {n2} overlap: the DUT routes between two networks",
                             ("port", "t2", v))
    table = _table_spec(subtable(d, "table", ()), ports[1], other) if "table" in d else None
    xlat = _translation(subtable(d, "translation", ()), other) if "translation" in d else None
    if xlat and table:
        raise UsageError("a table's destinations are t2's own addresses, not translated: a lab file gives "
                         "[table] or [translation]", ("translation",))
    return ExternalSpec(path, hashlib.sha256(text.encode()).hexdigest(), name, speed_bps, mtu, ports,
                        _dut(subtable(d, "dut", ()), base), tester_cpus, shared, dut_cpus, other, text, table, xlat)


def _translation(d: dict[str, Any], other: bool) -> TranslationSpec:
    """``[translation]``: the mode, the RFC 6052 prefix (default the routers
    v6bench builds use), and for a stateless translator the IPv4 address
    t1's IPv6 address is mapped to (without it, IPv4 is not sent toward t1
    through the translator)."""
    w = ("translation",)
    only_keys(d, ("mode", "prefix", "mapped_ipv4"), w)
    mode = d.get("mode")
    if mode not in translation.MODES:
        raise UsageError(f"{mode!r} is not one of {', '.join(translation.MODES)}", (*w, "mode"))
    try:
        prefix = ipaddress.IPv6Network(_str(d.get("prefix", str(translation.PREFIX)), (*w, "prefix")))
        translation.embed(prefix, "198.18.0.1")
    except ValueError as e:
        raise UsageError(f"{e}: an RFC 6052 prefix (/32, /40, /48, /56, /64 or /96)", (*w, "prefix")) from None
    mapped = None
    if "mapped_ipv4" in d:
        if mode != "stateless":
            raise UsageError("only a stateless translator maps t1's address to one of its own", (*w, "mapped_ipv4"))
        try:
            mapped = ipaddress.IPv4Address(_str(d["mapped_ipv4"], (*w, "mapped_ipv4")))
        except ValueError as e:
            raise UsageError(str(e), (*w, "mapped_ipv4")) from None
    if not other:
        for key, net in (("prefix", prefix), ("mapped_ipv4", mapped)):
            if net is not None and not address_blocks.within(ipaddress.ip_network(net)):
                raise UsageError(f"{net} is outside the benchmarking blocks (198.18.0.0/15, 2001:2::/48): the "
                                 "well-known prefix 64:ff9b::/96 does not carry them either (RFC 6052 §3.1); set "
                                 "allow_other_addresses = true in [lab] to use it", (*w, key))
    return TranslationSpec(mode, translation.Addresses(prefix, mapped))


def _table_spec(d: dict[str, Any], t2: PortSpec, other: bool) -> TableSpec:
    """``[table]``: the explicit allowance, the BGP sessions on t2's link."""
    w = ("table",)
    only_keys(d, ("allow_full_table", "local_as", "peer_as", "speaker_ipv4", "speaker_ipv6", "peer_ipv4", "peer_ipv6",
              "hold_time_s", "learning_timeout_s"), w)
    if d.get("allow_full_table") is not True:
        raise UsageError("a table tells the DUT routes to much of the address space, all toward t2: set "
                         "allow_full_table = true to allow it", ("table", "allow_full_table"))
    ases = {k: _int(d.get(k, v), (*w, k), 1, 2 ** 32 - 1) for k, v in (("local_as", DEFAULT_LOCAL_AS),
                                                                      ("peer_as", DEFAULT_PEER_AS))}
    if ases["local_as"] == ases["peer_as"]:
        raise UsageError("the speaker's AS is the DUT's: the sessions are external BGP (eBGP), give two ASes",
                         ("table", "local_as"))
    addrs = {}
    for v in ("ipv4", "ipv6"):
        mine = ipaddress.ip_interface(getattr(t2, v))
        gateway = ipaddress.ip_address(getattr(t2, f"gateway_{v}"))
        key = f"speaker_{v}"
        speaker = _str(d.get(key, f"{mine.ip + 1}/{mine.network.prefixlen}"), (*w, key))
        peer = _str(d.get(f"peer_{v}", str(gateway)), (*w, f"peer_{v}"))
        try:
            sp, pe = ipaddress.ip_interface(speaker), ipaddress.ip_address(peer)
        except ValueError as e:
            raise UsageError(str(e), (*w, key)) from None
        if "/" not in speaker:
            raise UsageError(f"give the prefix length, e.g. {sp.ip}/{mine.network.prefixlen}", (*w, key))
        if sp.network != mine.network:
            raise UsageError(f"{speaker} is not on t2's network {mine.network}: the speaker shares t2's port",
                             (*w, key))
        if sp.ip in (mine.ip, gateway) or sp.ip == mine.network.network_address:
            raise UsageError(f"{sp.ip} is t2's own address, its gateway or the network's: the speaker needs another",
                             (*w, key))
        if pe not in mine.network or pe == sp.ip or pe == mine.ip:
            raise UsageError(f"the DUT's BGP address {pe} is not another address of t2's network {mine.network}",
                             (*w, f"peer_{v}"))
        if not other:
            for k, a in ((key, sp.ip), (f"peer_{v}", pe)):
                if not any(a in b for b in BENCHMARKING):
                    raise UsageError(f"{a} is outside the benchmarking blocks (198.18.0.0/15, 2001:2::/48); "
                                     "set allow_other_addresses = true in [lab] to use it", (*w, k))
        addrs[key], addrs[f"peer_{v}"] = speaker, str(pe)
    return TableSpec(ases["local_as"], ases["peer_as"], addrs["speaker_ipv4"], addrs["speaker_ipv6"],
                     addrs["peer_ipv4"], addrs["peer_ipv6"],
                     _int(d.get("hold_time_s", 240), (*w, "hold_time_s"), 3, 65535),
                     _number(d.get("learning_timeout_s", 600.0), (*w, "learning_timeout_s"), 1, 3600))


def _port(name: str, d: dict[str, Any], other: bool) -> PortSpec:
    where = ("port", name)
    only_keys(d, ("interface", "netns", "ipv4", "ipv6", "gateway_ipv4", "gateway_ipv6", "dut_interface",
              "allow_default_route", "allow_management_address"), where)
    if "interface" not in d:
        raise UsageError("required: the tester's interface cabled to the DUT", ("port", name, "interface"))
    iface = _str(d["interface"], (*where, "interface"))
    if len(iface) > 15 or "/" in iface or iface in (".", ".."):
        raise UsageError(f"{iface!r} is not an interface name", ("port", name, "interface"))
    netns = _str(d["netns"], (*where, "netns")) if "netns" in d else None
    addrs = {k: _str(d.get(k, v), (*where, k)) for k, v in DEFAULT_ADDRESSES[name].items()}
    for v in (4, 6):
        key = f"ipv{v}"
        try:
            me = ipaddress.ip_interface(addrs[key])
            gw = ipaddress.ip_address(addrs[f"gateway_{key}"])
        except ValueError as e:
            raise UsageError(str(e), ("port", name, key)) from None
        if me.version != v or gw.version != v:
            raise UsageError(f"expected IPv{v} addresses", ("port", name, key))
        if "/" not in addrs[key]:
            raise UsageError(f"give the prefix length, e.g. {me.ip}/{24 if v == 4 else 64}", ("port", name, key))
        if gw not in me.network or gw == me.ip:
            raise UsageError(f"the gateway {gw} is not another address of {me.network}", ("port", name, f"gateway_{key}"))
        if not other:
            for k, a in ((key, me.ip), (f"gateway_{key}", gw)):
                if not any(a in b for b in BENCHMARKING):
                    raise UsageError(f"{a} is outside the benchmarking blocks (198.18.0.0/15, 2001:2::/48); "
                                     "set allow_other_addresses = true in [lab] to use it", ("port", name, k))
    dut_if = d.get("dut_interface")
    if dut_if is not None and (isinstance(dut_if, bool) or not isinstance(dut_if, (str, int))
                               or (isinstance(dut_if, int) and dut_if < 1) or dut_if == ""):
        raise UsageError(f"expected the DUT's ifName or ifIndex (a whole number ≥ 1), got {dut_if!r}",
                         ("port", name, "dut_interface"))
    return PortSpec(name, iface, netns, addrs["ipv4"], addrs["ipv6"], addrs["gateway_ipv4"], addrs["gateway_ipv6"],
                    dut_if, _bool(d.get("allow_default_route", False), (*where, "allow_default_route")),
                    _bool(d.get("allow_management_address", False), (*where, "allow_management_address")))


def _dut(d: dict[str, Any], base: Path) -> DutSpec:
    only_keys(d, ("name", "description", "config_file", "apply", "reset_soft", "reset_hard", "command_timeout_s", "snmp"),
          ("dut",))
    config_file = _str(d["config_file"], ("dut", "config_file")) if "config_file" in d else None
    config_text = None
    if config_file:
        cf = Path(config_file) if Path(config_file).is_absolute() else base / config_file
        try:
            config_text = cf.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"cannot read {cf}: {getattr(e, 'strerror', None) or e}", ("dut", "config_file")) from None
    commands = {k: _str(d[k], ("dut", k)) for k in ("apply", "reset_soft", "reset_hard") if k in d}
    timeout = _number(d.get("command_timeout_s", 120.0), ("dut", "command_timeout_s"), 1, 3600)
    snmp = _snmp(subtable(d, "snmp", ("dut",))) if "snmp" in d else None
    return DutSpec(_str(d.get("name", "dut"), ("dut", "name")), _str(d.get("description", ""), ("dut", "description"),
                   empty=True), config_file, config_text, commands.get("apply"),
                   commands.get("reset_soft"), commands.get("reset_hard"), timeout, snmp)


def _snmp(d: dict[str, Any]) -> SnmpSpec:
    w = ("dut", "snmp")
    only_keys(d, ("host", "port", "version", "community", "user", "auth_protocol", "auth_password", "priv_protocol",
              "priv_password", "netns", "cpu", "poll_interval_s", "counter_refresh_s", "timeout_s"), w)
    if "host" not in d:
        raise UsageError("required: the agent's address", ("dut", "snmp", "host"))
    host = _str(d["host"], (*w, "host"))
    version = d.get("version", "2c")
    if version not in SNMP_VERSIONS:
        raise UsageError(f"{version!r} is not one of {', '.join(SNMP_VERSIONS)}", ("dut", "snmp", "version"))
    s: dict[str, str] = {k: _str(d[k], (*w, k)) for k in ("community", "user", "auth_password", "priv_password", "netns") if k in d}
    for k, known in (("auth_protocol", AUTH_PROTOCOLS), ("priv_protocol", PRIV_PROTOCOLS)):
        if k in d:
            v = _str(d[k], (*w, k)).upper()
            if v not in known:
                raise UsageError(f"{d[k]!r} is not one of {', '.join(known)}", ("dut", "snmp", k))
            s[k] = v
    if version == "3":
        if "user" not in s:
            raise UsageError("SNMPv3 needs a user (RFC 3414)", ("dut", "snmp", "user"))
        if "community" in s:
            raise UsageError("a community is SNMPv2c's; v3 takes a user", ("dut", "snmp", "community"))
        if "priv_password" in s and "auth_password" not in s:
            raise UsageError("privacy needs authentication (RFC 3414 §3.1.2)", ("dut", "snmp", "priv_password"))
        for k in ("auth_password", "priv_password"):
            if k in s and len(s[k]) < 8:
                raise UsageError("at least 8 characters (RFC 3414 §11.2)", ("dut", "snmp", k))
            proto = k.replace("password", "protocol")
            if k in s and proto not in s:
                s[proto] = "SHA" if k == "auth_password" else "AES"
    else:
        for k in ("user", "auth_protocol", "auth_password", "priv_protocol", "priv_password"):
            if k in d:
                raise UsageError("a v3 key: set version = \"3\"", ("dut", "snmp", k))
    cpu = d.get("cpu", "auto")
    if cpu not in CPU_SOURCES:
        raise UsageError(f"{cpu!r} is not one of {', '.join(CPU_SOURCES)}", ("dut", "snmp", "cpu"))
    return SnmpSpec(host, _int(d.get("port", 161), (*w, "port"), 1, 65535), version, s.get("community", "public"),
                    s.get("user"), s.get("auth_protocol"), s.get("auth_password"), s.get("priv_protocol"),
                    s.get("priv_password"), s.get("netns"), cpu,
                    _number(d.get("poll_interval_s", 1.0), (*w, "poll_interval_s"), 0.2, 60),
                    _number(d.get("counter_refresh_s", 5.0), (*w, "counter_refresh_s"), 0, 300),
                    _number(d.get("timeout_s", 2.0), (*w, "timeout_s"), 0.1, 30))


def _str(v: Any, w: tuple[Any, ...], empty: bool = False) -> str:
    if not isinstance(v, str) or (not v and not empty) or "\x00" in v:
        raise UsageError(f"expected a {'' if empty else 'non-empty '}string, got {v!r}", w)
    return v


def _bool(v: Any, w: tuple[Any, ...]) -> bool:
    if not isinstance(v, bool):
        raise UsageError(f"expected true or false, got {v!r}", w)
    return v


def _int(v: Any, w: tuple[Any, ...], low: int, high: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise UsageError(f"expected a whole number {low}..{high}, got {v!r}", w)
    return v


def _number(v: Any, w: tuple[Any, ...], low: float, high: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
        raise UsageError(f"expected a number {low:g}..{high:g}, got {v!r}", w)
    return float(v)


def _cpus(v: Any, w: tuple[Any, ...]) -> tuple[int, ...]:
    if not isinstance(v, list) or not v or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in v):
        raise UsageError(f"expected a list of CPU numbers, got {v!r}", w)
    return tuple(sorted(set(v)))


def lab_spec(d: dict[str, Any], base: Path | None) -> LabSpec:
    """``[lab] file = "…"``: the lab the file declares (relative to ``base``, the campaign file's directory);
    no other key of ``[lab]`` with it (the file has the ports, link speed and MTU)."""
    for k in d:
        if k != "file":
            raise UsageError("an external lab takes its ports, link speed and MTU from its file: "
                             "give file alone", k)
    path = d["file"]
    if not isinstance(path, str) or not path:
        raise UsageError(f"expected a lab file's path, got {path!r}", "file")
    p = Path(path)
    if not p.is_absolute() and base is not None:
        p = base / p
    try:
        ext = load(p)
    except UsageError as e:
        raise UsageError(e.message, "file") from None
    return LabSpec("a", ext.link_speed_bps, Mtus(ext.mtu), None, ext, lab_kind="external")
