"""How long a campaign will take on this machine, before it starts
(``v6bench run FILE --plan``; docs/methods.md, "Planning a run").

A point's time is its trials × (the trial's traffic + what a trial costs
beyond it on this machine: its drain, which ends early when nothing is
missing, engine start, learning, observing the DUT), and through a DUT
that keeps state the preliminary phase before each trial
(:func:`preliminary_s`); a run adds a lab build per
visit, at what builds of its kind took (:func:`build_key`: the lab's
kind and the table the routers load, whose load dominates a build with a
large one), and, when the tester's self-test is stale, the self-test. What a
kind's test takes in trials and what a trial and a build cost beyond
their traffic come from this machine's earlier runs in the results
store (:class:`History`: the same machine by :func:`..core.machine.same`),
else from the fallbacks below. A sequential design's tests are counted
at their given blocks (the expected) and at ``max_blocks`` (the most).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from .. import selftest
from ..core import frames, machine, rates
from ..core.frames import Mix
from ..lab import interface
from ..fib.shapes import TABLES
from ..methods import binary_search, registry, stateful
from ..store.db import Store
from ..trial import settle
from ..trial.execute import ENGINE_LEAD_S, engine_lead_s
from .model import Campaign, Scenario, TestSpec
from .plan import ScheduledTest, expand, schedule, visits

#: Without history: seconds a trial costs beyond its traffic and drain (engine start, learning and settle,
#: observing the DUT), a lab build in namespaces and in VMs, and a self-test a frame size [s]. The first
#: demo on a fresh clone (EPYC-25, 2026-11-30) spent 0.88 s a trial beyond its traffic, its 0.5-s drain
#: included (a drain ends when nothing is missing), and 29 s on a self-test of one size (dobrinov2016: 84
#: s for three); 1.2 s and 120 s a self-test made its plan 10.7 min for a run of 5.9.
FALLBACK_TRIAL_S = 0.4
FALLBACK_BUILD_S = {"ns": 6.0, "vm": 60.0, "external": 10.0}
#: Without history of a table's builds: seconds a prefix of it adds to a build, up and down (loading, the
#: warm-up, the teardown): 50 µs, as fib-scale's first full run measured on an AMD EPYC of 2 vCPUs
#: (2026-11-29: 98-107 s for 1 M prefixes a family, 48-75 s for the internet table, 13 s for 100 k).
FALLBACK_TABLE_S_PER_PREFIX = 50e-6
FALLBACK_SELFTEST_S_A_SIZE = 30.0
#: Trials a search takes a bisection step and goal (the expected count): a bisection ends early near its
#: bounds (0.75 a step); throughput's two goals, NDR and PDR, share most loads (EPYC-25, 128 B through a
#: 150-rule list: 7.0 and 9.4 trials a search at resolutions of 5 and 2 %, 0.50 and 0.59 of two bisections).
STEP_SHARE = {"throughput": 0.55}
STEP_SHARE_DEFAULT = 0.75
#: Earlier runs read at most (the newest first).
RUNS_READ = 20
#: The runs read: not a failed one (its conditions may be what failed) nor one still running.
READ_STATUSES = ("finished", "interrupted")


@dataclass
class History:
    """What this machine's earlier runs say: mean trials a test per kind
    key (:func:`kind_key`), seconds a trial costs beyond its traffic (the
    drain as it happened included; at the engine's default settle,
    :func:`settle_excess_s`), seconds a lab build takes, and how
    many runs it came from."""

    trials: dict[str, float] = field(default_factory=dict)
    overhead_s: float | None = None
    #: Per kind key: a trial's mean traffic [s] (what a kind that gives no trial length takes, RFC 9693's
    #: phases) and its mean cost beyond it [s].
    traffic_s: dict[str, float] = field(default_factory=dict)
    beyond_s: dict[str, float] = field(default_factory=dict)
    #: Per :func:`build_key`: the median seconds a visit's lab took, up and down (runs since builds were
    #: recorded one by one); ``build_s``: a build's mean over older runs' builds of every kind.
    builds_s: dict[str, float] = field(default_factory=dict)
    build_s: float | None = None
    selftest_s: float | None = None
    runs: int = 0


def build_key(sc: Scenario) -> str:
    """What makes lab builds alike in time: the lab's kind and the table its routers load."""
    return sc.lab.lab_kind + (f" table {sc.dut.table}" if sc.dut.has_table else "")


