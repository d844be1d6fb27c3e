"""The DUT's forwarding work over a trial's traffic, in one shape for every
kind of lab: from it the trial's cost per frame (``trial/execute.py``).

Each lab's observer reads the CPU time its routers spent forwarding by its
own means and states it here as ``share``, CPUs' worth of work while the
traffic flowed (1.0 = one CPU busy the whole window), with what was read
(``basis``) and the smallest step that reading can take (``resolution``,
in the same unit; None where it is finer than a nanosecond a frame):

- namespace routers: their interfaces' NAPI threads' run time
  (``/proc/PID/schedstat``, ns);
- VM routers: each VM's QEMU threads' run time on this machine, which
  holds the guest's whole forwarding (under TCG the guest kernel's own
  accounting counts emulated time and is not used);
- routers read over SNMP: the box's CPU load as a share of all its CPUs
  (one tick of the agent's counters, or 1 % of a gauge, is the resolution).

A trial sent in runs (``Traffic.runs_s``: the engine sends each stream's
frames in a row, the streams in turn) has its cost read per family inside
the trial (:func:`with_runs`, :func:`runs`, :func:`runs_work`,
:func:`per_family`): each step of the lab's CPU sampler that lies inside
one run counts for that run's family. Namespace and VM routers have
such a sampler (every 20 ms); routers read over SNMP do not (their
counters move every few seconds), and give no per-family cost. Both
families then meet the same states of the machine within a second,
which a comparison across trials cannot give (docs/report.md).
"""

from __future__ import annotations

from typing import Any

from ...core import frames
from .cpu_window import Sampler


#: Work on the DUT's CPUs beyond its forwarding [CPUs] above which the trial's cost is not the DUT's alone: the
#: CPUs' own busy time exceeds the forwarding threads' by what those threads do not account (wake-ups, the idle
#: loop's exits: 0.03–0.06 CPU measured at 10–100 kframes/s), and by whatever else ran there (a test run beside
#: v6bench took 0.35 CPU and raised the cost per frame by 40 %).
OTHER_MAX = 0.2


def forwarding(shares: list[float | None], basis: str, resolution: float | None = None,
               cpus_busy: list[float | None] | None = None) -> dict[str, Any]:
    """The lab's forwarding work: ``{"share", "basis", "resolution",
    "other"}``; ``share`` is None when any router's could not be read (a
    part of the DUT unmeasured would understate its cost). ``cpus_busy``:
    where the lab reads its DUT CPUs' own busy time over the same window,
    each CPU's; ``other`` is then their sum less ``share``, the work on
    them that was not the forwarding's (else None)."""
    known = [s for s in shares if s is not None]
    total = round(sum(known), 6) if shares and len(known) == len(shares) else None
    busy = [c for c in cpus_busy or () if c is not None]
    other = round(sum(busy) - total, 4) if total is not None and cpus_busy and len(busy) == len(cpus_busy) else None
    return {"share": total, "basis": basis, "resolution": resolution, "other": other}


def ns_per_frame(work: dict[str, Any] | None, rx_frames: int, traffic_s: float) -> dict[str, Any]:
    """The DUT's CPU time per frame it forwarded [ns]: its forwarding
    share over the traffic window × 10⁹ / the frames received per second
    of traffic (the window and the traffic are the same seconds, the rate
    constant). Returns ``{"ns_per_frame", "resolution_ns", "basis",
    "not_the_duts"}``, None values where the share or the traffic is
    missing; ``not_the_duts`` says why the figure is not the DUT's alone
    (more than :data:`OTHER_MAX` CPU of other work on its CPUs), and the
    report then leaves it out."""
    out = {"ns_per_frame": None, "resolution_ns": None, "basis": (work or {}).get("basis"), "not_the_duts": None}
    if work and work.get("other") is not None and work["other"] > OTHER_MAX:
        out["not_the_duts"] = (f"the DUT's CPUs were busy {work['other']:.2f} CPU beyond its forwarding: something "
                               "else ran there")
    if not work or work.get("share") is None or rx_frames <= 0 or traffic_s <= 0:
        return out
    rx_fps = rx_frames / traffic_s
    out["ns_per_frame"] = round(work["share"] * 1e9 / rx_fps, 2)
    if work.get("resolution") is not None:
        out["resolution_ns"] = round(work["resolution"] * 1e9 / rx_fps, 2)
    return out


#: Time after a run starts before its CPU counts [ns]: the frames of the run before may still be in the router
#: (a frame's delay is 20–40 µs on the emulated lab; a veth queues at most 256 frames: 4 ms at 60 kframes/s).
RUN_GUARD_NS = 5_000_000


def _runs_port(eng: dict[str, Any]) -> dict[str, Any] | None:
    """The one sending port of a trial sent in runs (its ``tx.run_frames`` set), else None."""
    senders = [p for p in eng.get("ports", []) if (p.get("tx") or {}).get("run_frames")]
    return senders[0] if len(senders) == 1 else None


