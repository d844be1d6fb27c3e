"""What a report compares: two series of one value per repetition each,
with what a value is (and so which estimator suits it) and how many values
the tester limited and were left out.

- IPv4 against IPv6 (:func:`families`): a throughput test's NDR and PDR
  (one value per repeated search; a search capped by the tester is a lower
  bound and left out), a latency trial's median delay per family (the
  trial is the unit; means are dominated by a shared machine's
  scheduling stalls and are described, not compared), a reset's reset
  time, RFC 9693's connection metrics (IPv4 through NAT44 against IPv6
  through stateful NAT64), a host-stack run's result. IPv4 is the 100/0 mix's value and IPv6
  the 0/100 mix's at the same point (unpaired); in a mixed stream (50/50,
  …) both families are in every trial, and a latency test's median and
  99th-percentile delays are compared trial by trial (``paired``: the
  trial's IPv6 value against its IPv4 value).
- Scenarios against their reference (the scenario they are an A/A
  control of, else the run's first): the searched values, throughput and
  RFC 9693's connection metrics (:func:`scenario_searches`)
  and, as network types (:func:`network_types`, seed 003 Table 3), the
  per-trial median delay of each scenario and family, where the scenario
  differs (a family against the other in one scenario is an IPv4/IPv6
  comparison already: stating it twice would count it twice in the
  correction).

Tester-limited values never enter a sample (DEVELOPERS.md), nor do the
delays of suspect trials (frames timed before they were sent); both are
counted in ``excluded``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..core.frames import flow_of, parse_mix

from .data import RunData, TestData
from .group import by, measured, series_key
from .group import families as trial_families


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

    @property
    def paired(self) -> bool:
        return self.design == "paired"

    def add(self, name: str, value: float | None) -> None:
        if self.design != "unpaired":
            raise ValueError(f"{self.key}: a {self.design} comparison does not take values one at a time "
                             f"(add_pair, add_share)")
        if value is not None:
            self.values.setdefault(name, []).append(value)

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

    def add_pair(self, a: float | None, b: float | None) -> None:
        """One trial's values of A and B; a trial that measured only one of
        them is left out (counted in ``excluded``, against the side it lacks)."""
        if not self.paired:
            raise ValueError(f"{self.key}: a {self.design} comparison does not take values a trial at a time "
                             "(add_pair)")
        if a is None or b is None:
            self.exclude(1, self.name_a if a is None else self.name_b)
            return
        self.values.setdefault(self.name_a, []).append(a)
        self.values.setdefault(self.name_b, []).append(b)

    def exclude(self, n: int = 1, name: str | None = None) -> None:
        """Counts ``n`` values left out, of series ``name`` where one series is theirs."""
        self.excluded += n
        if name is not None:
            self.excluded_by[name] = self.excluded_by.get(name, 0) + n

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.metric, self.point, self.name_b)


def _pair(pairs: dict, metric: str, point: str, higher: str, estimator: str, **kw) -> Pair:
    key = (metric, point)
    if key not in pairs:
        pairs[key] = Pair(metric, point, higher, estimator, **kw)
    return pairs[key]


def _mixes(t: TestData) -> str:
    """Which mixes are compared: the pure mixes with each other, a mixed one within itself."""
    return "100/0 vs 0/100" if t.family else t.mix


def _trial_quantile_ns(streams: list[dict], quantile: str) -> float | None:
    """A trial's ``quantile`` (a key of the engine's latency summary) for one
    family: its streams' own, averaged (a bidirectional trial has one stream each way)."""
    q = [s["latency_ns"][quantile] for s in streams if s.get("latency_ns")]
    return sum(q) / len(q) if q else None


def _us(ns: float | None) -> float | None:
    """A delay in µs, as comparisons state them (None: not measured)."""
    return None if ns is None else ns / 1e3


def trial_median_ns(streams: list[dict]) -> float | None:
    """A trial's median delay for one family (:func:`_trial_quantile_ns`)."""
    return _trial_quantile_ns(streams, "p50")


