"""An external lab: tester ports cabled to a router v6bench did not build
(``docs/external-lab.md``). It gives a trial what the emulated lab gives
(:mod:`.interface`): two tester ports with addresses and the DUT's
gateways, a path of two links (t1–DUT, DUT–t2, the file's MTU and link
speed, shaped like topology ``a``), the tester's CPUs, DUT actions by the
file's commands, and observations over SNMP (:mod:`.snmp_observe`).

Safety, checked whenever the lab is taken into use (:func:`check_ports`):

- the engine sends only on the two declared interfaces (inside the
  declared namespace, if any), and only to the MACs it learns for the
  declared gateways by ARP and ND (the engine's learning, RFC 2544 §23);
- an interface that carries this machine's default route, or has an
  address (a management address), is refused unless its port says
  ``allow_default_route`` / ``allow_management_address``;
- a port whose kernel would answer or forward test traffic is refused
  always: the tester's or the far tester's addresses assigned in the
  port's namespace, or IP forwarding on for the interface;
- a port without carrier is refused (nothing is cabled, or the DUT's
  port is down);
- every command (apply, reset) runs with a time limit, every SNMP request
  too; trials are bounded by the engine's own duration.
"""

from __future__ import annotations

from typing import Any

import ipaddress
import os
import subprocess
import time
from dataclasses import dataclass, field, replace

from ...core.errors import LabError, UsageError
from ...core.rates import format_link_speed
from pyroute2 import netns as pr_netns

from ..machine import nsctl
from ..model.topology import TESTER
from ..model.cpus import CpuPlan
from ..model import translation
from ..model.dut import DutConfig
from .lab_file import ExternalSpec, PortSpec
from ..model.mtu import Mtus
from .bgp_speaker import Speaker
from .snmp_observe import SnmpDut

ARRANGEMENT = "external"


def tester_plan(spec: ExternalSpec) -> CpuPlan:
    """The tester's CPUs: those the file gives, else all this process may
    use: one receives (the last), the others send (one CPU does both)."""
    cpus = spec.tester_cpus or tuple(sorted(os.sched_getaffinity(0)))
    allowed = os.sched_getaffinity(0)
    if not set(cpus) <= allowed:
        raise UsageError(f"CPUs {sorted(set(cpus) - allowed)} are not this process's to use "
                         f"(it may use {sorted(allowed)})", ("tester_cpus",))
    tx = cpus[:-1] or cpus
    return CpuPlan(ARRANGEMENT, cpus, tuple(tx), cpus[-1], tuple(spec.dut_cpus))