def runs(eng: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The runs of a trial sent in runs, from the engine's result, as the
    stretches in which the DUT's CPU counts for a stream:
    ``(from_ns, to_ns, stream_name)`` each (CLOCK_REALTIME), in order.

    One sending port whose ``tx.run_frames`` is set: its frame k is due at
    ``started_at_unix_ns`` + k / ``intended_fps``, its streams (in the
    spec's order) in runs of their share units × ``run_frames``
    (core/frames.run_shares). Where the sender slipped (a stall moves the
    rest of its schedule later, ``tx.slipped_ns`` in all) each run may
    have begun up to that much later: a run counts from
    :data:`RUN_GUARD_NS` + the slipped time after its start by the
    schedule, to its end by the schedule. Empty when the trial was not in
    runs, had more than one sending port or a rate step, or slipped more
    than a quarter of a run."""
    port = _runs_port(eng)
    if port is None or port["tx"].get("rate_step"):
        return []
    tx = port["tx"]
    streams = [s for s in eng["streams"] if s["tx_port"] == port["name"]]
    run, fps, total, t0 = tx["run_frames"], tx["intended_fps"], tx["planned_frames"], eng["started_at_unix_ns"]
    lengths = [u * run for u in frames.run_shares([s["share"] for s in streams])]
    slipped_ns = tx.get("slipped_ns") or 0
    if slipped_ns > min(lengths) * 1e9 / fps / 4:
        return []
    out, k = [], 0
    while k < total:
        for s, n in zip(streams, lengths):
            if k >= total:
                break
            start_ns, end_ns = t0 + round(k * 1e9 / fps), t0 + round(min(k + n, total) * 1e9 / fps)
            if start_ns + RUN_GUARD_NS + slipped_ns < end_ns:
                out.append((start_ns + RUN_GUARD_NS + slipped_ns, end_ns, s["name"]))
            k += n
    return out


def runs_work(steps: list[tuple[int, int, int | None]], runs_: list[tuple[int, int, str]]) -> dict[str, Any]:
    """The forwarding threads' run time per stream over the sampler's
    ``steps`` (``(from_ns, to_ns, busy_ns)``, :meth:`.cpu_window.Sampler.steps`)
    that lie inside one of ``runs_`` (:func:`runs`):
    ``{stream_name: {"busy_ns", "window_ns", "steps"}}``; steps across a
    run's ends, or unread, are left out."""
    out: dict[str, dict[str, Any]] = {}
    i = 0
    for ta, tb, busy in steps:
        while i < len(runs_) and runs_[i][1] < tb:
            i += 1
        if i == len(runs_):
            break
        start, _, name = runs_[i]
        if busy is None or ta < start:
            continue
        w = out.setdefault(name, {"busy_ns": 0, "window_ns": 0, "steps": 0})
        w["busy_ns"] += busy
        w["window_ns"] += tb - ta
        w["steps"] += 1
    return out


def with_runs(work: dict[str, Any], eng: dict[str, Any], sampler: Sampler) -> dict[str, Any]:
    """``work`` (:func:`forwarding`) with, for a trial sent in runs whose
    forwarding was read, ``runs``: the work of each stream's runs from the
    lab's CPU ``sampler`` (:meth:`.cpu_window.Sampler.steps` over the
    traffic window, :func:`runs_work`). Every lab whose sampler reads its
    forwarding threads while the engine runs (namespace routers' NAPI
    threads, VM routers' QEMU threads) calls this; ``work`` as given
    otherwise."""
    runs_ = runs(eng)
    if not runs_ or work.get("share") is None:
        return work
    start_ns = eng["started_at_unix_ns"]
    return {**work, "runs": runs_work(sampler.steps(start_ns, start_ns + round(eng["traffic_s"] * 1e9)), runs_)}


def per_family(work: dict[str, Any] | None, eng: dict[str, Any]) -> dict[str, Any] | None:
    """The DUT's CPU time per frame in a trial sent in runs [ns], of each
    family and of each stream: ``{"4": ns, "6": ns, "streams": {name:
    ns}}``; each its runs' forwarding share × 10⁹ / the frames of them the
    DUT delivered per second of those runs (the port's rate × received /
    sent). None where the trial was not in runs or a family has no step
    inside its runs (a stream without one: left out of ``streams``)."""
    port = _runs_port(eng)
    if not work or port is None:
        return None
    fps = port["tx"]["intended_fps"]

    def ns(streams: list[dict[str, Any]]) -> float | None:
        busy = sum(work[s["name"]]["busy_ns"] for s in streams if s["name"] in work)
        window = sum(work[s["name"]]["window_ns"] for s in streams if s["name"] in work)
        sent, got = sum(s["tx_frames"] for s in streams), sum(s["rx_frames"] for s in streams)
        return round(busy / window * 1e9 / (fps * got / sent), 2) if window and sent and got else None

    mine = [s for s in eng["streams"] if s["tx_port"] == port["name"]]
    out: dict[str, Any] = {v: ns([s for s in mine if str(s["ip_version"]) == v]) for v in ("4", "6")}
    if None in out.values():
        return None
    out["streams"] = {s["name"]: x for s in mine if (x := ns([s])) is not None}
    return out
