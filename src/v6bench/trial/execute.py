"""Runs one trial on a lab that is up and assembles the v6bench trial
result: the engine's counts plus what the lab measured around them.

The result (``--json``; ``docs/trial-result.md``) keeps the engine's result
whole under ``engine`` and adds a summary, the DUT's CPU and interface
counters, the lab and the environment. The lab adds ``tester_limited``
reasons of its own, never removes the engine's:

- a DUT interface facing a tester port dropped frames on transmit
  (``tx_dropped``): the tester's receive queue overflowed, so the tester,
  not the DUT, lost them. Not so for a router reset during the trial
  (the DUT action): its interfaces went down while it forwarded, and the
  frames it then dropped on transmit are the reset's loss. (The tester
  received the same rate cleanly in the throughput search that chose it.);
- on ``p2p`` (no DUT) any loss at all is the tester's: a sending tester
  interface's ``tx_dropped`` means the receiving tester did not keep up.
"""

from __future__ import annotations

import os
import random
import platform
import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import engine
from ..core.phases import phase, split
from ..core.tester import IDLE_TIMEOUT_S
from ..engine.spec import DEFAULT_SETTLE_S, TrialSpec
from ..lab.machine import cost, wakeful
from ..lab import interface
from ..lab.protocol import Lab
from ..engine.result import take_learned_tuples
from . import addresses, answers, mesh, packet_io, preliminary, settle, tester_limits
from .path import LabPath
from .request import TrialRequest
from .spec import engine_spec, ports_record

LATENCY_KEYS = ("count", "min", "mean", "stddev", "p50", "p99", "p999", "max")


def _stream_summary(s: dict[str, Any]) -> dict[str, Any]:
    lat = s.get("latency_ns")
    ia = s.get("inter_arrival_ns")
    return {
        "name": s["name"],
        "ip_version": s["ip_version"],
        **({"rx_ip_version": s["rx_ip_version"]} if s.get("rx_ip_version", s["ip_version"]) != s["ip_version"] else {}),
        "direction": f"{s['tx_port']}->{s['rx_port']}" if s.get("protocol", "udp") == "udp" else f"{s['tx_port']}->{s['dst_ip']}->{s['rx_port']}",
        "protocol": s.get("protocol", "udp"),
        "frame_size": s["frame_size"],
        "intended_fps": s["intended_fps"],
        "tx_frames": s["tx_frames"],
        "rx_frames": s["rx_frames"],
        "lost_frames": s["lost_frames"],
        "refused_frames": s["refused_frames"],
        "loss_ratio": s["loss_ratio"],
        "reordered_frames": s["reordered_frames"],
        "duplicate_frames": s["duplicate_frames"],
        "negative_latency_frames": s.get("negative_latency_frames", 0),
        **({"distinct_flows": n} if (n := addresses.distinct_flows(s)) is not None else {}),
        "latency_ns": {k: lat[k] for k in LATENCY_KEYS} if lat else None,
        "pdv_ns": s.get("pdv_ns"),
        "ipdv_ns": s.get("ipdv_ns"),
        "inter_arrival_ns": {"p50": ia["p50"], "max": ia["max"]} if ia else None,
        "loss_window": s.get("loss_window"),
        "fragments": s.get("fragments"),
    }


def dut_cpu_pct(dut: dict[str, Any]) -> dict[str, float | None]:
    """Each router's forwarding CPU as % of one CPU (``busy_ratio`` × 100;
    None where it cannot be measured): the trial's ``dut_cpu``."""
    return {r["name"]: None if r["busy_ratio"] is None else round(100 * r["busy_ratio"], 1) for r in dut["routers"]}


def suspect_reasons(eng: dict[str, Any]) -> list[str]:
    """Why a trial's delays cannot be trusted though its counts can: frames
    received "before" they were sent (the clocks disagree). Such a trial's
    latency enters no comparison (report/samples.py)."""
    return [f"stream {s['name']}: {s['negative_latency_frames']} frames received before they were sent (clock trouble); "
            "they are counted, not timed" for s in eng["streams"] if s.get("negative_latency_frames")]