def build_guess_s(key: str, h: History) -> float:
    """A build of ``key`` with no history of its own: this machine's builds of its lab kind without a
    table, else (namespace labs) an older run's mean build, else the kind's fallback, plus the table's
    prefixes at :data:`FALLBACK_TABLE_S_PER_PREFIX`. An older run's mean is not a VM's: those runs did
    not record builds by kind, and namespace builds outnumbered the rest."""
    kind, _, table = key.partition(" table ")
    old_mean = h.build_s if kind == "ns" else None
    base = h.builds_s.get(kind, old_mean if old_mean is not None else FALLBACK_BUILD_S.get(kind, FALLBACK_BUILD_S["ns"]))
    shape = TABLES[table] if table else None
    return base + (FALLBACK_TABLE_S_PER_PREFIX * (shape.ipv4.count + shape.ipv6.count) if shape else 0.0)


def kind_key(kind: str, params: dict, router: str = "ns") -> str:
    """What makes tests of a kind alike in their trial count: the kind, a
    search's kind, resolution, RFC 9693's metrics, start (a neighbour's start takes fewer
    trials), confirmations of a loss (more) and the router it measured (``router``, a lab kind:
    a VM router under TCG loses frames now and then below its throughput, so its searches
    bisect longer than a namespace router's)."""
    parts = [kind] + [f"{k}={params[k]}" for k in ("search", "resolution") if k in params] + (
        [f"metrics={','.join(params['metrics'])}"] if params.get("metrics") else [])
    return " ".join(parts + ([f"start={params['start']}"] if params.get("start", "line") != "line" else [])
                    + ([f"confirm_losses={params['confirm_losses']}"] if params.get("confirm_losses") else [])
                    + ([f"router={router}"] if router != "ns" else []))


def router_of(environment: dict, scenario: str | None) -> str:
    """The lab kind (lab/model/spec.LabSpec.lab_kind) a stored run's test at ``scenario`` measured, from
    the run's environment: ``external``, or how its routers were made (runs before that was recorded: ns)."""
    lab = ((environment.get("scenarios") or {}).get(scenario) or {}).get("lab") if scenario else None
    lab = lab or environment.get("lab") or {}
    return "external" if lab.get("kind") == "external" else str(lab.get("router") or "ns")


def history(store: Store, here: dict) -> History:
    """This machine's (``here``: an environment with its machine record)
    finished and interrupted runs in ``store`` (an interrupted run's tests
    that ended are as good as a finished run's: a long campaign resumed
    later plans its rest from them): trial counts over all of them; a
    trial's cost beyond its traffic from the newest run that has one (the
    code as it is now: a drain that ends early, …); builds and self-tests
    over all."""
    mine = [r for r in store.runs()
            if r["status"] in READ_STATUSES and machine.same(r["environment"], here)][-RUNS_READ:]
    trials: dict[str, list[int]] = {}
    per_trial: dict[str, list[tuple[float, float]]] = {}
    overheads: list[float] = []
    builds: list[float] = []
    by_key: dict[str, list[float]] = {}
    selftests: list[float] = []
    for r in mine:
        tests = store.tests(r["id"])
        overheads = _run_history(store, r["id"], tests, trials, per_trial, r["environment"]) or overheads
        spent = r["environment"].get("time_s") or {}
        n_builds = len({t["params"].get("lab_build") for t in tests if t["params"].get("lab_build")})
        for key, xs in (r["environment"].get("lab_builds_s") or {}).items():
            by_key.setdefault(key, []).extend(xs)
        if not r["environment"].get("lab_builds_s") and spent.get("lab up and down") and n_builds:
            builds.append(spent["lab up and down"] / n_builds)
        if (spent.get("self-test") or 0) > 5:
            selftests.append(spent["self-test"])
    return History(trials={k: statistics.fmean(v) for k, v in trials.items()},
                   overhead_s=statistics.median(overheads) if overheads else None,
                   traffic_s={k: statistics.median(x for x, _ in v) for k, v in per_trial.items()},
                   beyond_s={k: statistics.median(y for _, y in v) for k, v in per_trial.items()},
                   builds_s={k: statistics.median(v) for k, v in by_key.items()},
                   build_s=statistics.median(builds) if builds else None,
                   selftest_s=statistics.median(selftests) if selftests else None, runs=len(mine))


