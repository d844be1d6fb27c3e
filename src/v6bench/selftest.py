"""``v6bench selftest``: what the tester itself can do, on the
back-to-back topology (``p2p``: two tester ports joined by one veth, no
DUT), so that no result ever reports the tester's limit as the DUT's.

Per frame size: the tester's capacity, the highest rate it sends and
receives without loss (binary search from the rate its senders reach at
the link's, 1-s trials with 0.2 s of drain, 5 % resolution, IPv4
frames; any loss or ``tester_limited`` trial on p2p is the tester's; no
pause after learning, as there is no DUT to settle). A trial spoiled by
a passing stall (the host took a CPU, the sender paused) is run again, as
in every method (:mod:`.methods.retry`): a load fails only if all its
attempts do, so one stall does not set the capacity, and each later
trial still answers for its own stalls. A load whose senders fell short
of it over their whole sending time is beyond the tester and not
repeated (:data:`SHORTFALL`). Its
latency floor and error bar: five 1-s trials at a low load (10,000
frames/s or a tenth of the capacity, whichever is lower), floor = median
of the trials' median latency, error bar = median of the trials' latency
standard deviation (seed 003 calibrated its capture host so: 6 µs); a
latency trial a stall spoiled is run again, up to
:data:`MAX_LATENCY_ATTEMPTS` in all (``latency_attempts``). The
same trials check the frames' transmit stamps against the kernel's
software transmit stamps (docs/engine-spec.md, "Transmit timestamps"):
``tx_stamp_lead_p50_ns``/``_p99_ns``, the medians over the trials of how
much earlier than the driver's hand-over a frame was stamped, the part of
the floor the stamping method adds.

The result is stored in the results database; every run records the
latest one, and a trial above 90 % of the capacity at its frame size is
``tester_limited`` (:mod:`v6bench.trial.tester_limits`). :func:`stale` says
why a stored self-test no longer describes this tester: another kernel,
engine build, CPU arrangement, or frames larger than its link carried.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import statistics
import time
from dataclasses import replace
from typing import Callable

from . import engine
from .lab import interface
from .lab.machine import wakeful
from .lab.model.spec import LabSpec
from .lab.model import cpus
from .lab.model.mtu import Mtus
from .lab.model.site import Site
from .methods import binary_search
from .core.tester import Measurement, Tester
from .methods.retry import Retrying
from .core.rates import ETHERNET_BYTES, line_rate_fps
from .trial import packet_io
from .trial.lab_tester import LabTester
from .core.frames import Mix
from .core import machine as host_machine

LINK_BPS = 10e9  # nominal speed of the p2p link: high enough not to cap the search
RESOLUTION = 0.05
TRIAL_S = 1.0
LOW_LOAD_FPS = 10_000.0
LATENCY_TRIALS = 5
#: Latency trials the self-test runs at most to keep LATENCY_TRIALS the tester did not spoil.
MAX_LATENCY_ATTEMPTS = 2 * LATENCY_TRIALS
#: The pause after learning [s]: none, for there is no DUT on p2p whose tables could still be
#: settling (each port's next hop is the other port, which the engine itself answers).
SETTLE_S = 0.0
#: The wait after the last frame for frames still on the way [s]: no DUT holds any (a frame crosses the
#: p2p veth in microseconds and the receive ring, 4,096 frames, empties in about 10 ms at the tester's
#: capacity), so a fifth of a second, not RFC 2544 §23's 2 s for a DUT, which the methods keep.
DRAIN_S = 0.2


def run(site: Site, frame_sizes: tuple[int, ...], arrangement: str | None, progress: Callable[[str], None],
        mtu: int = 1500) -> dict:
    """Measures the tester at ``frame_sizes`` on a p2p link of at least
    ``mtu`` bytes (and at least the largest frame's)."""
    started = time.time()
    capacity = {}
    mtu = max(mtu, p2p_mtu(frame_sizes))
    spec = LabSpec(topology="p2p", link_speed_bps=LINK_BPS, mtu=Mtus(mtu), cpu_arrangement=arrangement)
    with interface.for_trial(site, spec, None) as lab:
        for size in frame_sizes:
            t = LabTester(site, lab, Mix(100, 0), size, drain_s=DRAIN_S, settle_s=SETTLE_S)
            r, attempts = search_capacity(t, size)
            low = min(LOW_LOAD_FPS, r.throughput_fps / 10) if r.throughput_fps else LOW_LOAD_FPS / 10
            lats, leads, used = [], [], set()
            latency_attempts = 0
            # A trial the tester spoiled (a host stall: tester_limited) is run again, up to as many times more.
            while len(lats) < LATENCY_TRIALS and latency_attempts < MAX_LATENCY_ATTEMPTS:
                latency_attempts += 1
                m = t.stamp_check(TRIAL_S, low)
                used |= {p.get("backend") for p in m.detail["engine"]["ports"]}
                if not m.tester_limited and m.streams and m.streams[0]["latency_ns"]:
                    lats.append(m.streams[0]["latency_ns"])
                    leads += [p["tx"]["tx_stamp_check"] for p in m.detail["engine"]["ports"]
                              if (p.get("tx") or {}).get("tx_stamp_check")]
            capacity[str(size)] = {
                "capacity_fps": r.throughput_fps or None,
                "capacity_is_link_rate": r.throughput_fps >= line_rate_fps(LINK_BPS, size),
                "lost_or_limited_above_fps": r.failed_fps if r.failed_fps is not None else r.tester_limited_fps,
                "search_trials": len(r.trials),
                "search_attempts": attempts,
                "latency_load_fps": low,
                "latency_floor_ns": statistics.median(x["p50"] for x in lats) if lats else None,
                "latency_stddev_ns": statistics.median(x["stddev"] for x in lats) if lats else None,
                "latency_min_ns": min((x["min"] for x in lats), default=None),
                "latency_trials": len(lats),
                "latency_attempts": latency_attempts,
                "tx_stamp_lead_p50_ns": statistics.median(x["lag_p50_ns"] for x in leads) if leads else None,
                "tx_stamp_lead_p99_ns": statistics.median(x["lag_p99_ns"] for x in leads) if leads else None,
                "tx_stamp_checked_frames": sum(x["stamps"] for x in leads),
                "tester_backend": "+".join(sorted(b for b in used if b)) or None,
            }
            c = capacity[str(size)]
            lead = (f" (of which {c['tx_stamp_lead_p50_ns'] / 1e3:.1f} µs from stamping to the driver)"
                    if c["tx_stamp_lead_p50_ns"] is not None else "")
            progress(f"  {size} B: capacity {c['capacity_fps'] or 0:,.0f} frames/s, latency floor "
                     f"{(c['latency_floor_ns'] or 0) / 1e3:.1f} µs ± {(c['latency_stddev_ns'] or 0) / 1e3:.1f} µs{lead}")
        plan = lab.cpu_plan.to_json()
    return {"kind": "v6bench-selftest", "version": 1, "created_at_unix_s": started, "topology": "p2p",
            "cpu_plan": plan, "mtu": mtu, "trial_duration_s": TRIAL_S, "resolution": RESOLUTION, "mix": "100/0",
            "learning_settle_s": SETTLE_S, "drain_s": DRAIN_S,
            "capacity": capacity, "environment": machine()}


#: A self-test trial whose senders achieved less than this share of their
#: rate over their whole sending time was beyond the tester, not stalled: a
#: passing stall of the host pauses a sender for a few milliseconds (the
#: schedule slips, docs/engine-spec.md, "After a stall"), one too slow for the
#: rate keeps pausing, so such a trial is not repeated.
SHORTFALL = 0.95


#: How many times the capacity search repeats a spoiled trial: fewer than the methods'
#: (:data:`.methods.retry.RETRIES`), as at the loads just above the capacity every attempt stalls.
RETRIES = 2


def sending_ratio(m: Measurement) -> float:
    """The trial's achieved to intended rate, where a port's achieved rate is
    taken over its whole sending time, the slipped pauses included (which
    the engine's ``offered_fps`` leaves out): the lowest over the sending
    ports and the trial's own ``offered_load_fps``."""
    ratios = [m.offered_load_fps / m.intended_load_fps] if m.intended_load_fps > 0 else []
    for port in (m.detail or {}).get("engine", {}).get("ports", []):
        tx = port.get("tx") or {}
        frames, offered, intended = tx.get("tx_frames") or 0, tx.get("offered_fps"), tx.get("intended_fps")
        if frames > 1 and offered and intended:
            sending_s = (frames - 1) / offered + (tx.get("slipped_ns") or 0) / 1e9
            ratios.append((frames - 1) / sending_s / intended)
    return min(ratios, default=1.0)


class _Beyond:
    """The p2p tester, with a trial whose senders fell short of their rate
    marked ``tester_over_capacity`` (:data:`SHORTFALL`, :func:`sending_ratio`)."""

    def __init__(self, tester: Tester) -> None:
        self.tester, self.line_fps = tester, tester.line_fps

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        m = self.tester.measure(duration_s, load_fps)
        if m.tester_limited and sending_ratio(m) < SHORTFALL:
            return replace(m, detail={**(m.detail or {}), "tester_over_capacity": True})
        return m


#: The capacity search's trials at most, its first at the p2p link's rate included.
MAX_SEARCH_TRIALS = 14


def search_capacity(tester: Tester, frame_size: int) -> tuple[binary_search.SearchResult, int]:
    """The capacity search at ``frame_size`` on ``tester`` (the p2p link):
    the binary search's result, each load decided by up to
    1 + :data:`RETRIES` attempts (one when the sender fell short of the
    rate, :data:`SHORTFALL`), and the trials it ran. The first trial is at
    the link's rate (10 Gb/s); where the senders fell short of it, the
    search goes on from the rate they achieved (:func:`sending_ratio`), the
    most they can send, instead of halving down from the link's rate
    (128-B frames: 8.4 million frames/s against a tester's few hundred
    thousand, four trials beyond reach). The result is read over every
    trial, the first included (:meth:`binary_search.Memo.relevant`)."""
    retrying = Retrying(_Beyond(tester), RETRIES)
    memo = binary_search.Memo(retrying)
    line_fps = line_rate_fps(LINK_BPS, frame_size)
    first = memo.measure(TRIAL_S, line_fps)
    reached_fps = sending_ratio(first) * line_fps if first.tester_over_capacity else None
    binary_search.search(memo, TRIAL_S, line_fps, RESOLUTION, max_trials=MAX_SEARCH_TRIALS - (reached_fps is not None),
                         start_fps=reached_fps)
    return memo.relevant(0.0), retrying.attempts


#: How many of the newest stored self-tests :func:`ensure` looks through for one that fits.
RECENT = 8

#: When a command measures the tester before it runs trials.
WHEN = ("if-stale", "always", "never")


def ensure(site: Site, store, when: str, selftest_sizes: tuple[int, ...], frame_sizes: tuple[int, ...], mtu: int,
           arrangement: str | None, progress: Callable[[str], None]) -> tuple[int, dict] | None:
    """The self-test that trials of ``frame_sizes`` on links of up to ``mtu``
    bytes will be checked against, as ``(id, result)`` from ``store``
    (:class:`~v6bench.store.db.Store`): the stored one, unless ``when`` is
    ``if-stale`` (the default) and it is missing or :func:`stale`, or
    ``always``; then a new one is measured at ``selftest_sizes`` (and the
    largest frame size, if larger), stored, and said on ``progress``.
    ``never``: the stored one as it is, or None. "The stored one" is the
    newest that is not stale among the last :data:`RECENT`, so a campaign
    whose scenarios use two CPU arrangements measures each once."""
    if when == "never":
        return store.latest_selftest()
    sizes = frame_sizes or selftest_sizes
    if when == "if-stale":
        plan, now = cpus.plan(arrangement).to_json(), machine()
        fits, recent = fitting(store, sizes, mtu, arrangement)
        if fits:
            return fits
        need = f"the stored one is stale ({stale(recent[0][1], plan, sizes, mtu, now)})" if recent else f"{store.where} holds none"
        up, _ = interface.status(site)
        if up is not None and not interface.status_record(up)["temporary"]:
            progress(f"tester self-test needed ({need}), but a lab is up ({interface.describe(up)}): these trials are NOT "
                     "checked against the tester's capacity; run `v6bench lab down` and `v6bench selftest` to fix that")
            return None
        progress(f"tester self-test needed: {need}")
    st_sizes = tuple(sorted(set(selftest_sizes) | {max(sizes)}))
    progress(f"tester self-test on p2p ({', '.join(map(str, st_sizes))} B): its capacity and latency floor")
    result = run(site, st_sizes, arrangement, progress, mtu)
    return store.add_selftest(result["environment"], result), result


def fitting(store, frame_sizes: tuple[int, ...], mtu: int, arrangement: str | None) -> tuple[tuple[int, dict] | None, list]:
    """The newest stored self-test among the last :data:`RECENT` that is
    not :func:`stale` for these trials (None if none is), and those read."""
    plan, now = cpus.plan(arrangement).to_json(), machine()
    recent = store.recent_selftests(RECENT)
    return next((x for x in recent if stale(x[1], plan, frame_sizes, mtu, now) is None), None), recent


def p2p_mtu(frame_sizes: tuple[int, ...]) -> int:
    """The p2p link's MTU for these frame sizes [bytes]: 1500, or the largest frame's IP packet."""
    return max(1500, max(frame_sizes) - ETHERNET_BYTES)


def stale(result: dict | None, cpu_plan: dict, frame_sizes: tuple[int, ...], mtu: int,
          now: dict | None = None) -> str | None:
    """Why ``result`` (a stored self-test) does not describe the tester that
    will run frames of ``frame_sizes`` on links of up to ``mtu`` bytes with
    ``cpu_plan`` (its ``to_json``) on the machine ``now`` describes
    (:func:`machine`, read here when not given); None if it does."""
    if not result:
        return "there is none"
    env, now = result.get("environment") or {}, now or machine()
    for key, what in (("kernel", "kernel"), ("engine_sha256", "engine build"), ("cpus", "CPU count"),
                      ("cpu_idle", "CPUs' idle while trials ran (lab/machine/wakeful.py)"),
                      ("tester_backend", f"tester packet I/O ({packet_io.ENV})")):
        if env.get(key) != now.get(key):
            return f"its {what} was {env.get(key)}, now {now.get(key)}"
    was = result.get("cpu_plan") or {}
    for key in ("arrangement", "tester_tx", "tester_rx", "dut"):
        if _plain(was.get(key)) != _plain(cpu_plan.get(key)):
            return f"its CPU arrangement was {was.get('arrangement')} {was.get(key)!r} for {key}, now {cpu_plan.get(key)!r}"
    if result.get("mtu", 1500) < max(mtu, p2p_mtu(frame_sizes)):
        return f"its link MTU was {result.get('mtu', 1500)} bytes, the frames now need {max(mtu, p2p_mtu(frame_sizes))}"
    return None


def _plain(v):
    return list(v) if isinstance(v, (list, tuple)) else v


@functools.cache  # the binary does not change under a running command; a run asks once per scenario visit
def _engine_sha256() -> str | None:
    return engine.program_sha256()


@functools.cache  # the machine does not change under a running command
def _host() -> dict:
    return host_machine.read()


def machine() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    return {"kernel": os.uname().release, "machine": platform.machine(), "cpu_model": model, "cpus": os.cpu_count(),
            "host": _host(), "python": platform.python_version(), "engine": engine.version(), "engine_sha256": _engine_sha256(),
            "cpu_idle": "poll" if wakeful.available() else "os", "tester_backend": packet_io.chosen()}