def summarize(lab: Lab, request: TrialRequest, fps: float, eng: dict[str, Any], dut: dict[str, Any],
              lab_reasons: Sequence[str] = (), ports: dict[str, Any] | None = None) -> dict[str, Any]:
    """The trial's result; ``lab_reasons``: the lab's own reasons the trial
    is ``tester_limited`` (its observer's :meth:`reasons`); ``ports``: the
    trial's ports record (:func:`.spec.ports_record`) if the caller has it."""
    reasons = list(eng["tester_limited_reasons"]) + list(lab_reasons)
    spread_s = None
    if request.mesh:
        spread_s, why = mesh.start_spread(eng, request.duration_s)
        reasons += [why] if why else []
    totals = eng["totals"]
    return {
        "result_kind": "v6bench-trial",
        "result_version": 1,
        "status": eng["status"],
        "mix": str(request.mix),
        "frame_size": request.frame_size,
        "rate": request.rate.text,
        "rate_per_direction_fps": fps,
        "bidirectional": request.bidirectional,
        "ext_headers": request.ext_headers,
        "icmp_echo": request.icmp_echo,
        "flows": request.flows,
        **({"foreground": request.foreground} if request.flows == 2 else {}),
        "order_seed": request.order_seed,
        "ports": ports if ports is not None else ports_record(lab, request),
        **({"addresses": addresses.record(request.addresses)} if request.addresses > 1 else {}),
        "runs_s": request.runs_s,
        "mesh": request.mesh,
        "mesh_start_spread_s": spread_s,
        "duration_s": request.duration_s,
        "intended_fps": totals["intended_fps"],
        "offered_fps": totals["offered_fps"],
        "tx_frames": totals["tx_frames"],
        "rx_frames": totals["rx_frames"],
        "lost_frames": totals["lost_frames"],
        "loss_ratio": totals["loss_ratio"],
        "tester_limited": bool(reasons),
        "tester_limited_reasons": reasons,
        "suspect_reasons": suspect_reasons(eng),
        "streams": [_stream_summary(s) for s in eng["streams"]],
        "dut_cpu": dut_cpu_pct(dut),
        "dut_cost": {**cost.ns_per_frame(dut.get("forwarding"), totals["rx_frames"], eng.get("traffic_s") or 0.0),
                     **({"by_family": cost.per_family(dut["forwarding"]["runs"], eng)}
                        if "runs" in (dut.get("forwarding") or {}) else {})},
        "dut": dut,
        "lab": interface.record(lab),
        "environment": {
            "kernel": lab.kernel,
            "machine": platform.machine(),
            "engine_version": eng["engine_version"],
        },
        "engine": eng,
    }


#: Time from starting the engine to its first frame: learning (ARP/ND,
#: about 0.1 s on the lab) plus the default 0.5 s settle (docs/engine-spec.md).
LEARNING_S = 0.1
ENGINE_LEAD_S = LEARNING_S + DEFAULT_SETTLE_S


def engine_lead_s(settle_s: float | None) -> float:
    """:data:`ENGINE_LEAD_S` for a trial whose settle is ``settle_s`` (None: the engine's default)."""
    return LEARNING_S + settle.applied_s(settle_s)


def _bound_s(spec: TrialSpec) -> float:
    """An upper bound of the engine's run [s]: what an observer polling
    beside it may take at most (a burst's frames go out well within a minute)."""
    return (spec.duration_s or 60.0) + (spec.drain_s or 2.0) + engine_lead_s(spec.learning_settle_s) + 30.0


def trial(lab: Lab, request: TrialRequest, engine_pid_file: Path | None = None,
          adjust: Callable[[TrialSpec], TrialSpec] | None = None,
          during: tuple[float, Callable[[], dict[str, Any]]] | None = None, selftest: dict[str, Any] | None = None,
          with_preliminary: bool = True) -> dict[str, Any]:
    """Runs ``request`` on ``lab`` (which the caller holds locked); the
    engine's PID goes to ``engine_pid_file`` while it runs. ``selftest``:
    the tester's self-test the trial is checked against (:mod:`.tester_limits`).

    ``adjust`` may return a changed engine spec to run (a burst's
    ``frame_count``, a ``rate_step``). ``during`` = (at_s, action) calls
    ``action`` about ``at_s`` into the traffic, from another thread (on the
    DUT's CPUs when the lab keeps them apart from the tester's); its
    returned dict is stored under ``action`` with ``action_at_s``, the
    time it started after the first frame was due.

    First the DUT restabilizes (RFC 2544 §23): what an earlier trial left in it is waited out, and stored
    under ``restabilized`` (:func:`interface.restabilize`).

    Through a DUT that keeps state with RFC 4814's ports, RFC 9693's
    preliminary phase (:mod:`.preliminary`) opens the trial's connections
    first, stored under ``preliminary``; ``with_preliminary=False`` leaves
    it out (RFC 9693's own measurements, trial/connections.py, open their
    connections themselves).
    """
    fps = request.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, interface.tunnel(lab), lab.dut_config)
    if request.order_seed is None:  # every trial its own order of the families and flows (trial/spec.py)
        request = replace(request, order_seed=random.SystemRandom().randrange(2**31))
    spec = engine_spec(lab, request, fps)
    if adjust:
        spec = adjust(spec)
    spec = packet_io.settle(spec)
    ports = ports_record(lab, request)
    spec, leftover, opened = _before_traffic(lab, request, spec, ports, fps, engine_pid_file, with_preliminary)
    watch = interface.observer(lab)
    with phase("observe the DUT"):
        before = watch.before()
    action = _DutAction(lab, during, engine_lead_s(spec.learning_settle_s)) if during else None
    with watch.during(_bound_s(spec), spec.duration_s) as polled, wakeful.awake() as cpu_idle, phase("engine start and stop"):
        eng = engine.run_trial(spec, pid_file=engine_pid_file)
    learned_tuples = take_learned_tuples(eng)  # handed on, never stored (a connection test's open phase)
    split("engine start and stop", {"learning and settle": eng.get("learning_s") or 0.0,
                                    "traffic": eng.get("traffic_s") or 0.0,
                                    "drain": eng.get("drained_s", eng.get("drain_s")) or 0.0})
    done = action.join() if action else {}
    with phase("observe the DUT"):
        observed = watch.after(before, polled, eng)  # stored as the result's "dut" record
    out = summarize(lab, request, fps, eng, observed, watch.reasons(eng, observed, (done.get("result") or {}).get("router")),
                    ports)
    out["lab"]["cpu_idle"], out["settle_s"] = cpu_idle, settle.applied_s(spec.learning_settle_s)  # the pause it had
    if opened is not None:
        out["preliminary"] = opened
    if leftover is not None:
        out["restabilized"] = leftover
    out.update({"learned_tuples": learned_tuples} if learned_tuples else {})  # taken off by trial/lab_tester.py
    tester_limits.apply(out, selftest, request.frame_size)
    if action:
        _record_action(out, done, eng)
    return out