def trial_p99_ns(streams: list[dict]) -> float | None:
    """A trial's 99th-percentile delay for one family (:func:`_trial_quantile_ns`)."""
    return _trial_quantile_ns(streams, "p99")


def network_type(t: TestData, version: int) -> str:
    """A series of the delay histograms: scenario, mixed mix if any, family."""
    return " ".join(x for x in (t.scenario, t.mix if t.mix not in ("100/0", "0/100") else "", f"IPv{version}") if x)


def load_trials(t: TestData, row: dict) -> list[dict]:
    """A latency test's trials at one of its loads, the tester not limiting
    and no frame timed "before" it was sent (``suspect_reasons``)."""
    return [x for x in measured(t, row["load_fps"]) if not (x.get("result") or {}).get("suspect_reasons")] \
        if row["load_fps"] else []


def suspect_trials(t: TestData, row: dict) -> list[dict]:
    """The trials :func:`load_trials` leaves out for their delays alone."""
    return [x for x in measured(t, row["load_fps"]) if (x.get("result") or {}).get("suspect_reasons")] \
        if row["load_fps"] else []


def _searched(data: RunData, pairs: dict) -> None:
    """Each searching kind's values (:data:`SEARCHED`), IPv4 against IPv6 at
    one point (for connections: NAT44 against stateful NAT64): one value
    per repetition; a lower bound (the tester limited the search, or it
    passed at its top) is left out."""
    for kind, goals in SEARCHED.items():
        for t in data.of(kind):
            if not t.family:
                continue
            where = t.label(mix=False, size=True) or f"{t.frame_size} B"
            for key, metric, higher in goals:
                if key not in t.result:
                    continue
                p = _pair(pairs, metric, where, higher, "mean",
                          resolution_pct=100 * t.params["params"].get("resolution", 0))
                value, lower_bound = _search_value(t.result, key)
                if lower_bound:
                    p.exclude(1, f"IPv{t.family}")
                else:
                    p.add(f"IPv{t.family}", value)


#: What a paired latency test compares per trial: metric, the family's value [µs] from its streams.
PAIRED_LATENCY = (("median latency [µs]", trial_median_ns), ("p99 latency [µs]", trial_p99_ns))


def dut_on_flow2(t: TestData) -> set[str]:
    """The IP versions whose flow 2 meets a scenario of the DUT's (its
    ACL, NAT or tunnel scoped to flow 2), as stored with the test
    (``flow2_dut``); runs stored before that key: every version in
    ``flow2`` unless the test's extension headers were the scoped part."""
    if "flow2_dut" in t.params:
        return set(t.params["flow2_dut"])
    return set() if t.params.get("ext_headers_scope") == "flow2" else set(t.params.get("flow2", {}))


def families_comparable(t: TestData) -> bool:
    """Whether a test's trials can compare IPv4 with IPv6: not where the
    DUT's scoped scenario is on one family's flow 2 only, because that
    family's flow 1 then walks what picks flow 2 out (the NAT's connection
    tracking, the tunnel's policy rule) and the other's does not: on VM
    routers such a flow 1 was 10–12 % slower than the other family's."""
    return len(dut_on_flow2(t)) != 1


def _of_flow(streams: list[dict], k: int) -> list[dict]:
    """The streams of flow ``k`` (1 or 2; core/frames.flow_of)."""
    return [s for s in streams if flow_of(s["name"]) == k]


def _flow_name(trial: dict, version: int, k: int) -> str:
    """The name of family ``version``'s flow ``k`` in a trial ("" if none):
    the key of its cost in ``dut_cost.by_family["streams"]``."""
    return next((s["name"] for s in _of_flow(trial_families(trial).get(version, []), k)), "")


def _native(t: TestData, streams: list[dict]) -> list[dict]:
    """The streams of a family that IPv4 and IPv6 are compared on: all of
    them, but in a test whose flow 2 meets a scenario (``flow2``) only
    flow 1, which is native in both families; flow 2 is compared with it
    instead (:func:`flow_pairs`). Otherwise IPv4 against IPv6 would weigh
    a tunnel, the NAT or a header that only one family's flow 2 meets."""
    return _of_flow(streams, 1) if t.params.get("flow2") else streams


