"""IPv4 against IPv6 wherever a run measured both (:func:`families`), and
within a family flow 2 against flow 1 of a test sent in two flows
(:func:`flow_pairs`).

- A throughput test's NDR and PDR (one value per repeated search; a
  search capped by the tester is a lower bound and left out), a latency
  trial's median delay per family (the trial is the unit; means are
  dominated by a shared machine's scheduling stalls and are described,
  not compared), a reset's reset time, RFC 9693's connection metrics
  (IPv4 through NAT44 against IPv6 through stateful NAT64), a host-stack
  run's result. IPv4 is the 100/0 mix's value and IPv6 the 0/100 mix's
  at the same point (unpaired); in a mixed stream (50/50, …) both
  families are in every trial, and a latency test's median and
  99th-percentile delays are compared trial by trial (``paired``: the
  trial's IPv6 value against its IPv4 value).
"""

from __future__ import annotations

import json

from ..core.frames import flow_of, parse_mix
from .data import RunData, TestData
from .group import by, measured
from .group import families as trial_families
from .samples import PAIRED_LATENCY, SEARCHED, Pair, load_trials, pair_in, search_value, suspect_trials, \
    trial_cost_ns, trial_median_ns, trial_runs_cost_ns, us


def _mixes(t: TestData) -> str:
    """Which mixes are compared: the pure mixes with each other, a mixed one within itself."""
    return "100/0 vs 0/100" if t.family else t.mix


def _searched(data: RunData, pairs: dict) -> None:
    """Each searching kind's values (:data:`SEARCHED`), IPv4 against IPv6 at
    one point (for connections: NAT44 against stateful NAT64): one value
    per repetition; a lower bound (the tester limited the search) is left
    out, and a throughput at the line rate is the link's
    (:func:`.samples.at_line_rate`: the comparison says "line-limited")."""
    for kind, goals in SEARCHED.items():
        for t in data.of(kind):
            if not t.family:
                continue
            where = t.label(mix=False, size=True) or f"{t.frame_size} B"
            for key, metric, higher in goals:
                if key not in t.result:
                    continue
                p = pair_in(pairs, metric, where, higher, "mean",
                            resolution_pct=100 * t.params["params"].get("resolution", 0))
                p.add_searched(f"IPv{t.family}", *search_value(t, key))


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
                    p = pair_in(pairs, metric, point, "slower", "location", design="paired")
                    p.exclude(left_out)
                    for trial in load_trials(t, row):
                        fam = trial_families(trial)
                        sides = (_native(t, fam.get(4, [])), _native(t, fam.get(6, [])))
                        p.add_pair(*(us(value_ns(s)) for s in sides), streams=sides)
                _runs_cost(t, pairs, point, left_out, load_trials(t, row))
                continue
            p = pair_in(pairs, "median latency [µs]", point, "slower", "location")
            p.exclude(left_out, f"IPv{t.family}")
            for trial in load_trials(t, row):
                streams = trial_families(trial).get(t.family, [])
                p.add(f"IPv{t.family}", us(trial_median_ns(streams)), streams=streams)


def _runs_cost(t: TestData, pairs: dict, point: str, left_out: int, trials: list[dict]) -> None:
    """The DUT's cost per frame of IPv4 against IPv6 inside each trial sent
    in runs (paired, as the delays; flow 1 of each where flow 2 meets a
    scenario, :func:`_native`): nothing where no trial was."""
    costs = [trial_runs_cost_ns(x) for x in trials]
    if all(c is None for c in costs):
        return
    p = pair_in(pairs, "cost per frame [ns]", point, "more", "location", design="paired")
    p.exclude(left_out)
    for trial, c in zip(trials, costs):
        if t.params.get("flow2"):
            p.add_pair(*((c or {}).get("streams", {}).get(_flow_name(trial, v, 1)) for v in (4, 6)))
        else:
            p.add_pair((c or {}).get("4"), (c or {}).get("6"))


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
            p = pair_in(pairs, "cost per frame [ns]", point, "more", "mean", design="mix regression")
            for t, row, cs in costs:
                p.exclude(row.get("tester_limited_trials", 0))
                for c in cs:
                    p.add_share(t.repetition, parse_mix(t.mix).ipv6_pct / 100, c)


def _reset(data: RunData, pairs: dict) -> None:
    for t in data.of("reset"):
        for kind, r in t.result.get("kinds", {}).items():
            p = pair_in(pairs, "reset time [s]", f"{kind} reset {t.label(mix=False, size=True)} ({_mixes(t)})".strip(),
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
        pair_in(pairs, "stack throughput [Mb/s]", point, "higher", "mean").add(f"IPv{t.family}", r["received_bps"] / 1e6)
    for t in data.of("rr-latency"):
        r = t.result
        if "router_latency_ns" in r:
            size = t.params.get("variant", {}).get("payload_bytes", r["payload_bytes"])  # "mtu": 1480 B IPv4, 1460 B IPv6
            payload = "MTU payload (1480 B IPv4, 1460 B IPv6)" if size == "mtu" else f"{size} B payload"
            point = " ".join(x for x in (t.scenario, payload) if x)
            pair_in(pairs, "router latency [µs]", point, "slower", "location").add(f"IPv{t.family}", r["router_latency_ns"] / 1e3)


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
                        sides = (_of_flow(streams, 1), _of_flow(streams, 2))
                        p.add_pair(*(us(value_ns(s)) for s in sides), streams=sides)
                if any(costs):  # each flow's cost per frame, flow 2 against flow 1
                    p = pairs.setdefault(("cost", point, v), Pair(
                        "cost per frame [ns]", f"{point} IPv{v}", "more", "location", "flow 1",
                        f"flow 2: {scenario}" if scenario else "flow 2", design="paired", control=not scenario))
                    for trial, c in zip(trials, costs):
                        p.add_pair(*(c.get(_flow_name(trial, v, k)) for k in (1, 2)))
    return list(pairs.values())


def _tear_down(data: RunData, pairs: dict) -> None:
    """RFC 9693's connection tear-down rate, IPv4 (NAT44) against IPv6
    (stateful NAT64): one value per repetition; a rate that could not be
    measured is left out."""
    for t in data.of("connections"):
        if t.family and "tear_down_rate" in t.result:
            p = pair_in(pairs, "connection tear-down rate [connections/s]",
                      t.label(mix=False, size=True) or f"{t.frame_size} B", "higher", "mean")
            rate = t.result["tear_down_rate"]["rate_per_s"]
            if rate is None:
                p.exclude(1, f"IPv{t.family}")
            else:
                p.add(f"IPv{t.family}", rate)