def _run_history(store: Store, run_id: int, tests: list[dict], trials: dict[str, list[int]],
                 per_trial: dict[str, list[tuple[float, float]]], environment: dict) -> list[float]:
    """One run's tests: their trial counts added to ``trials`` and their
    (traffic, beyond it) a trial [s] to ``per_trial``, by kind key;
    returns each test's seconds a trial beyond its traffic."""
    durations = store.trial_durations(run_id)
    overheads = []
    for t in tests:
        if t["status"] != "done" or not t["finished_at_unix_s"]:
            continue
        params = t["params"].get("params") or {}
        xs = durations.get(t["id"], [])
        if not registry.kind(t["kind"]).sends_frames and isinstance(params.get("duration_s"), (int, float)):
            xs = [float(params["duration_s"])]  # a host-stack test stores no engine trial: its run is one
        key = kind_key(t["kind"], params, router_of(environment, t["params"].get("scenario")))
        trials.setdefault(key, []).append(len(xs))
        if xs:  # none: not applicable (no throughput to start from, the line rate): no trial to time
            spent = (t["finished_at_unix_s"] - t["started_at_unix_s"] - sum(xs)) / len(xs)
            beyond = max(0.0, spent - settle_excess_s(t["params"].get("settle_s")))  # at the default settle
            overheads.append(beyond)
            per_trial.setdefault(key, []).append((sum(xs) / len(xs), beyond))
    return overheads


#: A table capacity search's mean connections a trial, as a share of its top: bisecting down from the top to a
#: table just below it (transition, run 15: 260,156 of 300,000) tries 300 k, 150 k, 225 k, 262 k, 244 k, ...
CAPACITY_MEAN_SHARE = 0.75


def capacity_only(t: TestSpec) -> bool:
    """An RFC 9693 test of the table capacity alone (its trials' count and size follow from its search)."""
    return t.kind == "connections" and tuple(getattr(t.params, "metrics", ())) == ("capacity",)


def trial_s(t: TestSpec) -> float | None:
    """One trial's traffic [s] as the test's parameters give it (None: they give none); a table capacity
    search's, :func:`rate_runs`' (an RFC 9693 rate test's is history's first: :func:`plan`)."""
    p = t.params
    if capacity_only(t):
        return rate_phase_s(t)
    for name in ("trial_duration_s", "duration_s"):
        if isinstance(getattr(p, name, None), (int, float)):
            return float(getattr(p, name))
    over = getattr(p, "overload_s", None)
    return float(over + getattr(p, "hold_s", 0.0)) if isinstance(over, (int, float)) else None


def rate_runs(t: TestSpec) -> list[tuple[float, float]]:
    """An RFC 9693 test's engine runs a point, per metric it measures: (runs, their mean traffic [s]);
    empty for other tests (methods/stateful.py). Every run of a pair opens N connections, then validates
    them at ``validate_rate_fps``. The capacity's bisection from its top: N at :data:`CAPACITY_MEAN_SHARE`
    of it on average, opened at ``open_rate_fps``. The establishment rate's bisection from its top rate,
    as a search's (:func:`expected_trials`), opening at a quarter of that top on average (its rates halve
    towards the answer; run H of campaigns/log/reproducing-2026-12.md: 0.02-0.16 s for 10,000 from a
    top of 500,000/s). The tear-down rate's measurements open at ``open_rate_fps``. Run H took 20-34
    runs a point of the two rates at resolution 0.05, 0.29 s of traffic each (the model: 20, 0.31 s)."""
    if t.kind != "connections":
        return []
    p = t.params
    steps = math.ceil(math.log2(1 / p.resolution))
    n = float(p.connections)
    out = []
    if "capacity" in p.metrics:
        size = CAPACITY_MEAN_SHARE * p.search_max_connections
        out.append((2.0 * (steps + 1), size * (1 / p.open_rate_fps + 1 / p.validate_rate_fps) / 2))
    if "establishment_rate" in p.metrics:
        out.append((2.0 * (steps + 2), n * (4 / p.max_rate_fps + 1 / p.validate_rate_fps) / 2))
    if "tear_down_rate" in p.metrics:
        out.append((2.0 * stateful.TEAR_DOWN_REPEATS, n * (1 / p.open_rate_fps + 1 / p.validate_rate_fps) / 2))
    return out