def _latency(data: RunData, pairs: dict) -> None:
    for t in data.of("latency"):
        for row in t.result["loads"]:
            point = f"{t.label(mix=False, size=True)} at {row['load']} ({_mixes(t)})".strip()
            if t.params.get("flow2"):
                point += ", flow 1 of each family"
            left_out = row.get("tester_limited_trials", 0) + len(suspect_trials(t, row))
            if t.family is None:  # both families in every trial: compared trial by trial
                if not families_comparable(t):
                    continue
                for metric, value_ns in PAIRED_LATENCY:
                    p = _pair(pairs, metric, point, "slower", "location", design="paired")
                    p.exclude(left_out)
                    for trial in load_trials(t, row):
                        fam = trial_families(trial)
                        a, b = (value_ns(_native(t, fam.get(v, []))) for v in (4, 6))
                        p.add_pair(_us(a), _us(b))
                _runs_cost(t, pairs, point, left_out, load_trials(t, row))
                continue
            p = _pair(pairs, "median latency [µs]", point, "slower", "location")
            p.exclude(left_out, f"IPv{t.family}")
            for trial in load_trials(t, row):
                m = trial_median_ns(trial_families(trial).get(t.family, []))
                p.add(f"IPv{t.family}", _us(m))


def trial_runs_cost_ns(trial: dict) -> dict | None:
    """A trial sent in runs: the DUT's CPU time per frame of each family and
    stream inside it [ns] (``dut_cost.by_family``, lab/cost.per_family), where
    read and the DUT's alone; else None."""
    c = ((trial.get("result") or {}).get("dut_cost")) or {}
    return None if c.get("not_the_duts") else c.get("by_family")


def _runs_cost(t: TestData, pairs: dict, point: str, left_out: int, trials: list[dict]) -> None:
    """The DUT's cost per frame of IPv4 against IPv6 inside each trial sent
    in runs (paired, as the delays; flow 1 of each where flow 2 meets a
    scenario, :func:`_native`): nothing where no trial was."""
    costs = [trial_runs_cost_ns(x) for x in trials]
    if all(c is None for c in costs):
        return
    p = _pair(pairs, "cost per frame [ns]", point, "more", "location", design="paired")
    p.exclude(left_out)
    for trial, c in zip(trials, costs):
        if t.params.get("flow2"):
            p.add_pair(*((c or {}).get("streams", {}).get(_flow_name(trial, v, 1)) for v in (4, 6)))
        else:
            p.add_pair((c or {}).get("4"), (c or {}).get("6"))


def trial_cost_ns(trial: dict) -> float | None:
    """The DUT's CPU time per frame it forwarded in a trial [ns] (``dut_cost``, lab/emulated/cost.py), where read and
    the DUT's alone (not ``not_the_duts``: other work on its CPUs)."""
    c = ((trial.get("result") or {}).get("dut_cost")) or {}
    return None if c.get("not_the_duts") else c.get("ns_per_frame")


def _cost(data: RunData, pairs: dict) -> None:
    """The DUT's cost per frame against the IPv6 share, wherever one test
    definition ran two shares or more at the same fixed load (a load given
    as a rate; a throughput load differs from mix to mix): each trial's
    cost, its repetition the block (:func:`.regression.mix_slope`)."""
    for _, ts in by(data.of("latency"), lambda t: (t.label(mix=False, size=True),
                                                    json.dumps(t.params.get("params"), sort_keys=True))).items():
        rows = by(((t, row) for t in ts for row in t.result["loads"] if row["load_fps"]),
                  lambda tr: (tr[1]["load"], round(tr[1]["load_fps"])))
        for (load, _), here in rows.items():
            mixes = sorted({t.mix for t, _ in here}, key=lambda m: parse_mix(m).ipv6_pct)
            if len(mixes) < 2:
                continue
            costs = [(t, row, [trial_cost_ns(x) for x in measured(t, row["load_fps"])]) for t, row in here]
            if all(c is None for _, _, cs in costs for c in cs):  # a lab that cannot read its CPU: nothing to say
                continue
            point = f"{ts[0].label(mix=False, size=True)} at {load} (mixes {', '.join(mixes)})".strip()
            p = _pair(pairs, "cost per frame [ns]", point, "more", "mean", design="mix regression")
            for t, row, cs in costs:
                p.exclude(row.get("tester_limited_trials", 0))
                for c in cs:
                    p.add_share(t.repetition, parse_mix(t.mix).ipv6_pct / 100, c)


