"""``v6bench lab check``: an external lab file checked end to end before
any test, without changing the DUT (its ``apply`` command is not run).

The file is validated, the ports pass the safety rules
(:func:`v6bench.lab.external.external.check_ports`), the DUT's agent is polled once,
and a probe trial sends :data:`PROBE_FRAMES` frames each way and family
(0.1 s at 40 frames/s a direction): the engine learns the gateways' MACs by
ARP and ND (RFC 2544 §23) and the probe shows whether the DUT forwards
between the ports, and whether its counters see the frames. It says what
the DUT would be told with a table (:func:`v6bench.lab.interface.table_offer`),
or that the file allows none.
"""

from __future__ import annotations

from typing import Any

from ..core.frames import parse_mix
from ..core.rates import parse_rate
from ..lab import interface
from ..lab.model.site import Site
from ..lab.model.spec import LabSpec
from . import execute
from .request import TrialRequest

PROBE_FPS = 40
PROBE_DURATION_S = 0.1
PROBE_FRAMES = round(PROBE_FPS * PROBE_DURATION_S)


def check(site: Site, spec: LabSpec) -> dict[str, Any]:
    """What the check found: ``ports`` (MAC, state, speed), ``gateways``
    (the MACs learned per port and family), ``probe`` (frames sent and
    received per stream), ``snmp`` (the agent's system, the DUT ports'
    ifIndex, the CPU source) and the DUT's counters over the probe."""
    req = TrialRequest(parse_mix("50/50"), 128, parse_rate(f"{PROBE_FPS}fps"), PROBE_DURATION_S, True, drain_s=0.5)
    with interface.for_trial(site, spec, None, apply=False) as lab:
        r = execute.trial(lab, req, site.engine_pid_file)
    eng = r["engine"]
    record = interface.record(lab)
    return {
        "lab": interface.describe(lab),
        "ports": record.get("ports", {}),
        "gateways": {p["name"]: {"ipv4": p.get("next_hop_mac_ipv4"), "ipv6": p.get("next_hop_mac_ipv6")}
                     for p in eng["ports"]},
        "probe": [{"stream": s["name"], "tx_frames": s["tx_frames"], "rx_frames": s["rx_frames"]} for s in r["streams"]],
        "tester_limited_reasons": r["tester_limited_reasons"],
        "snmp": record.get("telemetry"),
        "dut": r["dut"],
        "table": interface.table_offer(spec),
    }