@dataclass(frozen=True)
class ExternalLab:
    """An external lab in use: what a trial reads of a lab
    (:class:`~v6bench.lab.protocol.Lab`), from the file and the checks."""

    spec: ExternalSpec
    cpu_plan: CpuPlan
    ports: dict[str, Any] = field(default_factory=dict)  # name → check_ports' facts (MAC, carrier, speed)
    applied: dict[str, Any] | None = None  # the apply command's outcome
    telemetry: dict[str, Any] | None = None  # the agent polled once (lab/external/snmp_observe.connect), None without one
    kernel: str = field(default_factory=lambda: os.uname().release)
    owner_pid: int = field(default_factory=os.getpid)

    #: A table announced to the DUT for this use (lab/external/bgp_speaker.py): the record lab/emulated/fib_load.py gives an
    #: emulated lab's, its FIB learning time filled in by trial/fib_learning.py; None without one.
    fib: dict[str, Any] | None = None
    #: The DUT configuration v6bench gives: a table at most (lab/external/backend.External.DUT_KEYS); with the
    #: file's ``[translation]``, its NAT64 mode, which the file declares.
    dut_config: DutConfig = DutConfig()
    #: The speaker announcing the table, while the lab is in use.
    speaker: Speaker | None = None

    #: The shape the path and fit rules see: one router between t1 and t2.
    topology = "a"
    napi: tuple[Any, ...] = ()
    sysctls: dict[str, Any] = field(default_factory=dict)

    #: The kind of lab (lab/backends.REGISTRY).
    lab_kind = "external"

    @property
    def keeps_state(self) -> bool:
        """The DUT tracks connections of test frames, as its configuration says (lab/model/dut.py)."""
        return self.dut_config.keeps_state

    @property
    def table_new(self) -> bool:
        """A table announced for this use (withdrawn when it ends): learned and crossed once before its
        trials (trial/warmup.py)."""
        return self.fib is not None

    @property
    def fib_learning_timeout_s(self) -> float | None:
        """How long probe frames wait for the DUT to learn the table it is told (the file's ``[table]``)."""
        return self.spec.table.learning_timeout_s if self.spec.table else None

    def with_fib(self, fib: dict[str, Any] | None) -> "ExternalLab":
        return replace(self, fib=fib)

    @property
    def snmp_dut(self) -> SnmpDut:
        """The DUT as its SNMP agent is read (lab/external/snmp_observe.py)."""
        return SnmpDut(self.spec.dut.name, self.spec.dut.snmp,
                       tuple(p.dut_interface for p in self.spec.ports if p.dut_interface is not None))

    @property
    def link_speed_bps(self) -> float:
        return self.spec.link_speed_bps

    @property
    def translator_addresses(self) -> translation.Addresses:
        """Where the DUT's NAT64 puts the other family: its lab file's ``[translation]`` (the built routers'
        addresses where the file gives none)."""
        return self.spec.translation.addresses if self.spec.translation else translation.BUILT

    @property
    def mtu(self) -> Mtus:
        return Mtus(self.spec.mtu)

    @property
    def shared_machine(self) -> bool:
        return self.spec.shared_machine

    @property
    def allow_root_netns(self) -> bool:
        """The ports are this machine's own interfaces, declared by the file: the engine may open them."""
        return self.spec.netns is None

    @property
    def allow_other_addresses(self) -> bool:
        """The file's addresses outside the benchmarking blocks, or a
        table's destinations (announced only where the file allows a table)."""
        return self.spec.allow_other_addresses or self.fib is not None

    @property
    def netns_prefix(self) -> str | None:
        """The engine opens ports only in namespaces starting so: the file's one namespace."""
        return self.spec.netns

    @property
    def nodes(self) -> tuple[dict[str, Any], ...]:
        """The two tester nodes as the emulated lab records them (their one interface each)."""
        return tuple({"name": p.name, "role": TESTER, "netns": p.netns,
                      "interfaces": [{"name": p.interface, "ipv4": p.ipv4, "ipv6": p.ipv6,
                                      "gateway_ipv4": p.gateway_ipv4, "gateway_ipv6": p.gateway_ipv6,
                                      "peer": f"{self.spec.dut.name}/{p.dut_interface or '?'}"}]}
                     for p in self.spec.ports)

    def node(self, name: str) -> dict[str, Any]:
        for n in self.nodes:
            if n["name"] == name:
                return n
        raise KeyError(name)

    def describe(self) -> str:
        d = self.spec.dut
        return (f"external lab {self.spec.name} ({self.spec.path}): DUT {d.name}"
                + (f" ({d.description})" if d.description else "")
                + f", {format_link_speed(self.link_speed_bps)} ports "
                + ", ".join(f"{p.name}={p.interface}" + (f"@{p.netns}" if p.netns else "") for p in self.spec.ports)
                + f", MTU {self.spec.mtu}" + (", DUT on this machine" if self.shared_machine else "")
                + (f", {self.dut_config.describe()}" if self.fib else ""))

    def record(self) -> dict[str, Any]:
        """The lab part of a result and of a run's environment."""
        return {"kind": "external", "external": self.spec.to_json(), "ports": self.ports,
                "shared_machine": self.shared_machine, "telemetry": self.telemetry, "fib": self.fib}


