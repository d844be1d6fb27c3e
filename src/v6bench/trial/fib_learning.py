"""The FIB learning time of a DUT told its table over BGP (RFC 3222 §3.3),
measured by frames: from the start of the announcement
(lab/external/bgp_speaker.py) until every sampled destination forwards.

A router v6bench did not build cannot be asked for its route lookups
(the emulated lab's routers are, lab/emulated/fib_load.py); its forwarding is
what the engine counts. So probe trials are sent one after the other from
the moment the sessions carry the table: each walks :data:`SAMPLE`
destinations a family (the same sample the emulated lab's lookups check)
:data:`CYCLES` times, at :data:`PROBE_FPS`; the first probe in which no
frame is lost ends the learning. The time is taken at that probe's end
(``fib_learning_s``), and its resolution is the probe's length with the
engine's set-up (``learning_resolution_s``): the DUT had learned at some
moment between the last lossy probe's start and this one's end. A probe
counts only frames the DUT forwarded: a tester-limited probe (the tester's
own drops) is sent again.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import engine
from ..core.errors import LabError
from ..lab.machine.table_files import SAMPLE
from ..lab import interface
from ..lab.protocol import Lab
from . import packet_io
from .request import make_request
from .spec import engine_spec

#: The probe's rate (frames/s, both families together), length and the walks of the sample it makes.
PROBE_FPS = 2_000
CYCLES = 2
PROBE_S = 2 * SAMPLE * CYCLES / PROBE_FPS
#: The probes' pause between learning the gateways' MACs and traffic (the engine's default is 0.5 s), and
#: how long they wait for the last frames (a trial's default is 2 s; a forwarded frame takes microseconds).
PROBE_SETTLE_S = 0.1
PROBE_DRAIN_S = 0.2


def pending(lab: Lab) -> bool:
    """Whether ``lab`` holds a table whose learning time is still to be measured by frames."""
    return lab.fib is not None and any(r.get("fib_learning_s") is None for r in lab.fib["routers"].values())


def sample_file(lab: Lab) -> Path:
    """The first :data:`SAMPLE` destinations a family of the lab's table, beside its destinations."""
    dests = Path(_table(lab)["destinations_file"])
    path = dests.with_name(dests.stem + f"-sample{SAMPLE}.json")
    if not path.exists():
        sample = {v: a[:SAMPLE] for v, a in json.loads(dests.read_text()).items()}
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(sample))
        tmp.replace(path)
    return path


def learn(lab: Lab, engine_pid_file: Path | None = None) -> Lab:
    """Probes until the DUT forwards the sample; the lab with the learning
    time in its table record. Raises :class:`LabError` after the lab
    file's ``learning_timeout_s`` (counted from the announcement)."""
    fib = _table(lab)
    started_ns = fib["announce_started_unix_ns"]
    timeout_s = lab.fib_learning_timeout_s
    if timeout_s is None:
        raise LabError(f"{interface.describe(lab)}: its table's learning is not measured by frames")
    probe_lab = lab.with_fib({**fib, "destinations_file": str(sample_file(lab))})
    request = replace(make_request("50/50", 128, f"{PROBE_FPS}fps", PROBE_S, False), settle_s=PROBE_SETTLE_S,
                      drain_s=PROBE_DRAIN_S)
    fps = request.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, interface.tunnel(lab), lab.dut_config)
    probes = 0
    while True:
        t0 = time.time_ns()
        eng = engine.run_trial(packet_io.settle(engine_spec(probe_lab, request, fps)), pid_file=engine_pid_file)
        t1 = time.time_ns()
        probes += 1
        walked = [s for s in eng["streams"] if s.get("walk")] or eng["streams"]
        lost = sum(s["tx_frames"] - s["rx_frames"] for s in walked)
        if not eng.get("tester_limited") and lost == 0 and all(s["tx_frames"] for s in walked):
            break
        if (t1 - started_ns) / 1e9 > timeout_s:
            raise LabError(f"{interface.describe(lab)}: the DUT does not forward all of {SAMPLE} sampled destinations a family "
                           f"{timeout_s:g} s after the table's announcement began ({lost:,} of "
                           f"{sum(s['tx_frames'] for s in walked):,} frames of the last probe lost)")
    routers = {name: {**r, "fib_learning_s": round((t1 - started_ns) / 1e9, 3),
                      "learning_resolution_s": round((t1 - t0) / 1e9, 3), "learning_probes": probes}
               for name, r in fib["routers"].items()}
    return lab.with_fib({**fib, "routers": routers})


def _table(lab: Lab) -> dict[str, Any]:
    """The lab's table record (the lab holds a table)."""
    if lab.fib is None:
        raise LabError(f"{interface.describe(lab)}: no table")
    return lab.fib
