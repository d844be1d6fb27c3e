"""What the commands print: the lab's status, a run's results. Rendering
only; the commands (``cli/*.py``) decide what to show."""

from __future__ import annotations

import json

from ..lab import control
from ..report import results as results_text
from ..store import export as store_export
from ..store.db import Store


def status_json(lab, busy: bool) -> dict:
    if lab is None:
        return {"up": False, "busy": busy, "topology": None, "nodes": []}
    return {
        "up": True, "busy": busy, "topology": lab.topology, "link_speed_bps": lab.link_speed_bps, "mtu": lab.mtu.to_json(),
        "temporary": lab.temporary, "created_at_unix_s": lab.created_at_unix_s, "cpu_plan": lab.cpu_plan.to_json(),
        "nodes": list(lab.nodes), "napi_threads": list(lab.napi),
    }


def status_text(lab, busy: bool) -> str:
    if lab is None:
        return "no lab is up" + (" (a v6bench command is building or using one)" if busy else "")
    lines = [f"lab up: {control.describe(lab)}, MTU {lab.mtu}" + (" (temporary, in use)" if lab.temporary else "")
             + (" (busy)" if busy and not lab.temporary else "")]
    for n in lab.nodes:
        for i in n["interfaces"]:
            owner = " (engine)" if i.get("addresses_owner") == "engine" else ""
            lines.append(f"  {n['name']:<3} {n['role']:<6} {n['netns']:<10} {i['name']:<6} {i['mac']}  {i['ipv4']:<16} {i['ipv6']}{owner}")
    return "\n".join(lines)


def status(lab, busy: bool, as_json: bool) -> str:
    return json.dumps(status_json(lab, busy), indent=1) if as_json else status_text(lab, busy)


def run(store: Store, run_id: int, as_json: bool) -> str:
    """A stored run: environment and every test (JSON without the trials)."""
    if as_json:
        data = store_export.as_json(store, run_id)
        for t in data["tests"]:
            t.pop("trials")
        return json.dumps(data, indent=1, default=str)
    return results_text.run_text(store.run(run_id), store.tests(run_id))


def runs(rows: list) -> str:
    """Every run of a database, one line each."""
    return results_text.runs_table(rows)