def rate_phase_s(t: TestSpec) -> float | None:
    """The mean traffic of an RFC 9693 test's engine runs [s] (:func:`rate_runs`; None: not such a test)."""
    runs = rate_runs(t)
    total = sum(k for k, _ in runs)
    return sum(k * s for k, s in runs) / total if total else None


#: Kinds whose trial count follows from their parameters alone (each load ``repeat`` times); every other
#: kind's depends on what the DUT does (a search, a sweep until two loads pass, a test not applicable at the
#: line rate), and history says how many a test took.
FIXED_TRIALS = ("latency", "mesh")


def fixed(t: TestSpec) -> bool:
    """Whether ``t``'s trial count follows from its parameters alone: a kind of :data:`FIXED_TRIALS`,
    or a loss test given its loads (``loads_pct``: every load runs, RFC 2544 §26.3's stop after two
    loss-free loads applies only to the sweep from the line rate)."""
    return t.kind in FIXED_TRIALS or (t.kind == "loss" and bool(getattr(t.params, "loads_pct", ())))


#: Kinds whose trial count :func:`expected_trials` models from their search's parameters.
SEARCHES = ("throughput", "back-to-back")


def _part(key: str, name: str) -> str | None:
    """The value of ``name=…`` in a :func:`kind_key` (None where the key leaves it at its default)."""
    return next((x.partition("=")[2] for x in key.split()[1:] if x.startswith(f"{name}=")), None)


def _alike(by_key: dict[str, float], key: str, of_kind: bool) -> float | None:
    """``by_key``'s figure for ``key``; with none, the mean of the same kind's tests on the same router
    with other parameters: for every kind when ``of_kind`` (an RFC 9693 test at a finer resolution is more
    like its coarser run than like a guess of one 1-s trial), else for searches that start alike (a VM
    router's neighbour-started searches to 2 % are more like its searches to 1 % than like the model's
    bisection of a steady DUT); else None."""
    if key in by_key:
        return by_key[key]
    kind = key.split()[0]

    def like(other: str) -> bool:
        return (other.split()[0] == kind and _part(other, "router") == _part(key, "router")
                and (of_kind or _part(other, "start") == _part(key, "start")))
    kin = [v for k, v in by_key.items() if like(k)] if of_kind or (kind in SEARCHES and _part(key, "start")) else []
    return statistics.fmean(kin) if kin else None


def modelled(t: TestSpec) -> bool:
    """Whether :func:`expected_trials` counts ``t``'s trials from its parameters (a search to its
    resolution, a table capacity search, a loss sweep, loads × repeat of a fixed kind); for other kinds
    history of the kind with other parameters stands in (:func:`_alike`)."""
    return (t.kind in FIXED_TRIALS or t.kind == "loss" or capacity_only(t)
            or bool(getattr(t.params, "resolution", None) and t.kind in SEARCHES))


