"""The backend of an external lab (``external``, lab/backends.py): a
router v6bench did not build, declared by a lab file."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Iterator, NoReturn

from ...core.errors import LabError, UsageError
from ..machine import lock
from ..model import spec as lab_spec
from ..model.dut import DutConfig
from ..model.site import Site
from .lab_file import ExternalSpec
from ..model.spec import LabSpec
from . import bgp_speaker, external, snmp_observe
from .external import ExternalLab
from ..protocol import Backend


class ExternalBackend:
    """A router v6bench did not build, declared by a lab file
    (:mod:`.external`): observed over SNMP, configured and reset by the
    file's commands, told a table over BGP where the file allows it."""

    #: The ``[dut]`` keys an external lab takes: a table its DUT learns over BGP (lab/external/bgp_speaker.py).
    DUT_KEYS = ("table", "table_seed", "destinations")
    #: Its DUT's connection table is its own (``clear_connections`` refuses).
    empties_connections = False
    routes_address_ranges = False  # the router holds what its own configuration routes

    def dut_config(self, d: dict[str, Any], spec: LabSpec) -> DutConfig:
        """The DUT is configured by the file's ``apply`` command: of
        ``[dut]`` it takes only a table (:data:`DUT_KEYS`), which it learns
        over BGP, and only if the file allows it (``[table]``). A
        translator the file declares (``[translation]``) is its NAT64 mode."""
        ext = _file(spec)
        for k in d:
            if k not in self.DUT_KEYS:
                raise UsageError(f"the DUT of external lab {ext.path} is configured by the file's dut.apply "
                                 "command, not by v6bench", k)
        dut = lab_spec.dut_config({**d, **({"nat64": ext.translation.mode} if ext.translation else {})}, spec)
        if dut.has_table and ext.table is None:
            raise UsageError(f"external lab {ext.path} does not allow a table: the DUT would be told routes "
                             "to much of the address space over BGP; its file allows it with [table] "
                             "allow_full_table = true (docs/external-lab.md)", "table")
        return dut

    def tunnel(self, name: str) -> None:
        """None: an external DUT's tunnels are its own configuration."""
        return None

    def tunnel_record(self, lab: ExternalLab) -> None:
        return None

    def up(self, site: Site, spec: LabSpec, dut: DutConfig | None) -> NoReturn:
        raise UsageError(f"lab up builds the emulated lab; external lab {_file(spec).path} is used as it is", "file")

    @contextmanager
    def take(self, site: Site, spec: LabSpec, dut: DutConfig | None, apply: bool = True) -> Iterator[ExternalLab]:
        """Ports checked, configuration applied unless not ``apply``, the
        agent polled; with a table, the table announced for this use
        (:mod:`.bgp_speaker`) and withdrawn when it ends."""
        ext = _file(spec)
        with lock.locked(site, f"external lab {ext.name}"):
            lab = external.take(ext, apply)
            lab = replace(lab, telemetry=snmp_observe.connect(lab.snmp_dut))
            if dut is None or not dut.has_table:
                yield lab
                return
            try:
                speaker, fib = bgp_speaker.start(site, ext, dut)
                yield replace(lab, fib=fib, dut_config=dut, speaker=speaker)
            finally:
                if os.getpid() == lab.owner_pid:  # never from a forked helper
                    bgp_speaker.remove(site)

    def check_test(self, spec: LabSpec, test_kind: str, runs_host_stacks: bool, reset_kinds: tuple[str, ...]) -> None:
        """The tester hosts' own stacks (host-stack tests) exist only in the
        emulated lab; a reset needs the file's command for each of its kinds."""
        ext = _file(spec)
        if runs_host_stacks:
            raise UsageError(f"{test_kind} runs the tester hosts' own kernels, which only the emulated lab has: "
                             f"not on external lab {ext.path}", "kind")
        for kind in reset_kinds:
            if not getattr(ext.dut, f"reset_{kind}"):
                raise UsageError(f"a {kind} reset needs the lab file's dut.reset_{kind} command ({ext.path})", "kinds")

    def check_machine(self, spec: LabSpec, dut: DutConfig) -> None:
        """Nothing beyond the tester's set-up: the lab file's ports, agent
        and commands are checked when the lab is taken into use."""

    def observer(self, lab: ExternalLab) -> snmp_observe.SnmpObserver | bgp_speaker.Watched:
        """Over SNMP; while a table is announced, the BGP sessions checked after every trial too."""
        snmp = snmp_observe.SnmpObserver(lab.snmp_dut, lab.telemetry)
        return bgp_speaker.Watched(snmp, lab.speaker, lab.spec) if lab.speaker else snmp

    def reset(self, site: Site, lab: ExternalLab, kind: str) -> tuple[ExternalLab, dict[str, Any]]:
        return lab, external.reset(lab, kind)

    def clear_connections(self, lab: ExternalLab) -> float:
        raise LabError("RFC 9693's connection measurements need the DUT's connection table emptied: not built "
                       "for a router v6bench did not build (a lab file command would do it)")

    def restabilize(self, lab: ExternalLab) -> dict[str, Any] | None:
        """Not seen: None (a router v6bench did not build shows no reassembly queues over SNMP)."""
        return None

    def hold_connections(self, lab: ExternalLab, timeout_s: float) -> float | None:
        """Not set here, nor known: None (the connections test is refused with clear_connections)."""
        return None

    def describe(self, lab: ExternalLab) -> str:
        return lab.describe()

    def dut_record(self, lab: ExternalLab) -> dict[str, Any]:
        """The lab file's configuration file, the apply command's outcome and what the DUT's agent said of itself."""
        d = lab.spec.dut
        return {"config": lab.dut_config.to_json() if lab.fib else {}, "description": self.describe(lab),
                "config_file": d.config_file, "config_text": d.config_text, "applied": lab.applied,
                "telemetry": lab.telemetry}

    def status(self, site: Site) -> NoReturn:
        raise UsageError("an external lab is never kept up: lab status shows the emulated lab", "file")

    def down(self, site: Site) -> NoReturn:
        raise UsageError("an external lab is never kept up: lab down removes the emulated lab", "file")

    def status_record(self, lab: ExternalLab) -> NoReturn:
        raise UsageError(f"lab status shows the emulated lab; external lab {lab.spec.path} is never kept up", "file")

    def lab_table(self, lab: ExternalLab) -> dict[str, Any]:
        """Its lab file."""
        return {"file": str(lab.spec.path)}

    def table_offer(self, spec: LabSpec) -> str:
        """What the DUT would be told with a table (:func:`.bgp_speaker.describe`), or that the file allows none."""
        return bgp_speaker.describe(_file(spec))

    def prepare(self) -> None:
        """None: v6bench makes nothing for a router it did not build."""
        return None

    def record(self, lab: ExternalLab) -> dict[str, Any]:
        return {"topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
                "temporary": False, "cpu_plan": lab.cpu_plan.to_json(), "napi_threads": [], "sysctls": {},
                **lab.record()}


def _file(spec: LabSpec) -> ExternalSpec:
    """The lab file of a spec of this kind (its ``kind`` is ``external`` because it has one)."""
    if not isinstance(spec.lab_file, ExternalSpec):
        raise UsageError("an external lab needs its lab file", "file")
    return spec.lab_file


#: This kind's backend, held by the type checker to the lab it makes and takes (lab/protocol.Backend).
BACKEND: Backend[ExternalLab] = ExternalBackend()
