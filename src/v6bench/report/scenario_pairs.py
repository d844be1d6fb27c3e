"""Scenarios against their reference (the scenario they are an A/A
control of, else the one they name, ``compare_with``, else the run's first): the searched values, throughput and
RFC 9693's connection metrics (:func:`scenario_searches`), and, as
network types (:func:`network_types`, seed 003 Table 3), the per-trial
median delay and cost per frame of each scenario and family, where the
scenario differs (a family against the other in one scenario is an
IPv4/IPv6 comparison already, :mod:`.family_pairs`: stating it twice
would count it twice in the correction).
"""

from __future__ import annotations

from .data import RunData, TestData
from .group import by, series_key
from .group import families as trial_families
from .samples import SEARCHED, Pair, delay_where, load_trials, search_value, trial_cost_ns, trial_median_ns, \
    trial_runs_cost_ns, us


def network_type(t: TestData, version: int) -> str:
    """A series of the delay histograms: scenario, mixed mix if any, family."""
    return " ".join(x for x in (t.scenario, t.mix if t.mix not in ("100/0", "0/100") else "", f"IPv{version}") if x)


def _reference(ts: list[TestData]) -> dict[str, str]:
    """Each scenario's reference among tests ``ts``: the scenario it is a
    control of, else the one it names to be compared with (``compare_with``)
    where that ran these tests, else the first of ``ts`` in the campaign's
    order."""
    first = min(ts, key=lambda t: t.scenario_index).scenario
    ran = {t.scenario for t in ts}
    return {t.scenario: t.params.get("control_of") or (t.params.get("compare_with") if t.params.get("compare_with") in ran
                                                       else first) for t in ts}


def _control_of(name: str, ts: list[TestData]) -> str | None:
    """The scenario that scenario ``name`` is an A/A control of, if any."""
    return next((t.params.get("control_of") for t in ts if t.scenario == name and t.params.get("control_of")), None)


def _label(name: str, ts: list[TestData]) -> str:
    """A scenario's name, marked when it is an A/A control."""
    of = _control_of(name, ts)
    return f"{name} (A/A control of {of})" if of else name


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
                        p.add_searched(ref[name] if t.scenario == ref[name] else p.name_b, *search_value(t, key),
                                       t.lab_build)
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


#: The delay metric of :data:`NETWORK_TYPE_METRICS`, whose pairs note the DUT's loss (:meth:`.samples.Pair.note_loss`).
DELAY = "median delay [µs]"
#: What network types compare, per trial and family: metric, what a larger value means, the value.
NETWORK_TYPE_METRICS = (
    (DELAY, "slower", lambda trial, v, streams, one: us(trial_median_ns(streams))),
    ("cost per frame [ns]", "more", lambda trial, v, streams, one: network_type_cost_ns(trial, v, one)),
)


def network_types(data: RunData) -> list[Pair]:
    """Per-trial median delay and cost per frame of every network type
    (scenario and family) against a reference at the same frame size,
    traffic, direction and load, where the scenario differs: the same
    family in the scenario's reference (:func:`_reference`), or where that
    has none, the first network type (seed 003 Table 3: each against
    native IPv4). The cost per frame is the DUT's CPU time per frame
    (lab/machine/cost.py): of a trial carrying one family, or of a family's runs
    in a trial sent in runs; a lab that cannot read it has no cost pairs.
    A test whose scenario is on its second flow (``flow2``) is compared
    inside its trials (:func:`flow_pairs`), not across them. Between
    scenarios the unit is the lab build (:mod:`.builds`)."""
    out = []
    tests = sorted((t for t in data.of("latency") if not t.params.get("flow2")), key=series_key)
    ref = _reference(tests) if tests else {}
    for (traffic, d, fs), ts in by(tests, lambda t: (t.traffic, t.direction, t.frame_size)).items():
        for load in dict.fromkeys(row["load"] for t in ts for row in t.result["loads"]):
            # Per metric and network type: each trial's value, lab build and streams (a delay's loss is noted).
            values: dict[str, dict[str, list[tuple[float, str, list[dict]]]]] = {m: {} for m, _, _ in NETWORK_TYPE_METRICS}
            where_of: dict[str, tuple[str, int]] = {}
            for t in ts:
                for row in (r for r in t.result["loads"] if r["load"] == load):
                    for trial in load_trials(t, row):
                        fams = trial_families(trial)
                        for v, streams in fams.items():
                            for metric, _, value in NETWORK_TYPE_METRICS:
                                x = value(trial, v, streams, len(fams) == 1)
                                if x is not None:
                                    values[metric].setdefault(network_type(t, v), []).append((x, t.lab_build, streams))
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
                    for series, of in ((against, against), (label, name)):
                        for x, build, streams in values[metric][of]:
                            # Two scenarios are two labs: the build is the unit; two families of one are one lab.
                            p.add(series, x, build if scenario else None, streams if metric == DELAY else None)
                    out.append(p)
    return out