def _facts(names: list[str], addresses: list[str]) -> dict[str, Any]:
    """Inside the ports' namespace: each interface's MAC, carrier, speed,
    addresses, default routes and forwarding; and which of ``addresses``
    are this namespace's own."""
    from pyroute2 import IPRoute

    out: dict[str, Any] = {"interfaces": {}, "local": []}
    with IPRoute() as ipr:
        local = {a.get_attr("IFA_ADDRESS") for a in ipr.get_addr()}
        out["local"] = [a for a in addresses if a in local]
        defaults: dict[int, list[str]] = {}
        for family, v in ((2, "IPv4"), (10, "IPv6")):
            for r in ipr.get_routes(family=family):
                if r["dst_len"] == 0 and r.get("table") in (254, None):
                    oif = r.get_attr("RTA_OIF")
                    multipath = r.get_attr("RTA_MULTIPATH") or []
                    for i in [oif, *(m["oif"] for m in multipath)]:
                        if i:
                            defaults.setdefault(i, []).append(v)
        for name in names:
            idx = ipr.link_lookup(ifname=name)
            if not idx:
                out["interfaces"][name] = None
                continue
            (link,) = ipr.get_links(idx[0])
            addrs = [a.get_attr("IFA_ADDRESS") for a in ipr.get_addr(index=idx[0])]
            base = f"/sys/class/net/{name}"
            try:
                speed = int(nsctl.read_file(f"{base}/speed"))
            except (OSError, ValueError):
                speed = None
            fwd = {}
            for v in ("ipv4", "ipv6"):
                try:
                    fwd[v] = nsctl.read_file(f"/proc/sys/net/{v}/conf/{name}/forwarding") == "1"
                except OSError:
                    fwd[v] = False
            try:
                fwd["ipv6"] = fwd["ipv6"] or nsctl.read_file("/proc/sys/net/ipv6/conf/all/forwarding") == "1"
            except OSError:
                pass
            out["interfaces"][name] = {"mac": link.get_attr("IFLA_ADDRESS"), "operstate": link.get_attr("IFLA_OPERSTATE"),
                                       "speed_mbps": speed if speed and speed > 0 else None, "addresses": addrs,
                                       "default_route": defaults.get(idx[0], []), "forwarding": fwd,
                                       "driver": _driver(base, link)}
    return out


def _driver(base: str, link: Any) -> str | None:
    """The port's driver (a NIC's, from sysfs), or a virtual link's kind (veth, macvlan, …): part of
    what a run on this port ran on (docs/compare.md)."""
    try:
        return os.path.basename(os.readlink(f"{base}/device/driver"))
    except OSError:
        info = link.get_attr("IFLA_LINKINFO")
        return info.get_attr("IFLA_INFO_KIND") if info is not None else None


def check_ports(spec: ExternalSpec) -> dict[str, Any]:
    """The ports' facts, after the safety rules (module docstring);
    raises :class:`LabError` naming the port and the rule broken."""
    if spec.netns and spec.netns not in pr_netns.listnetns():
        raise LabError(f"{spec.path}: port.t1.netns: no namespace {spec.netns!r}")
    names = [p.interface for p in spec.ports]
    ours = [str(ipaddress.ip_interface(getattr(p, v)).ip) for p in spec.ports for v in ("ipv4", "ipv6")]
    facts = nsctl.run_in(spec.netns, lambda: _facts(names, ours)) if spec.netns else _facts(names, ours)
    where = f" in namespace {spec.netns}" if spec.netns else " on this machine"
    if facts["local"]:
        raise LabError(f"{spec.path}: {', '.join(facts['local'])} is an address of this{' namespace' if spec.netns else ' machine'}'s own "
                       "kernel, which would answer the test traffic meant for the DUT: remove it (the engine answers "
                       "for the tester's addresses itself)")
    out = {}
    for p in spec.ports:
        f = facts["interfaces"].get(p.interface)
        key = f"{spec.path}: port.{p.name}.interface: {p.interface}"
        if f is None:
            raise LabError(f"{key}: no such interface{where}")
        _refuse(p, f, key)
        out[p.name] = {"interface": p.interface, "netns": p.netns, "mac": f["mac"], "operstate": f["operstate"],
                       "speed_mbps": f["speed_mbps"], "driver": f["driver"]}
    return out