def _reset(data: RunData, pairs: dict) -> None:
    for t in data.of("reset"):
        for kind, r in t.result.get("kinds", {}).items():
            p = _pair(pairs, "reset time [s]", f"{kind} reset {t.label(mix=False, size=True)} ({_mixes(t)})".strip(),
                      "slower", "location")
            for rep in r["repetitions"]:
                if rep.get("tester_limited"):
                    p.exclude()
                    continue
                for v, f in rep.get("families", {}).items():
                    p.add(f"IPv{v}", f.get("reset_time_s"))


def _host(data: RunData, pairs: dict) -> None:
    for t in data.of("stack-throughput"):
        r = t.result
        point = " ".join(x for x in (t.scenario, r["protocol"].upper(), f"{r['message_bytes']} B") if x)
        _pair(pairs, "stack throughput [Mb/s]", point, "higher", "mean").add(f"IPv{t.family}", r["received_bps"] / 1e6)
    for t in data.of("rr-latency"):
        r = t.result
        if "router_latency_ns" in r:
            size = t.params.get("variant", {}).get("payload_bytes", r["payload_bytes"])  # "mtu": 1480 B IPv4, 1460 B IPv6
            payload = "MTU payload (1480 B IPv4, 1460 B IPv6)" if size == "mtu" else f"{size} B payload"
            point = " ".join(x for x in (t.scenario, payload) if x)
            _pair(pairs, "router latency [µs]", point, "slower", "location").add(f"IPv{t.family}", r["router_latency_ns"] / 1e3)


def families(data: RunData) -> list[Pair]:
    """IPv4 against IPv6 wherever the run measured both, in view order."""
    pairs: dict = {}
    _searched(data, pairs)
    _latency(data, pairs)
    _cost(data, pairs)
    _reset(data, pairs)
    _tear_down(data, pairs)
    _host(data, pairs)
    return list(pairs.values())


def flow_pairs(data: RunData) -> list[Pair]:
    """Within each family of a latency test sent in two flows (``flows =
    2``), flow 2 against flow 1, trial by trial, for the median and
    99th-percentile delays (paired). Where the test stored that a family's
    flow 2 meets a scenario its flow 1 does not (``flow2``: the DUT's
    scoped ACL, NAT or tunnel, scoped extension headers;
    :func:`v6bench.lab.model.dut.flow2_scenarios`), that is the scenario against
    its control in the same trials; otherwise the two flows are identical
    and the pair is an A/A control inside the trial (corrected among the
    controls): whatever would make the families differ in a trial but is
    not IPv6 (a stream's place in the engine's interleaving, its receive
    order) would show there."""
    pairs: dict = {}
    for t in data.of("latency"):
        if t.params.get("flows", 1) != 2:
            continue
        scoped = t.params.get("flow2", {})
        for row in t.result["loads"]:
            point = f"{t.label(mix=False, size=True)} at {row['load']} ({t.mix})".strip()
            trials = load_trials(t, row)
            costs = [(trial_runs_cost_ns(x) or {}).get("streams", {}) for x in trials]  # sent in runs: each flow's
            for v in sorted({s["ip_version"] for x in trials for s in x["streams"]}):
                scenario = scoped.get(str(v))
                for metric, value_ns in PAIRED_LATENCY:
                    p = pairs.setdefault((metric, point, v), Pair(
                        metric, f"{point} IPv{v}", "slower", "location", "flow 1", f"flow 2: {scenario}" if scenario
                        else "flow 2", design="paired", control=not scenario))
                    for trial in trials:
                        streams = trial_families(trial).get(v, [])
                        a, b = (value_ns(_of_flow(streams, k)) for k in (1, 2))
                        p.add_pair(_us(a), _us(b))
                if any(costs):  # each flow's cost per frame, flow 2 against flow 1
                    p = pairs.setdefault(("cost", point, v), Pair(
                        "cost per frame [ns]", f"{point} IPv{v}", "more", "location", "flow 1",
                        f"flow 2: {scenario}" if scenario else "flow 2", design="paired", control=not scenario))
                    for trial, c in zip(trials, costs):
                        p.add_pair(*(c.get(_flow_name(trial, v, k)) for k in (1, 2)))
    return list(pairs.values())