#: Routers whose capacity drifts between searches (a VM router under TCG: gamess-forwarding on EPYC-25,
#: 2026-11-30, 274 B: loss at 20.7 kframes/s after a loss-free 24.0 k in the same search): a neighbour's
#: result brackets nothing and the goals share few loads, so a search is planned as from the line rate at
#: :data:`STEP_SHARE_DEFAULT`. Seen: 16-32 trials a search to 1 % there (the model: 20), 18-20 in
#: cisco-dualstack's first blocks to 2 % (run 12, 2026-11-29; the model: 18); 6.6 and 6.0 as bracketed.
DRIFTING_ROUTERS = ("vm",)
#: Without history: about what a router of a lab kind forwards at most, at any frame size [frames/s]. A
#: binary throughput search at a point whose line rate is below it passes its first trial, at the line
#: rate, and ends there (one trial): gamess-forwarding's VM router under TCG (EPYC-25, 2026-11-30, two
#: fresh-clone runs) forwarded 18-42 kframes/s at 70-550 B (NDR) and passed 1062 and 1082 B at their line
#: rates of 11.3-11.6 k in one trial (17 of 18 searches), which the plan had counted at 20 trials each.
ROUTER_FPS = {"vm": 20_000.0}


def expected_trials(t: TestSpec, router: str = "ns") -> tuple[float, float]:
    """From the parameters alone: a point's trials on a ``router`` of that
    lab kind, (expected, most). A
    search bisects to its resolution for each of its goals (RFC 2544's
    binary search, MLRsearch alike); a loss sweep steps down from the line
    rate until two loads pass (a search started from a neighbour: the
    bracket of a neighbour a few resolutions away, then its bisection,
    except on :data:`DRIFTING_ROUTERS`;
    with ``confirm_losses``, a failing load's further trials);
    a table capacity search bisects from its top to its resolution, two
    trials a step (open, validate); a test with loads runs each load
    ``repeat`` times; a host-stack test its kind's ``runs_a_point``;
    others ``repeat`` trials."""
    p = t.params
    if capacity_only(t):
        trials = rate_runs(t)[0][0]
        return trials, trials + 2.0
    repeat = float(getattr(p, "repeat", 1) or 1)
    if getattr(p, "resolution", None) and t.kind in SEARCHES:
        steps = math.ceil(math.log2(1 / p.resolution)) + 2
        drifts = router in DRIFTING_ROUTERS
        if getattr(p, "start", "line") == "neighbour" and not drifts:  # bracketed from a neighbour a few resolutions away
            steps = math.ceil(math.log2(binary_search.FIRST_STEP_RESOLUTIONS)) + 2
        goals = 2 if t.kind == "throughput" else repeat
        confirm = 1 + getattr(p, "confirm_losses", 0) / 2  # about half a bisection's loads fail, each tried again
        share = STEP_SHARE_DEFAULT if drifts else STEP_SHARE.get(t.kind, STEP_SHARE_DEFAULT)
        return goals * steps * share * confirm, goals * float(getattr(p, "max_trials", steps) or steps)
    if t.kind == "loss":
        given = float(len(getattr(p, "loads_pct", ()) or ()))
        return (given, given) if given else (6.0, 10.0)
    runs = sum(k for k, _ in rate_runs(t))
    if runs:  # RFC 9693's rates, with or without the capacity
        return runs, 2.0 * runs
    loads = len(getattr(p, "loads", ()) or ()) or 1
    runs = getattr(registry.kind(t.kind), "runs_a_point", 1)
    return repeat * loads * runs, repeat * loads * runs


def point_trials(t: TestSpec, router: str, line_fps: list[float]) -> float:
    """:func:`expected_trials` (the expected) of ``t``'s points on a ``router`` of that lab kind, whose
    line rates are ``line_fps`` [frames/s]: a binary throughput search where the line rate is below
    what such a router forwards (:data:`ROUTER_FPS`) passes at its first trial and ends, one trial."""
    low = expected_trials(t, router)[0]
    capacity_fps = ROUTER_FPS.get(router)
    if capacity_fps is None or not line_fps or t.kind != "throughput" or getattr(t.params, "search", "binary") != "binary":
        return low
    at_line = sum(fps < capacity_fps for fps in line_fps)
    return (at_line * 1.0 + (len(line_fps) - at_line) * low) / len(line_fps)


