"""What a report compares: two series of one value per repetition each
(:class:`Pair`), with what a value is (and so which estimator suits it)
and how many values the tester limited and were left out; and a trial's
values as the comparisons read them (its median and 99th-percentile
delay per family, its DUT cost per frame, a search's value).

Two kinds of comparison are built from them: IPv4 against IPv6
(:mod:`.family_pairs`) and scenarios against their reference
(:mod:`.scenario_pairs`). Tester-limited values never enter a sample
(docs/methods.md, "Tester-limited trials"), nor do the delays of suspect
trials (frames timed before they were sent); both are counted in
``excluded``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .data import TestData
from .group import measured


@dataclass
class Pair:
    """Two series to compare: ``a`` the reference, ``b`` against it.
    ``estimator``: "mean" (roughly symmetric values) or "location"
    (skewed ones); ``higher``: what a larger value means."""

    metric: str
    point: str
    higher: str
    estimator: str
    name_a: str = "IPv4"
    name_b: str = "IPv6"
    resolution_pct: float | None = None
    values: dict[str, list[float]] = field(default_factory=dict)
    #: values left out (tester-limited, lower bounds, suspect delays), in all and per series where known
    excluded: int = 0
    excluded_by: dict[str, int] = field(default_factory=dict)
    #: B is an A/A control of A (``control_of``): its verdict is corrected among the controls (:func:`.stats.decide`).
    control: bool = False
    #: How A and B were measured (:data:`.stats.DESIGNS`): "paired", in the same trials (``values[name_a][i]``
    #: and ``values[name_b][i]`` are one trial's, :meth:`add_pair`, compared pair by pair,
    #: :func:`.stats.compare_paired`); "mix regression", trials at several IPv6 shares in blocks
    #: (:meth:`add_share`, :func:`.regression.mix_slope`).
    design: str = "unpaired"
    #: A mix regression's trials: (block, IPv6 share, value).
    observations: list[tuple[int, float, float]] = field(default_factory=list)
    #: Searched values at the path's line rate, per series (:func:`at_line_rate`): the link's, not the DUT's.
    line_limited: dict[str, int] = field(default_factory=dict)
    #: The lab build (campaign visit) of each value, per series, where the series come from labs built apart
    #: (scenarios): the comparison's unit is then the build (report/builds.py), not the trial.
    builds: dict[str, list[str]] = field(default_factory=dict)
    #: Per series, the loss ratio of each compared trial whose compared streams lost frames (:meth:`note_loss`).
    lossy: dict[str, list[float]] = field(default_factory=dict)

    @property
    def paired(self) -> bool:
        return self.design == "paired"

    def add(self, name: str, value: float | None, build: str | None = None, streams: list[dict] | None = None) -> None:
        """One value of series ``name``; ``build``: the lab build it was
        measured on, where the series are compared across builds;
        ``streams``: a delay's streams, whose loss is noted (:meth:`note_loss`)."""
        if self.design != "unpaired":
            raise ValueError(f"{self.key}: a {self.design} comparison does not take values one at a time "
                             f"(add_pair, add_share)")
        if value is not None:
            self.values.setdefault(name, []).append(value)
            if build is not None:
                self.builds.setdefault(name, []).append(build)
            self.note_loss(name, streams or [])

    def add_searched(self, name: str, value: float | None, lower_bound: bool, at_line: bool,
                     build: str | None = None) -> None:
        """A search's value: a lower bound is left out (counted in
        ``excluded``); a value at the line rate is kept for the description
        and counted in ``line_limited`` (no verdict on the DUT from it)."""
        if lower_bound:
            self.exclude(1, name)
            return
        if at_line:
            self.line_limited[name] = self.line_limited.get(name, 0) + 1
        self.add(name, value, build)

    def add_share(self, block: int, ipv6_share: float, value: float | None) -> None:
        """One trial of a mix regression: its repetition block, its mix's
        IPv6 share (0 … 1) and its value (None: not measured, left out).
        The pure mixes' values are kept as A's and B's series too."""
        if self.design != "mix regression":
            raise ValueError(f"{self.key}: only a mix regression takes values by IPv6 share (add_share)")
        if value is None:
            self.exclude()
            return
        self.observations.append((block, ipv6_share, value))
        if ipv6_share in (0.0, 1.0):
            self.values.setdefault(self.name_a if ipv6_share == 0.0 else self.name_b, []).append(value)

    def add_pair(self, a: float | None, b: float | None,
                 streams: tuple[list[dict], list[dict]] | None = None) -> None:
        """One trial's values of A and B; a trial that measured only one of
        them is left out (counted in ``excluded``, against the side it lacks);
        ``streams``: A's and B's delay streams, whose loss is noted (:meth:`note_loss`)."""
        if not self.paired:
            raise ValueError(f"{self.key}: a {self.design} comparison does not take values a trial at a time "
                             "(add_pair)")
        if a is None or b is None:
            self.exclude(1, self.name_a if a is None else self.name_b)
            return
        self.values.setdefault(self.name_a, []).append(a)
        self.values.setdefault(self.name_b, []).append(b)
        for name, kept in zip((self.name_a, self.name_b), streams or ()):
            self.note_loss(name, kept)

    def note_loss(self, name: str, streams: list[dict]) -> None:
        """Notes the loss of the streams a trial's value of series ``name``
        came from, if they lost frames: the load was beyond the DUT's
        throughput, where RFC 2544 §26.2 measures latency, and a delay
        there may be its full queue's (:func:`loss_caveat`)."""
        ratio = streams_loss_ratio(streams)
        if ratio:
            self.lossy.setdefault(name, []).append(ratio)

    def exclude(self, n: int = 1, name: str | None = None) -> None:
        """Counts ``n`` values left out, of series ``name`` where one series is theirs."""
        self.excluded += n
        if name is not None:
            self.excluded_by[name] = self.excluded_by.get(name, 0) + n

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.metric, self.point, self.name_b)