def delay_where(traffic: str, direction: str, frame_size: int, load: str) -> str:
    """A delay histogram's point in words."""
    return " ".join(x for x in (f"{frame_size} B", traffic.strip(), "bi" if direction == "bi" else "", f"load {load}") if x)


def _reference(ts: list[TestData]) -> dict[str, str]:
    """Each scenario's reference: the scenario it is a control of, else the run's first."""
    first = min(ts, key=lambda t: t.scenario_index).scenario
    return {t.scenario: t.params.get("control_of") or first for t in ts}


def _control_of(name: str, ts: list[TestData]) -> str | None:
    """The scenario that scenario ``name`` is an A/A control of, if any."""
    return next((t.params.get("control_of") for t in ts if t.scenario == name and t.params.get("control_of")), None)


def _label(name: str, ts: list[TestData]) -> str:
    """A scenario's name, marked when it is an A/A control."""
    of = _control_of(name, ts)
    return f"{name} (A/A control of {of})" if of else name


def _search_value(result: dict, name: str) -> tuple[float | None, bool]:
    """A searched value of a test's result (``result[name]``, a throughput
    goal or a connection metric): (value, whether it is only a lower bound)."""
    r = result.get(name) or {}
    return r.get("fps", r.get("value")), bool(r.get("is_lower_bound"))


#: What each searching kind compares: (result key, metric, what a larger value means).
SEARCHED = {
    "throughput": (("ndr", "throughput NDR [fps]", "higher"), ("pdr", "throughput PDR [fps]", "higher")),
    "connections": (("capacity", "table capacity [connections]", "higher"),
                    ("establishment_rate", "connection establishment rate [connections/s]", "higher")),
}


def _tear_down(data: RunData, pairs: dict) -> None:
    """RFC 9693's connection tear-down rate, IPv4 (NAT44) against IPv6
    (stateful NAT64): one value per repetition; a rate that could not be
    measured is left out."""
    for t in data.of("connections"):
        if t.family and "tear_down_rate" in t.result:
            p = _pair(pairs, "connection tear-down rate [connections/s]",
                      t.label(mix=False, size=True) or f"{t.frame_size} B", "higher", "mean")
            rate = t.result["tear_down_rate"]["rate_per_s"]
            if rate is None:
                p.exclude(1, f"IPv{t.family}")
            else:
                p.add(f"IPv{t.family}", rate)


def scenario_searches(data: RunData) -> list[Pair]:
    """Each scenario's searched values (:data:`SEARCHED`: NDR and PDR, the
    table capacity and the connection establishment rate) against its
    reference scenario's (:func:`_reference`) at the same mix, frame size,
    traffic and direction; a lower bound is left out."""
    out = []
    for kind, goals in SEARCHED.items():
        tests = [t for t in data.of(kind) if t.scenario]
        ref = _reference(tests) if tests else {}
        for (mix, traffic, d, fs), ts in by(tests, lambda t: (t.mix, t.traffic, t.direction, t.frame_size)).items():
            for name in dict.fromkeys(t.scenario for t in ts):
                if ref[name] == name or not any(t.scenario == ref[name] for t in ts):
                    continue
                where = " ".join(x for x in (f"{fs} B", mix + traffic, "bi" if d == "bi" else "") if x)
                for key, metric, higher in goals:
                    if not any(key in t.result for t in ts):
                        continue
                    p = Pair(metric, where, higher, "mean", ref[name], _label(name, ts),
                             100 * ts[0].params["params"].get("resolution", 0), control=_control_of(name, ts) is not None)
                    for t in (t for t in ts if t.scenario in (name, ref[name]) and key in t.result):
                        value, lower_bound = _search_value(t.result, key)
                        name_t = ref[name] if t.scenario == ref[name] else p.name_b
                        if lower_bound:
                            p.exclude(1, name_t)
                        else:
                            p.add(name_t, value)
                    out.append(p)
    return out


