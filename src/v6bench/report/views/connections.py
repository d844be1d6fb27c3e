"""RFC 9693's connection metrics of a DUT that keeps state: each
``connections`` test's table capacity, maximum connection establishment
rate and tear-down rate, by scenario and family (IPv4 through NAT44,
IPv6 through stateful NAT64). The comparisons are in the statistics
section (report/samples.py)."""

from __future__ import annotations

from ..data import RunData
from ..group import by, mean
from ..model import Section, Table

#: The table's metrics: (result key, heading, the value of a result).
_METRICS = (
    ("capacity", "capacity [connections]", lambda r: r["value"]),
    ("establishment_rate", "establishment rate [connections/s]", lambda r: r["value"]),
    ("tear_down_rate", "tear-down rate [connections/s]", lambda r: r["rate_per_s"]),
)


def connections(data: RunData) -> Section | None:
    tests = data.of("connections")
    if not tests:
        return None
    rows = []
    for (scenario, mix, fs), ts in by(tests, lambda t: (t.scenario, t.mix, t.frame_size)).items():
        for key, heading, value_of in _METRICS:
            results = [t.result[key] for t in ts if key in t.result]
            if not results:
                continue
            values = [value_of(r) for r in results if not r.get("is_lower_bound") and value_of(r) is not None]
            rows.append((scenario, mix, fs, heading, len(results), mean(values), min(values, default=None),
                         max(values, default=None), len(results) - len(values)))
    return Section("connections", "Connections (RFC 9693)",
                   "A DUT that keeps state, measured from an empty table each time: the most connections it holds, "
                   "the highest rate at which it opens every one of N, and the rate at which it deletes them. "
                   "IPv4 opens its connections through NAT44, IPv6 through stateful NAT64.",
                   (Table("connections", "Connection metrics by scenario and family",
                          ("scenario", "mix", "frame size [B]", "metric", "repetitions", "mean", "min", "max",
                           "left out (lower bounds, not measured)"), tuple(rows),
                          "A search that passed at its top, or that the tester limited, gives only a lower bound: "
                          "left out of the mean and of every comparison."),))