def _refuse(p: PortSpec, f: dict[str, Any], key: str) -> None:
    """The safety rules of one port (module docstring)."""
    if f["default_route"] and not p.allow_default_route:
        raise LabError(f"{key} carries this machine's default route ({', '.join(f['default_route'])}): a management "
                       f"or uplink port; set allow_default_route = true in [port.{p.name}] only if you mean it")
    managed = [a for a in f["addresses"] if not ipaddress.ip_address(a).is_link_local]
    if managed and not p.allow_management_address:
        raise LabError(f"{key} has the address {', '.join(managed)} (a management address?); test ports carry none. "
                       f"Set allow_management_address = true in [port.{p.name}] only if you mean it")
    forwarding = [{"ipv4": "IPv4", "ipv6": "IPv6"}[v] for v, on in f["forwarding"].items() if on]
    if forwarding:
        raise LabError(f"{key}: the kernel forwards {' and '.join(forwarding)} arriving on it, so it would route test "
                       f"frames itself: turn forwarding off (sysctl net.ipv4.conf.{p.interface}.forwarding=0, "
                       "net.ipv6.conf.all.forwarding=0)")
    if f["operstate"] not in ("UP", "UNKNOWN"):
        raise LabError(f"{key} is {f['operstate'].lower()}: is it up and cabled to the DUT?")


def run_command(lab_spec: ExternalSpec, what: str, command: str, extra_env: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs one of the file's DUT commands (``sh -c``), bounded by its
    ``command_timeout_s``; returns its outcome; raises :class:`LabError`
    if it fails or overruns."""
    env = {**os.environ, "V6BENCH_LAB_FILE": lab_spec.path, **(extra_env or {})}
    start = time.time_ns()
    try:
        p = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env,
                           timeout=lab_spec.dut.command_timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LabError(f"{lab_spec.path}: dut.{what}: did not finish in {lab_spec.dut.command_timeout_s:g} s") from None
    took_s = (time.time_ns() - start) / 1e9
    if p.returncode != 0:
        why = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        raise LabError(f"{lab_spec.path}: dut.{what}: failed (exit status {p.returncode}): {why}")
    return {"command": command, "started_unix_ns": start, "took_s": round(took_s, 3),
            "output": (p.stdout + p.stderr)[-4000:]}


def take(spec: ExternalSpec, apply: bool = True) -> ExternalLab:
    """The external lab taken into use: checked ports, the DUT's
    configuration applied (if the file has ``apply`` and ``apply``)."""
    plan = tester_plan(spec)
    ports = check_ports(spec)
    applied = run_command(spec, "apply", spec.dut.apply) if spec.dut.apply and apply else None
    dut = DutConfig(nat64=spec.translation.mode) if spec.translation else DutConfig()
    return ExternalLab(spec, plan, ports, applied, dut_config=dut)


def reset(lab: ExternalLab, kind: str) -> dict[str, Any]:
    """Resets the DUT by the file's command for ``kind`` (RFC 2544 §26.6):
    the timing as the emulated lab's reset gives it."""
    command = {"soft": lab.spec.dut.reset_soft, "hard": lab.spec.dut.reset_hard}.get(kind)
    if not command:
        raise LabError(f"{lab.spec.path}: the lab file has no dut.reset_{kind} command")
    done = run_command(lab.spec, f"reset_{kind}", command, {"V6BENCH_RESET_KIND": kind})
    return {"reset_kind": kind, "router": lab.spec.dut.name, "reset_started_unix_ns": done["started_unix_ns"],
            "reset_took_s": done["took_s"], "reset_command": command}