@dataclass(frozen=True)
class TestPlan:
    """One ``[[test]]`` in the plan: its points, trials a point and seconds."""

    test: TestSpec
    points: int
    points_most: int
    trials: float
    trials_most: float
    seconds_a_trial: float
    from_history: bool
    #: Its trials from this machine's tests of the kind with other parameters (:func:`_alike`).
    alike: bool = False

    @property
    def guessed(self) -> bool:
        """Its trial count depends on the DUT and this machine has no history of the kind: a guess."""
        return not self.from_history and not self.alike and not fixed(self.test)

    @property
    def seconds(self) -> float:
        return self.points * self.trials * self.seconds_a_trial

    @property
    def seconds_most(self) -> float:
        return self.points_most * self.trials_most * self.seconds_a_trial


@dataclass(frozen=True)
class BuildPlan:
    """The lab builds of one :func:`build_key`: how many, and seconds each (``from_history``: this machine's
    builds of that key, else :func:`build_guess_s`)."""

    key: str
    count: int
    seconds_each: float
    from_history: bool


@dataclass(frozen=True)
class Plan:
    tests: tuple[TestPlan, ...]
    builds: tuple[BuildPlan, ...]
    selftest_s: float
    runs_read: int
    #: Each scenario's planned seconds a build (the ETA's start, campaign/eta.py).
    build_s_by_scenario: dict[str, float] = field(default_factory=dict)

    @property
    def builds_s(self) -> float:
        return sum(b.count * b.seconds_each for b in self.builds)

    @property
    def seconds(self) -> float:
        return sum(t.seconds for t in self.tests) + self.builds_s + self.selftest_s

    @property
    def seconds_most(self) -> float:
        return sum(t.seconds_most for t in self.tests) + self.builds_s + self.selftest_s


def plan(c: Campaign, h: History, selftests: int = 1) -> Plan:
    """The campaign's plan on a machine with history ``h``; ``selftests``:
    how many tester self-tests run first (:func:`selftests_due`)."""
    given = [p for p in expand(c) if p.repetition <= p.test.matrix.blocks]
    most = expand(c)

    sc_of = {sc.name: sc for sc in c.scenarios}
    out = []
    for t in c.tests:
        points = [p for p in given if p.test.index == t.index]
        of_kind = not modelled(t)
        high = expected_trials(t)[1]  # the most trials a point
        traffic_s = trial_s(t)
        # Trials and their cost by the router each point measures (a test's scenarios may differ in it).
        shares: dict[str, list[float]] = {}
        for p in points:
            lab = sc_of[p.scenario].lab
            shares.setdefault(lab.lab_kind, []).append(rates.line_rate_fps(lab.link_speed_bps, p.frame_size))
        trials = beyond_s = 0.0
        exact = alike = True
        for router, lines in (shares or {"ns": []}).items():
            n = len(lines) or 1
            key = kind_key(t.kind, t.params.__dict__, router)
            low = point_trials(t, router, lines)
            known = None if fixed(t) else _alike(h.trials, key, of_kind)
            beyond = _alike(h.beyond_s, key, of_kind)
            w = n / max(1, len(points))
            trials += w * (known if known is not None else low)
            beyond_s += w * (beyond + settle_excess_s(planned_settle_s(t)) if beyond is not None else
                             (h.overhead_s + settle_excess_s(planned_settle_s(t)) if h.overhead_s is not None
                              else fallback_beyond_s(t)))
            traffic_s = traffic_s if traffic_s is not None else (_alike(h.traffic_s, key, True) or rate_phase_s(t) or 1.0)
            exact = exact and known is not None and key in h.trials
            alike = alike and known is not None
        # The preliminary phase where some of the test's scenarios keep state: its mean over the test's points.
        pre_s = sum(preliminary_s(t, p.mix, interface.keeps_state(sc_of[p.scenario].lab, sc_of[p.scenario].dut))
                    for p in points) / len(points) if points else 0.0
        out.append(TestPlan(t, len(points), sum(p.test.index == t.index for p in most),
                            trials, max(high, trials), traffic_s + beyond_s + pre_s, exact, alike and not exact))
    each = {sc.name: build_key(sc) for sc in c.scenarios}
    seconds = {k: h.builds_s.get(k, build_guess_s(k, h)) for k in set(each.values())}
    counts: dict[str, int] = {}
    for name in _builds(c):
        counts[each[name]] = counts.get(each[name], 0) + 1
    builds = tuple(BuildPlan(k, n, seconds[k], k in h.builds_s) for k, n in sorted(counts.items()))
    guess_selftest_s = FALLBACK_SELFTEST_S_A_SIZE * max(1, len(set(c.selftest_frame_sizes)))
    return Plan(tuple(out), builds, selftests * (h.selftest_s or guess_selftest_s), h.runs,
                {name: seconds[k] for name, k in each.items()})


