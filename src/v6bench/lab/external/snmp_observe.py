"""What a lab observes of a router around one trial over SNMP (:mod:`.snmp`):
an external lab's DUT, and each VM router of the emulated lab (whose
agent runs in the guest): the IF-MIB counters of the DUT's ports before the trial
and once the agent shows its last frames (``counter_refresh_s`` after the
last one), and the DUT's CPU load polled while the traffic flows.

The result's ``dut`` has the emulated lab's shape (``docs/trial-result.md``):
``routers`` (one, the DUT: ``busy_ratio`` is its load as a share of all its
CPUs, ``busy_basis: "box"``, with the source and the time it covers),
``interfaces`` (``DUT/PORT`` → the packet, discard and error counters as
``rx_packets`` … and every IF-MIB counter read, by name), and ``snmp``
(polls, errors), ``forwarding`` (lab/machine/cost.py: the load, with its
resolution). Without an agent in the file the DUT's figures are None
and ``telemetry`` says why.
"""

from __future__ import annotations

from typing import Any, ContextManager

import contextlib
import time

from dataclasses import dataclass

from ...core.errors import LabError
from . import snmp
from ..machine.cost import forwarding
from .lab_file import SnmpSpec

#: What a router read over SNMP has its forwarding work read from (lab/machine/cost.py): its cost per frame is in ns of the
#: whole router, all its CPUs together (a share of them; how many it has, SNMP's CPU sources do not all say).
BOX_BASIS = "the router's CPU load over SNMP, as a share of all its CPUs"


@dataclass(frozen=True)
class SnmpDut:
    """A router read over SNMP: its ``name`` in results, its agent
    (``snmp``; None: none declared) and the ``ports`` whose counters are
    read, as the agent names them (ifName, ifDescr or ifIndex)."""

    name: str
    snmp: SnmpSpec | None
    ports: tuple[str | int, ...]


def connect(dut: SnmpDut) -> dict[str, Any] | None:
    """Polls the agent once (system, the DUT ports' ifIndex, the CPU
    source): the lab's telemetry record, or None without an agent.
    Raises :class:`LabError` if the agent does not answer or lacks a port."""
    s = dut.snmp
    if s is None:
        return None
    with snmp.Agent(s) as agent:
        system = agent.get([snmp.SYS_DESCR, snmp.SYS_NAME, snmp.SYS_UPTIME])
        if all(v is None for v in system.values()):
            raise LabError(f"SNMP agent {s.host}:{s.port} answers but has no SNMPv2-MIB system group")
        indexes = snmp.interface_indexes(agent, list(dut.ports))
        src = snmp.find_cpu_source(agent, s.cpu)
        speeds = agent.get([f"{snmp.IF_HIGH_SPEED}.{i}" for i in indexes.values()])
    return {"sys_descr": system[snmp.SYS_DESCR], "sys_name": system[snmp.SYS_NAME],
            "sys_uptime_ticks": system[snmp.SYS_UPTIME],
            "if_index": {str(k): v for k, v in indexes.items()},
            "if_speed_mbps": {str(k): speeds[f"{snmp.IF_HIGH_SPEED}.{v}"] for k, v in indexes.items()},
            "cpu_source": src.name if src else None,
            "cpu_source_description": src.description if src else "none: the agent answers no CPU source v6bench knows"}


def _as_lab_counters(c: dict[str, Any]) -> dict[str, Any]:
    """IF-MIB deltas under the emulated lab's counter names, beside their own."""
    def total(*keys: str) -> int | None:
        vals = [c.get(k) for k in keys]
        known = [v for v in vals if v is not None]
        return sum(known) if len(known) == len(vals) else None
    return {"rx_packets": total("in_ucast_pkts", "in_multicast_pkts", "in_broadcast_pkts"),
            "tx_packets": total("out_ucast_pkts", "out_multicast_pkts", "out_broadcast_pkts"),
            "rx_dropped": c.get("in_discards"), "tx_dropped": c.get("out_discards"),
            "rx_errors": c.get("in_errors"), "tx_errors": c.get("out_errors"), **c}


