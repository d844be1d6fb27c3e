"""``results export RUN --format csv|json|parquet``.

- ``json``: the run (with its environment and self-test), every test with
  its parameters and result, every trial with every count and its full
  trial result;
- ``csv`` and ``parquet``: one row per trial and IP version with the
  test's coordinates and the counts (``docs/results-format.md``).
"""

from __future__ import annotations

import csv
import io
import json

from .db import READABLE_VERSIONS, SCHEMA_VERSION, Store

FORMATS = ("csv", "json", "parquet")

COLUMNS = ("run_id", "test_id", "kind", "mix", "frame_size", "bidirectional", "repetition", "test_status", "seq", "call",
           "recorded_at_unix_s", "duration_s", "intended_fps", "offered_fps", "tx_frames", "rx_frames", "lost_frames",
           "loss_ratio", "tester_limited", "ip_version", "family_tx_frames", "family_rx_frames", "latency_p50_ns",
           "latency_p999_ns", "latency_mean_ns", "pdv_p999_ns", "scenario")


def rows(store: Store, run_id: int) -> list[dict]:
    out = []
    for r in store.run_trials(run_id):
        base = {k: r[k] for k in COLUMNS[:19]}
        streams = json.loads(r["streams_json"])
        by_v: dict[int, list[dict]] = {}
        for s in streams:
            by_v.setdefault(s["ip_version"], []).append(s)
        for v, ss in sorted(by_v.items()) or [(None, [])]:
            lat = [s["latency_ns"] for s in ss if s.get("latency_ns")]
            pdv = [s["pdv_ns"] for s in ss if s.get("pdv_ns")]
            out.append({**base, "ip_version": v, "family_tx_frames": sum(s["tx_frames"] for s in ss),
                        "family_rx_frames": sum(s["rx_frames"] for s in ss),
                        "latency_p50_ns": max((x["p50"] for x in lat), default=None),
                        "latency_p999_ns": max((x["p999"] for x in lat), default=None),
                        "latency_mean_ns": max((x["mean"] for x in lat), default=None),
                        "pdv_p999_ns": max((x["p999"] for x in pdv), default=None),
                        "scenario": json.loads(r["params_json"]).get("scenario")})
    return out


def as_json(store: Store, run_id: int) -> dict:
    run = store.run(run_id)
    selftest = store.selftest(run.get("selftest_id"))
    tests = store.tests(run_id)
    for t in tests:
        t["trials"] = store.trials(t["id"])
    return {"results_format": "v6bench-run", "schema_version": SCHEMA_VERSION, "run": run, "selftest": selftest, "tests": tests}


def export(store: Store, run_id: int, fmt: str, out) -> None:
    """Writes the export to ``out`` (a binary file object)."""
    if fmt == "json":
        out.write(json.dumps(as_json(store, run_id), indent=1, default=str).encode())
    elif fmt == "csv":
        text = io.StringIO()
        w = csv.DictWriter(text, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows(store, run_id))
        out.write(text.getvalue().encode())
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = rows(store, run_id)
        table = pa.Table.from_pylist(data) if data else pa.table({c: pa.array([], pa.null()) for c in COLUMNS})
        pq.write_table(table, out)
    else:
        raise ValueError(fmt)


def restore(store: Store, data: dict) -> int:
    """Loads a ``json`` export (:func:`as_json`) into ``store`` as a new run
    (a new unique id: the same export restored twice is two runs; moving
    runs between stores is :mod:`.merge`'s), every test and trial as
    exported; returns the new run id. The run's
    self-test comes along as a new self-test."""
    if data.get("results_format") != "v6bench-run" or data.get("schema_version") not in READABLE_VERSIONS:
        raise ValueError(f"not a v6bench-run export of schema version {' or '.join(map(str, READABLE_VERSIONS))}")
    run = data["run"]
    selftest_id = None
    if data.get("selftest"):
        st = data["selftest"]
        selftest_id = store.add_selftest(st.get("environment", {}), st)
    run_id = store.start_run(run["name"], run["command"], run["environment"], selftest_id, run.get("campaign_path"),
                             run.get("campaign_sha256"), run.get("campaign_toml"))
    with store.transaction():
        store.execute("UPDATE runs SET status=?, started_at_unix_s=?, finished_at_unix_s=?, error=? WHERE id=?",
                         (run["status"], run["started_at_unix_s"], run.get("finished_at_unix_s"), run.get("error"), run_id))
    for t in data["tests"]:
        test_id = store.insert_test({**t, "run_id": run_id})
        for x in t.get("trials", []):
            store.insert_trial({**x, "test_id": test_id, "extra": x["extra"] or {}})
    return run_id
