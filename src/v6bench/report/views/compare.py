"""IPv4 against IPv6, metric by metric, with the statistics that say
whether a difference is real (:mod:`..stats`).

Samples are one value per repetition: a throughput test's NDR, a latency
trial's mean and median delay, a reset's reset time, a host-stack run's result. IPv4
is the 100/0 mix's value and IPv6 the 0/100 mix's at the same point; in a
mixed stream (50/50, …) the two families of the same trials are compared.
"""

from __future__ import annotations

from ..data import RunData, TestData
from ..model import Section, Table
from ..stats import COMPARISON_COLUMNS, DESCRIPTION_COLUMNS, compare, describe
from .group import family_latency_mean_ns, families
from .latency import _load_trials

Samples = dict[tuple, dict[int, list[float]]]


def _add(samples: Samples, key: tuple, version: int, value: float | None) -> None:
    if value is not None:
        samples.setdefault(key, {}).setdefault(version, []).append(value)


def _pair(t: TestData) -> str:
    """Which mixes are compared: the pure mixes with each other, a mixed one within itself."""
    return "100/0 vs 0/100" if t.family else t.mix


def _throughput(data: RunData, out: Samples, resolution: dict) -> None:
    for t in data.of("throughput"):
        if t.family:
            key = ("throughput NDR [fps]", t.label(mix=False, size=True) or f"{t.frame_size} B", "higher")
            _add(out, key, t.family, t.result["ndr_fps"])
            resolution[key] = 100 * t.params["params"].get("resolution", 0)


def _latency(data: RunData, out: Samples) -> None:
    for t in data.of("latency"):
        for row in t.result["loads"]:
            for trial in _load_trials(t, row):
                for v, streams in families(trial).items():
                    if t.family in (None, v):
                        point = f"{t.label(mix=False, size=True)} at {row['load']} ({_pair(t)})".strip()
                        m = family_latency_mean_ns(streams)
                        _add(out, ("mean latency [µs]", point, "slower"), v, None if m is None else m / 1e3)
                        # The median: robust to the multi-ms stalls a shared machine adds to a few frames.
                        p50 = [s["latency_ns"]["p50"] for s in streams if s.get("latency_ns")]
                        _add(out, ("median latency [µs]", point, "slower"), v, sum(p50) / len(p50) / 1e3 if p50 else None)


def _reset(data: RunData, out: Samples) -> None:
    for t in data.of("reset"):
        for kind, r in t.result.get("kinds", {}).items():
            for rep in r["repetitions"]:
                for v, f in rep.get("families", {}).items():
                    key = ("reset time [s]", f"{kind} reset {t.label(mix=False, size=True)} ({_pair(t)})".strip(), "slower")
                    _add(out, key, int(v), f.get("reset_time_s"))


def _host(data: RunData, out: Samples) -> None:
    for t in data.of("stack-throughput"):
        r = t.result
        key = ("stack throughput [Mb/s]", " ".join(x for x in (t.scenario, r["protocol"].upper(), f"{r['message_bytes']} B") if x),
               "higher")
        _add(out, key, t.family, r["received_bps"] / 1e6)
    for t in data.of("rr-latency"):
        r = t.result
        if "router_latency_ns" in r:
            size = t.params.get("variant", {}).get("payload_bytes", r["payload_bytes"])  # "mtu": 1480 B IPv4, 1460 B IPv6
            payload = "MTU payload (1480 B IPv4, 1460 B IPv6)" if size == "mtu" else f"{size} B payload"
            key = ("router latency [µs]", " ".join(x for x in (t.scenario, payload) if x), "slower")
            _add(out, key, t.family, r["router_latency_ns"] / 1e3)


def samples(data: RunData) -> tuple[Samples, dict]:
    out: Samples = {}
    resolution: dict = {}
    _throughput(data, out, resolution)
    _latency(data, out)
    _reset(data, out)
    _host(data, out)
    return out, resolution


def comparisons(data: RunData) -> Section | None:
    out, resolution = samples(data)
    rows, desc, compared = [], [], []
    for key, fam in out.items():
        metric, point, higher = key
        for v in sorted(fam):
            desc.append((metric, point, f"IPv{v}") + describe(fam[v]).row())
        if 4 in fam and 6 in fam:
            c = compare(fam[4], fam[6], resolution.get(key), higher)
            rows.append((metric, point) + c.row())
            compared.append((metric, point, c))
    if not desc:
        return None
    blocks = []
    if rows:
        blocks.append(_summary(compared))
        blocks.append(Table("ipv4-vs-ipv6", "IPv4 against IPv6", ("metric", "point") + COMPARISON_COLUMNS, tuple(rows),
                            "IPv6 − IPv4 in % of the IPv4 mean; 95 % confidence interval of the difference of means (Welch); "
                            "two-sided Welch t-test and Mann–Whitney U over repetitions. An interval that contains 0 is "
                            "within noise."))
    blocks.append(Table("descriptive", "Descriptive statistics over repetitions",
                        ("metric", "point", "family") + DESCRIPTION_COLUMNS, tuple(desc),
                        "Mode: the most frequent value when a value repeats. Skewness and excess kurtosis within ±2 is "
                        "seed 000's test of normality before an ANOVA."))
    return Section("statistics", "IPv4 against IPv6: is the difference real?",
                   "Each comparison as a difference in percent with its 95 % confidence interval and significance tests.",
                   tuple(blocks))


#: The summary's words for each outcome (:data:`..stats.OUTCOMES`), in its order.
OUTCOME_NAMES = {"significant": "IPv6 differs, significantly", "noise": "within noise",
                 "untested": "not tested: one repetition a side", "equal": "every repetition equal"}


def _summary(compared: list) -> Table:
    """The answer first: how many comparisons show a real difference, and which."""
    rows = []
    for outcome, name in OUTCOME_NAMES.items():
        hits = [(m, p, c) for m, p, c in compared if c.outcome == outcome]
        if hits:
            listed = "; ".join(f"{m.split(' [')[0]} {p}: {c.diff_pct:+.1f} %" for m, p, c in hits[:12])
            rows.append((name, len(hits), listed + (f"; … {len(hits) - 12} more" if len(hits) > 12 else "")))
    return Table("summary", "Summary", ("outcome", "comparisons", "which (IPv6 − IPv4)"), tuple(rows),
                 "Every IPv4/IPv6 comparison of the run by its verdict (details in the next table).")