def network_type_cost_ns(trial: dict, version: int, one_family: bool) -> float | None:
    """A trial's cost per frame for one family [ns]: its runs' figure
    (:func:`trial_runs_cost_ns`) where sent in runs, else the whole trial's
    (:func:`trial_cost_ns`) where it carried that family alone; None in a
    mixed trial not in runs (its cost is both families')."""
    by_family = trial_runs_cost_ns(trial)
    if by_family is not None:
        return by_family.get(str(version))
    return trial_cost_ns(trial) if one_family else None


#: What network types compare, per trial and family: metric, what a larger value means, the value.
NETWORK_TYPE_METRICS = (
    ("median delay [µs]", "slower", lambda trial, v, streams, one: _us(trial_median_ns(streams))),
    ("cost per frame [ns]", "more", lambda trial, v, streams, one: network_type_cost_ns(trial, v, one)),
)


def network_types(data: RunData) -> list[Pair]:
    """Per-trial median delay and cost per frame of every network type
    (scenario and family) against a reference at the same frame size,
    traffic, direction and load, where the scenario differs: the same
    family in the scenario's reference (:func:`_reference`), or where that
    has none, the first network type (seed 003 Table 3: each against
    native IPv4). The cost per frame is the DUT's CPU time per frame
    (lab/emulated/cost.py): of a trial carrying one family, or of a family's runs
    in a trial sent in runs; a lab that cannot read it has no cost pairs.
    A test whose scenario is on its second flow (``flow2``) is compared
    inside its trials (:func:`flow_pairs`), not across them."""
    out = []
    tests = sorted((t for t in data.of("latency") if not t.params.get("flow2")), key=series_key)
    ref = _reference(tests) if tests else {}
    for (traffic, d, fs), ts in by(tests, lambda t: (t.traffic, t.direction, t.frame_size)).items():
        for load in dict.fromkeys(row["load"] for t in ts for row in t.result["loads"]):
            values: dict[str, dict[str, list[float]]] = {m: {} for m, _, _ in NETWORK_TYPE_METRICS}
            where_of: dict[str, tuple[str, int]] = {}
            for t in ts:
                for row in (r for r in t.result["loads"] if r["load"] == load):
                    for trial in load_trials(t, row):
                        fams = trial_families(trial)
                        for v, streams in fams.items():
                            for metric, _, value in NETWORK_TYPE_METRICS:
                                x = value(trial, v, streams, len(fams) == 1)
                                if x is not None:
                                    values[metric].setdefault(network_type(t, v), []).append(x)
                            where_of[network_type(t, v)] = (t.scenario, v)
            names = list(dict.fromkeys(n for m in values.values() for n in m))
            by_place = {place: n for n, place in where_of.items()}
            for name in names[1:]:
                scenario, v = where_of[name]
                against = by_place.get((ref[scenario], v), names[0])
                # Within one scenario only the family differs: :func:`families` compares that already.
                if where_of[against][0] == scenario:
                    continue
                label = _label(scenario, ts) + name[len(scenario):] if scenario else name
                for metric, higher, _ in NETWORK_TYPE_METRICS:
                    if name not in values[metric] or against not in values[metric]:
                        continue
                    p = Pair(metric, delay_where(traffic, d, fs, load), higher, "location", against, label,
                             control=bool(scenario) and _control_of(scenario, ts) == where_of[against][0])
                    p.values = {against: values[metric][against], label: values[metric][name]}
                    out.append(p)
    return out