def streams_loss_ratio(streams: list[dict]) -> float | None:
    """The share of the frames ``streams`` sent that did not arrive (None: nothing sent)."""
    sent = sum(s.get("tx_frames", 0) for s in streams)
    return sum(s.get("lost_frames", 0) for s in streams) / sent if sent else None


def loss_caveat(p: Pair) -> str | None:
    """What a delay comparison's reader must know when the DUT lost frames
    in its trials: which series, in how many trials, how much at worst
    (None where no compared trial lost any)."""
    if not p.lossy:
        return None
    seen = ", ".join(f"{name} in {len(r)} trial{'s' if len(r) > 1 else ''} (up to {100 * max(r):.2g} %)"
                     for name, r in p.lossy.items())
    return (f"the DUT lost frames: {seen}, so the load is beyond its throughput, where RFC 2544 §26.2 "
            "measures latency (a queue that overflows adds its own delay)")


def pair_in(pairs: dict, metric: str, point: str, higher: str, estimator: str, **kw) -> Pair:
    key = (metric, point)
    if key not in pairs:
        pairs[key] = Pair(metric, point, higher, estimator, **kw)
    return pairs[key]


def _trial_quantile_ns(streams: list[dict], quantile: str) -> float | None:
    """A trial's ``quantile`` (a key of the engine's latency summary) for one
    family: its streams' own, averaged (a bidirectional trial has one stream each way)."""
    q = [s["latency_ns"][quantile] for s in streams if s.get("latency_ns")]
    return sum(q) / len(q) if q else None


def us(ns: float | None) -> float | None:
    """A delay in µs, as comparisons state them (None: not measured)."""
    return None if ns is None else ns / 1e3


def trial_median_ns(streams: list[dict]) -> float | None:
    """A trial's median delay for one family (:func:`_trial_quantile_ns`)."""
    return _trial_quantile_ns(streams, "p50")


def trial_p99_ns(streams: list[dict]) -> float | None:
    """A trial's 99th-percentile delay for one family (:func:`_trial_quantile_ns`)."""
    return _trial_quantile_ns(streams, "p99")


def load_trials(t: TestData, row: dict) -> list[dict]:
    """A latency test's trials at one of its loads, the tester not limiting
    and no frame timed "before" it was sent (``suspect_reasons``)."""
    return [x for x in measured(t, row["load_fps"]) if not (x.get("result") or {}).get("suspect_reasons")] \
        if row["load_fps"] else []


def suspect_trials(t: TestData, row: dict) -> list[dict]:
    """The trials :func:`load_trials` leaves out for their delays alone."""
    return [x for x in measured(t, row["load_fps"]) if (x.get("result") or {}).get("suspect_reasons")] \
        if row["load_fps"] else []


#: What a paired latency test compares per trial: metric, the family's value [µs] from its streams.
PAIRED_LATENCY = (("median latency [µs]", trial_median_ns), ("p99 latency [µs]", trial_p99_ns))


def trial_runs_cost_ns(trial: dict) -> dict | None:
    """A trial sent in runs: the DUT's CPU time per frame of each family and
    stream inside it [ns] (``dut_cost.by_family``, lab/machine/cost.per_family), where
    read and the DUT's alone; else None."""
    c = ((trial.get("result") or {}).get("dut_cost")) or {}
    return None if c.get("not_the_duts") else c.get("by_family")


def trial_cost_ns(trial: dict) -> float | None:
    """The DUT's CPU time per frame it forwarded in a trial [ns] (``dut_cost``, lab/machine/cost.py), where read and
    the DUT's alone (not ``not_the_duts``: other work on its CPUs)."""
    c = ((trial.get("result") or {}).get("dut_cost")) or {}
    return None if c.get("not_the_duts") else c.get("ns_per_frame")


def delay_where(traffic: str, direction: str, frame_size: int, load: str) -> str:
    """A delay histogram's point in words."""
    return " ".join(x for x in (f"{frame_size} B", traffic.strip(), "bi" if direction == "bi" else "", f"load {load}") if x)


def search_value(t: TestData, name: str) -> tuple[float | None, bool, bool]:
    """A searched value of a test's result (``result[name]``, a throughput
    goal or a connection metric): (value, whether it is only a lower bound,
    whether it is a throughput at the path's line rate, :func:`at_line_rate`)."""
    r = t.result.get(name) or {}
    value = r.get("fps", r.get("value"))
    at_line = t.kind == "throughput" and at_line_rate(value, t.line_fps, t.params["params"].get("resolution", 0))
    return value, bool(r.get("is_lower_bound")), at_line


def at_line_rate(value_fps: float | None, line_fps: float | None, resolution: float) -> bool:
    """Whether a throughput [frames/s per direction] is the path's line
    rate ``line_fps`` to the search's ``resolution`` (a ratio): a search
    that passed at (or within its resolution of) the line rate found no
    load the DUT could not forward, so it measured the link, not the DUT
    (RFC 2544 §26.1's maximum; docs/report.md, "Line-limited results").
    False where the line rate is unknown."""
    if value_fps is None or not line_fps:
        return False
    return value_fps >= line_fps * (1 - max(resolution, 1e-9))


#: What each searching kind compares: (result key, metric, what a larger value means).
SEARCHED = {
    "throughput": (("ndr", "throughput NDR [fps]", "higher"), ("pdr", "throughput PDR [fps]", "higher")),
    "connections": (("capacity", "table capacity [connections]", "higher"),
                    ("establishment_rate", "connection establishment rate [connections/s]", "higher")),
}