def _before_traffic(lab: Lab, request: TrialRequest, spec: TrialSpec, ports: dict[str, Any], fps: float,
                    engine_pid_file: Path | None, with_preliminary: bool
                    ) -> tuple[TrialSpec, dict[str, Any] | None, dict[str, Any] | None]:
    """What precedes the trial's traffic (:func:`trial`): the DUT restabilizes, then RFC 9693's preliminary phase
    where needed; the spec to run (with the answers t2 learned), what was waited out, and the phase's record."""
    with phase("DUT restabilizes"):
        leftover = interface.restabilize(lab)
    if not (with_preliminary and preliminary.needed(lab, request)):
        return spec, leftover, None
    line = LabPath.of(lab).line_fps(request.frame_size, request.mix.ipv4_pct, request.bidirectional)
    with phase("preliminary phase"):
        held = interface.hold_connections(lab, IDLE_TIMEOUT_S)
        opened, learned = preliminary.run(spec, ports, preliminary.rate_fps(request, line, lab.dut_config),
                                          fps, engine_pid_file, held, partial(interface.restabilize, lab))
    return answers.fill(spec, learned), leftover, opened


class _DutAction:
    """A trial's ``during`` = (at_s, action): ``action`` called about
    ``at_s`` into the traffic (``lead_s``: from the engine's start to its
    first frame, :func:`engine_lead_s`) from a thread of its own, on the DUT's CPUs
    when the lab keeps them apart from the tester's (the action is the
    DUT's work, a reset, off the sender's CPUs); its outcome or error is
    kept for the trial, never lost."""

    def __init__(self, lab: Lab, during: tuple[float, Callable[[], dict[str, Any]]], lead_s: float) -> None:
        self.lab, (self.at_s, self.action), self.lead_s = lab, during, lead_s
        self.done: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._act, name="dut-action", daemon=True)
        self.thread.start()

    def _act(self) -> None:
        plan = self.lab.cpu_plan
        if plan.arrangement == "split" and not plan.shared:
            os.sched_setaffinity(0, set(plan.dut_cpus))  # this thread only
        time.sleep(self.lead_s + self.at_s)
        try:
            self.done["result"] = self.action()
        except Exception as e:  # reported with the trial, never lost
            self.done["error"] = f"{type(e).__name__}: {e}"

    def join(self) -> dict[str, Any]:
        """The action's ``result`` or ``error``, once it ended."""
        self.thread.join()
        return self.done


def _record_action(out: dict[str, Any], done: dict[str, Any], eng: dict[str, Any]) -> None:
    """The DUT action's outcome in the trial's result: under ``action``, with ``action_at_s`` (when it started
    after the first frame was due); a failed action makes the trial the tester's (``tester_limited``)."""
    out["action"] = done.get("result")
    if "error" in done:
        out["action_error"] = done["error"]
        out["tester_limited_reasons"].append(f"the DUT action failed: {done['error']}")
        out["tester_limited"] = True
    elif done.get("result", {}).get("reset_started_unix_ns"):
        out["action_at_s"] = (done["result"]["reset_started_unix_ns"] - eng["started_at_unix_ns"]) / 1e9
