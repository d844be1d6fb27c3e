"""The DUT's forwarding work over a trial's traffic, in one shape for every
kind of lab: from it the trial's cost per frame (``trial/runner.py``).

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
"""

from __future__ import annotations


#: Work on the DUT's CPUs beyond its forwarding [CPUs] above which the trial's cost is not the DUT's alone: the
#: CPUs' own busy time exceeds the forwarding threads' by what those threads do not account (wake-ups, the idle
#: loop's exits: 0.03–0.06 CPU measured at 10–100 kframes/s), and by whatever else ran there (a test run beside
#: v6bench took 0.35 CPU and raised the cost per frame by 40 %).
OTHER_MAX = 0.2


def forwarding(shares: list[float | None], basis: str, resolution: float | None = None,
               cpus_busy: list[float | None] | None = None) -> dict:
    """The lab's forwarding work: ``{"share", "basis", "resolution",
    "other"}``; ``share`` is None when any router's could not be read (a
    part of the DUT unmeasured would understate its cost). ``cpus_busy``:
    where the lab reads its DUT CPUs' own busy time over the same window,
    each CPU's; ``other`` is then their sum less ``share``, the work on
    them that was not the forwarding's (else None)."""
    total = None if not shares or any(s is None for s in shares) else round(sum(shares), 6)
    other = None
    if total is not None and cpus_busy and all(c is not None for c in cpus_busy):
        other = round(sum(cpus_busy) - total, 4)
    return {"share": total, "basis": basis, "resolution": resolution, "other": other}


def ns_per_frame(work: dict | None, rx_frames: int, traffic_s: float) -> dict:
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