class SnmpObserver:
    """:class:`~v6bench.lab.protocol.Observer` of one router over SNMP
    (``telemetry``: what :func:`connect` found)."""

    def __init__(self, dut: SnmpDut, telemetry: dict[str, Any] | None) -> None:
        self.dut, self.telemetry = dut, telemetry
        s = dut.snmp
        self.agent = snmp.Agent(s) if s is not None and telemetry is not None else None
        src = telemetry.get("cpu_source") if telemetry else None
        self.src = snmp.CPU_SOURCES[src] if src else None

    def _counters(self) -> dict[str, Any]:
        assert self.agent is not None and self.telemetry is not None, "read only with an agent"
        return snmp.read_counters(self.agent, {k: int(v) for k, v in self.telemetry["if_index"].items()})

    def before(self) -> dict[str, Any] | None:
        return self._counters() if self.agent else None

    def readable_s(self) -> float | None:
        """The shortest traffic [s] whose CPU load this agent's source gives
        (:meth:`~v6bench.lab.external.snmp.CpuSource.readable_s`); None
        without an agent or a source."""
        if self.agent is None or self.src is None or self.dut.snmp is None:
            return None
        return self.src.readable_s(self.dut.snmp.poll_interval_s)

    def during(self, limit_s: float, traffic_s: float | None = None) -> ContextManager[snmp.Poller | None]:
        """The CPU source polled over a trial of ``traffic_s`` (None: a
        burst, not timed), only when its load can be read from that traffic
        (:meth:`readable_s`). Each poll starts Net-SNMP's tools on the
        tester's machine beside the engine's senders: with a VM router's
        agent polled every 0.5 s, 13 of 18 2-s trials (256 B bidirectional at
        22 kframes/s) were tester-limited, 4 of 18 without the polls (EPYC-25,
        2026-11-30), and such polls read nothing."""
        readable_s = self.readable_s()
        if readable_s is None or traffic_s is None or traffic_s < readable_s:
            return contextlib.nullcontext(None)
        assert self.agent is not None and self.src is not None and self.dut.snmp is not None
        return snmp.Poller(self.agent, self.src, self.dut.snmp.poll_interval_s, limit_s)

    def after(self, before: dict[str, Any] | None, during: snmp.Poller | None, eng: dict[str, Any]) -> dict[str, Any]:
        name = self.dut.name
        router: dict[str, Any] = {"name": name, "cpu": [], "busy_ns": None, "busy_ratio": None, "busy_basis": "box"}
        interfaces: dict[str, Any] = {}
        out: dict[str, Any] = {"routers": [router], "tester_rx": {"busy_ns": None, "busy_ratio": None},
                               "interfaces": interfaces, "dut_cpus": {}, "forwarding": forwarding([None], BOX_BASIS)}
        if self.agent is None or self.dut.snmp is None or before is None:
            out["telemetry"] = "none: the lab file declares no SNMP agent ([dut.snmp])"
            return out
        try:
            start_s = eng["started_at_unix_ns"] / 1e9
            end_s = start_s + eng["traffic_s"]
            wait_s = end_s + self.dut.snmp.counter_refresh_s - time.time()
            if wait_s > 0:  # the agent shows a frame in its counters only after its refresh
                time.sleep(wait_s)
            after = self._counters()
            read_at_s = time.time() - end_s
            for port, c in after.items():
                interfaces[f"{name}/{port}"] = _as_lab_counters(snmp.counter_delta(before[port], c))
            polled: dict[str, Any] = {"counters_read_after_traffic_s": round(read_at_s, 2)}
            out["snmp"] = polled
            if during is not None and self.src is not None:
                cpu = snmp.cpu_over_window(self.src, during.samples, start_s, end_s)
                router.update(busy_ratio=None if cpu["pct"] is None else round(cpu["pct"] / 100, 4),
                              cpu_source=cpu["source"], window_s=cpu["over_s"],
                              cpu_window_unix_s=cpu["between_unix_s"], cpu_why=cpu["why"])
                polled.update(cpu_polls=cpu["samples"], poll_errors=during.errors[:5])
                if cpu["pct"] is not None:
                    out["forwarding"] = forwarding([cpu["pct"] / 100], f"{BOX_BASIS} ({cpu['source']})",
                                                   cpu["resolution_pct"] / 100)
            elif self.src is not None:
                router.update(cpu_source=self.src.name,
                              cpu_why=f"not polled in {eng['traffic_s']:.1f} s of traffic: {self.src.description} "
                                      f"needs {self.readable_s():g} s or more")
            else:
                router["cpu_why"] = "the agent answers no CPU source v6bench knows"
        finally:
            self.agent.close()
        return out

    def reasons(self, eng: dict[str, Any], observed: dict[str, Any], reset_router: str | None) -> list[str]:
        """None: the router's discards, whatever port they face, are its own
        (the tester's own drops are the engine's reasons)."""
        return []
