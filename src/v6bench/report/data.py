"""One run's stored results, read once for a report: the run with its
environment, every finished test with its parameters, result and trials.

Only finished tests (``done``) count; failed and interrupted attempts are
counted in :attr:`RunData.unfinished` so the report can say so.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass

from ..core.rates import line_rate_fps
from ..store.db import Store
from ..core.frames import Traffic


@dataclass(frozen=True)
class TestData:
    """One finished test. ``trials`` are the store's rows (with ``result``,
    the full trial result, when the test kind records trials)."""

    id: int
    kind: str
    mix: str
    frame_size: int
    bidirectional: bool
    repetition: int
    params: dict
    result: dict
    trials: tuple[dict, ...]
    #: The lab's link speed [b/s] when the test ran (its scenario's).
    link_speed_bps: float | None = None
    #: The scenario's place in the campaign file (views keep its order; the first is the reference).
    scenario_index: int = 0
    #: The point's key in the run's order (campaign/plan.ScheduledTest.key; "" where not read from a store).
    point_key: str = ""

    @property
    def test_index(self) -> int | None:
        """The campaign's ``[[test]]`` this test is a point of (None where unknown)."""
        head = self.point_key.split(":", 1)[0].rsplit("/", 1)[-1]  # "[scenario/]index:kind:mix:…"
        return int(head) if head.isdigit() else None

    @property
    def line_fps(self) -> float | None:
        """Line rate [frames/s per direction] the test ran against, as it
        stored it (its path's: fragments and a tunnel lower it); for runs
        stored before tests stored it, the nominal line rate at the frame
        size (RFC 2544 §26.1's maximum)."""
        if self.result.get("line_fps"):
            return self.result["line_fps"]
        if not self.link_speed_bps or not self.frame_size:
            return None
        return line_rate_fps(self.link_speed_bps, self.frame_size)

    @property
    def scenario(self) -> str:
        """The campaign scenario the test ran in ("" for a one-lab campaign)."""
        return self.params.get("scenario") or ""

    @property
    def lab_build(self) -> str:
        """The lab build (a campaign's visit of its scenario: one lab brought
        up, used, taken down) the test ran on, as the run stored it
        (``lab_build``); runs stored before it: the repetition block, one
        visit of each scenario per block in a randomized run (a visit could
        then run on into the next block's first tests of the same scenario)."""
        return str(self.params.get("lab_build") or f"block {self.repetition}")

    @property
    def traffic(self) -> str:
        """" + hbh", " echo to dut", … or "" for plain UDP test frames."""
        return Traffic.from_json(self.params).describe()

    @property
    def direction(self) -> str:
        return "bi" if self.bidirectional else "uni"

    @property
    def family(self) -> int | None:
        """The IP version of a one-family mix (100/0 → 4, 0/100 → 6), else None."""
        return {"100/0": 4, "0/100": 6}.get(self.mix)

    def label(self, mix: bool = True, size: bool = False) -> str:
        """The test's coordinates in words, for legends and table cells."""
        parts = [self.scenario] if self.scenario else []
        if mix:
            parts.append(self.mix + self.traffic)
        elif self.traffic:
            parts.append(self.traffic.strip())
        if size:
            parts.append(f"{self.frame_size} B")
        if self.bidirectional:
            parts.append("bi")
        return " ".join(parts)


@dataclass(frozen=True)
class RunData:
    run: dict
    selftest: dict | None
    tests: tuple[TestData, ...]
    unfinished: int

    @property
    def campaign_toml(self) -> str | None:
        return self.run.get("campaign_toml")

    def of(self, *kinds: str, applicable_only: bool = True) -> list[TestData]:
        """The tests of these kinds; without those that found nothing to
        measure (``applicable: false``: no throughput to start from, …)
        unless ``applicable_only`` is False."""
        return [t for t in self.tests if t.kind in kinds and (not applicable_only or t.result.get("applicable") is not False)]


def load(store: Store, run_id: int) -> RunData:
    run = store.run(run_id)
    selftest = store.selftest(run.get("selftest_id"))
    tests, unfinished = [], 0
    env = run["environment"]
    order = {name: i for i, name in enumerate(_campaign_scenarios(run.get("campaign_toml")))}
    for t in store.tests(run_id):
        scenario = t["params"].get("scenario") or ""
        order.setdefault(scenario, len(order))
        if t["status"] != "done" or t["result"] is None:
            unfinished += 1
            continue
        tests.append(TestData(t["id"], t["kind"], t["mix"], t["frame_size"], bool(t["bidirectional"]), t["repetition"],
                              t["params"], t["result"], tuple(store.trials(t["id"])),
                              scenario_environment(env, scenario).get("lab", {}).get("link_speed_bps"), order[scenario],
                              t.get("point_key") or ""))
    return RunData(run, selftest, tuple(tests), unfinished)


def _campaign_scenarios(text: str | None) -> list[str]:
    """The scenarios' names in the campaign file's order (the first is the
    reference the others are compared with); [] without a readable file."""
    try:
        raw = tomllib.loads(text or "").get("scenario") or []
    except tomllib.TOMLDecodeError:
        try:  # `v6bench test` stores its one-test campaign as JSON
            raw = json.loads(text or "").get("scenario") or []
        except (ValueError, AttributeError):
            return []
    return [sc["name"] for sc in raw if isinstance(sc, dict) and isinstance(sc.get("name"), str)]


def scenario_environment(env: dict, scenario: str | None) -> dict:
    """The environment a scenario's tests ran in (a campaign with
    ``[[scenario]]`` tables keeps one per scenario under ``scenarios``)."""
    return (env.get("scenarios") or {}).get(scenario or "", env)