def planned_settle_s(t: TestSpec) -> float | None:
    """The settle ``t``'s trials will have [s]: the test's, else ``$V6BENCH_SETTLE_S`` (trial/settle.py),
    else None (the engine's default)."""
    return settle.of(t.matrix.settle_s)


def settle_excess_s(settle_s: float | None) -> float:
    """What a test's ``settle_s`` adds to each trial beyond the engine's default settle [s] (negative: saves).
    A machine's cost a trial (:attr:`History.overhead_s`, :data:`FALLBACK_TRIAL_S`) is kept at the default."""
    return engine_lead_s(settle_s) - ENGINE_LEAD_S


def fallback_beyond_s(t: TestSpec) -> float:
    """A trial's cost beyond its traffic [s] without history: its drain and
    :data:`FALLBACK_TRIAL_S`, and its settle's :func:`settle_excess_s`."""
    return t.matrix.drain_s + FALLBACK_TRIAL_S + settle_excess_s(planned_settle_s(t))


def preliminary_s(t: TestSpec, mix: Mix, keeps_state: bool) -> float:
    """RFC 9693's preliminary phase before each trial of ``t`` at ``mix``
    through a DUT that ``keeps_state`` or not [s] (trial/preliminary.py; 0 where it has none): every
    stream's connections at the phase's rate, each sending port's streams
    one after the other, plus the engine's lead (learning and settle)."""
    if not (keeps_state and frames.ports_used(t.traffic.ports) == "rfc4814" and not t.traffic.icmp_echo
            and registry.kind(t.kind).sends_frames and not registry.kind(t.kind).mesh
            and not registry.kind(t.kind).opens_connections):  # RFC 9693's own tests open theirs
        return 0.0
    streams = len(mix.versions) * t.traffic.flows
    return t.traffic.preliminary_connections * streams / t.traffic.preliminary_rate_fps + engine_lead_s(planned_settle_s(t))


def selftests_due(store: Store, c: Campaign) -> int:
    """How many tester self-tests a run of ``c`` will measure first (one per
    CPU arrangement with no fitting stored one, as runner.ensure_selftests asks)."""
    if c.selftest_when == "never":
        return 0
    sizes, mtu, arrangements = c.trial_frames
    if c.selftest_when == "always":
        return len(arrangements)
    sizes = sizes or c.selftest_frame_sizes
    return sum(selftest.fitting(store, sizes, mtu, arr)[0] is None for arr in arrangements)


def _builds(c: Campaign) -> list[str]:
    """The scenario of each lab build a run of ``c`` makes: one a visit (plan.visits) of the run's order with
    the blocks as given."""
    order: list[ScheduledTest] = [p for p in schedule(c, 0) if p.repetition <= p.test.matrix.blocks]
    return [name for name, _ in visits(order, set())]


def point_seconds(p: Plan) -> dict[int, float]:
    """Each ``[[test]]``'s estimated seconds a point (its trials × a trial's
    time): where the progress line's ETA starts (campaign/eta.py)."""
    return {t.test.index: t.trials * t.seconds_a_trial for t in p.tests}


def searched(t: TestSpec) -> bool:
    """Whether the DUT's answers decide how many trials a point of ``t`` takes: a search
    (:data:`SEARCHES`, a table's capacity) or a loss sweep from the line rate."""
    return t.kind in SEARCHES or capacity_only(t) or (t.kind == "loss" and not fixed(t))


def unsearched(p: Plan) -> frozenset[int]:
    """The ``[[test]]`` s of ``p`` that are not :func:`searched`: the ETA counts each at its own pace once
    it ran (campaign/eta.py)."""
    return frozenset(t.test.index for t in p.tests if not searched(t.test))
