"""A campaign file (TOML) parsed and checked into a frozen
:class:`~.model.Campaign`; each test is then fitted to the labs of the
scenarios it runs in (:mod:`.fitting`).

```toml
name = "quick"
[lab]        # topology, link_speed, mtu (bytes or "r1-r2=500,…", lab/model/mtu.py), cpu_arrangement
[dut]        # limit_fps (0 = none); acl = 0 | 1 … 150 rules (seed 000: 1, 25), acl_at = "in" | "out" | "both",
             # acl_udp_only, acl_family = "both" | "ipv4" | "ipv6", nat44, shape (lab/model/dut.py)
[selftest]   # when = "if-stale" (missing or stale: selftest.stale) | "always" | "never"; frame_sizes
[matrix]     # defaults: mixes, frame_sizes, directions, repeat, drain_s (repeat: blocks;
             # unset, each test runs registry.default_design: enough for a verdict),
             # settle_s (the pause between learning and traffic; default the engine's 0.5 s)
[[test]]     # kind = "throughput" | "loss" | ...; matrix keys override
             # the defaults; other keys are the kind's parameters (`repeat`
             # is the kind's own for latency, back-to-back, recovery, reset:
             # trials inside one test; `blocks` is how many repetition blocks
             # the test runs in, [matrix] repeat by default);
             # [test.throughput_search] for kinds that start from throughput;
             # ext_headers = "chain" etc.: IPv6 extension headers (core/ext_headers.py)
             # icmp_echo = "dut" | "far": ICMP Echo Requests instead of UDP frames
             # flows = 2: each family as two identical flows, the second an A/A control
             # ext_headers_scope = "flow2" (flows = 2): the headers on flow 2 only
             # runs_s = 0.1: the streams in runs of 0.1 s instead of frame by frame,
             # the DUT's cost per frame then read per family inside each trial
             # ports = "auto" (default) | "rfc4814" | "fixed": the UDP ports (core/frames.PORTS)
             # kind = "mesh" (lab.topology = "mesh:N"): pattern = "full" | "partial",
             # loads = ["10%", "50%"] per sending port, trial_duration_s
             # kind = "stack-throughput": protocols, message_sizes, duration_s (iperf3)
             # kind = "latency": families = "paired" (default: the mixes 100/0 and
             # 0/100 run as one 50/50 mix, compared trial by trial) | "separate"
             # kind = "rr-latency": payload_sizes, mtu_payload, duration_s
             # (host-stack kinds: mixes "100/0" / "0/100" pick the family; no frame_sizes)
             # scenarios = ["name", …]: only in these scenarios (default: all)
[[scenario]] # name; [scenario.lab] and [scenario.dut] keys override [lab] and [dut]
             # (dut.scope = "flow2": the ACL, NAT or tunnel on the second flow of
             # each family only, the first its control in the same trials; flows = 2);
             # control_of = "name": an A/A control, run exactly as that scenario;
             # compare_with = "name": compared with that scenario (default: the run's first)
[design]     # order = "randomized" (default) | "file"; seed = N (default: drawn at
             # the start of a run and recorded with it); sequential = true with
             # max_blocks = N (and precision_pct = 1.0): blocks added until decided
```

With ``order = "randomized"`` a run is a sequence of repetition blocks
(block r holds every point's repetition r, ``repeat`` of the matrix); each
block visits the scenarios in a random order and, in each, runs its points
in a random order, the throughput searches other tests start from first
(plan.schedule).

Every error is one :class:`UsageError` naming the field as a path,
``("test", 2, "frame_sizes", 0)``: a file renders it
``quick.toml: test[2].frame_sizes[0]: 50 bytes is outside 64..9216``
(:func:`load`), ``v6bench test`` as the option that set it
(``cli/options.py``). The rules a trial shares live in
:mod:`v6bench.core.frames`, :mod:`v6bench.trial.fit` and :mod:`v6bench.lab.model.spec`; each kind
declares its parameters (a dataclass), the ``[[test]]`` keys it takes and what
it needs of a lab (:mod:`v6bench.methods.registry`), so nothing here tells
the kinds apart by name.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import selftest
from ..core.errors import Field, UsageError
from ..lab import interface
from ..lab.model.dut import DutConfig
from ..lab.model.spec import LabSpec
from ..methods import registry, throughput
from ..core.params import only_keys, parse, subtable
from ..core import frames
from ..trial.path import LabPath
from ..core.frames import Mix, Traffic, parse_mix
from . import fitting
from .fitting import place_in_test
from .model import Campaign, Design, Matrix, Scenario, TestSpec  # noqa: F401  (the types a file is parsed into)

MATRIX_KEYS = registry.MATRIX_KEYS
#: The longest pause between learning and traffic a campaign may ask for [s] (the engine's default is 0.5 s).
SETTLE_MAX_S = 10.0
DIRECTIONS = ("uni", "bi")
SELFTEST_WHEN = selftest.WHEN
DESIGN_ORDERS = ("randomized", "file")
#: The keys of a [[test]] besides its kind's parameters and the matrix's: its own, and those a kind may take
#: (methods/registry.FRAME_KEYS; each kind says which it takes).
TEST_KEYS = ("kind", "blocks", "scenarios", *registry.FRAME_KEYS)


def _list(v: Any, where: Field) -> list:
    if not isinstance(v, list) or not v:
        raise UsageError("expected a non-empty list", where)
    return v


def _count(v: Any, where: Field) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1000:
        raise UsageError(f"expected a whole number 1..1000, got {v!r}", where)
    return v


def frame_sizes(v: Any, where: Field) -> tuple[int, ...]:
    """A non-empty list of frame sizes in bytes (incl. FCS), each one a
    frame of some mix takes (IPv4's smallest up, :mod:`v6bench.core.frames`;
    each test checks its own mixes); errors name ``where``."""
    out = []
    for i, x in enumerate(_list(v, where)):
        if not isinstance(x, int) or isinstance(x, bool):
            raise UsageError(f"expected a whole number of bytes, got {x!r}", (*where, i))
        try:
            frames.check_frame_size(Mix(100, 0), x)
        except UsageError as e:
            raise UsageError(e.message, (*where, i)) from None
        out.append(x)
    return tuple(out)


def _mixes(v: Any, where: Field) -> tuple[Mix, ...]:
    out = []
    for i, x in enumerate(_list(v, where)):
        if not isinstance(x, str):
            raise UsageError(f"expected a string such as \"90/10\", got {x!r}", (*where, i))
        try:
            out.append(parse_mix(x))
        except UsageError as e:
            raise UsageError(e.message, (*where, i)) from None
    return tuple(out)


def _directions(v: Any, where: Field) -> tuple[str, ...]:
    for i, x in enumerate(_list(v, where)):
        if x not in DIRECTIONS:
            raise UsageError(f"{x!r} is not uni or bi", (*where, i))
    return tuple(v)


def _drain(v: Any, where: Field) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 600:
        raise UsageError(f"expected seconds in 0..600, got {v!r}", where)
    return float(v)


def _settle(v: Any, where: Field) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= SETTLE_MAX_S:
        raise UsageError(f"expected seconds in 0..{SETTLE_MAX_S:g}, got {v!r}", where)
    return float(v)


#: Default sizes: RFC 2544 §9's, with 84 for 64, which cannot carry IPv6/UDP and the signature
#: (a default that fails with the default mixes would be no default).
DEFAULT_MATRIX = Matrix((Mix(100, 0), Mix(0, 100)), (84, 128, 256, 512, 1024, 1280, 1518), ("uni",), 1, 2.0)


def _matrix(d: dict, base: Matrix, where: Field) -> Matrix:
    def get(key, conv, default):
        return conv(d[key], (*where, key)) if key in d else default

    return Matrix(get("mixes", _mixes, base.mixes), get("frame_sizes", frame_sizes, base.frame_sizes),
                  get("directions", _directions, base.directions), get("repeat", _count, base.blocks),
                  get("drain_s", _drain, base.drain_s), get("settle_s", _settle, base.settle_s))


def parse_campaign(text: str, path: str = "<campaign>") -> Campaign:
    """Parses and checks a campaign file; every error is one line naming
    the file and the field: ``quick.toml: test[2].mixes[0]: …``."""
    name = Path(path).name
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{name}: not valid TOML: {e}") from None
    try:
        return from_dict(d, text, path)
    except UsageError as e:
        raise UsageError(f"{name}: {e}") from None


def from_dict(d: dict, text: str, path: str) -> Campaign:
    """A campaign from its parsed table (``text`` is kept with the run);
    errors carry their field (:class:`UsageError`)."""
    only_keys(d, ("name", "description", "lab", "dut", "selftest", "matrix", "test", "scenario", "design"), ())
    cname = d.get("name", Path(path).stem)
    if not isinstance(cname, str) or not cname:
        raise UsageError("expected a non-empty string", "name")
    lab_d, dut_d = subtable(d, "lab"), subtable(d, "dut")
    when, st_sizes = _selftest(subtable(d, "selftest"))
    m = subtable(d, "matrix")
    only_keys(m, MATRIX_KEYS, ("matrix",))
    base = _matrix(m, DEFAULT_MATRIX, ("matrix",))
    tests_d = d.get("test", [])
    if not isinstance(tests_d, list) or not tests_d:
        raise UsageError("a campaign needs at least one [[test]]", "test")
    for i, t in enumerate(tests_d):
        if not isinstance(t, dict):
            raise UsageError("expected a [[test]] table", ("test", i))
    selected = {i: _list(t["scenarios"], ("test", i, "scenarios")) for i, t in enumerate(tests_d) if "scenarios" in t}
    scenarios = _scenarios(d, lab_d, dut_d, len(tests_d), selected, Path(path).parent)
    paths = {sc.name: LabPath.build(sc.lab.topology, sc.lab.link_speed_bps, sc.lab.mtu,
                                    interface.spec_tunnel(sc.lab, sc.dut)) for sc in scenarios}
    tests = []
    for i, t in enumerate(tests_d):
        spec = _test(i, t, base, counted="repeat" in m)
        for sc in scenarios:
            if i in sc.tests:
                fitting.check_on_scenario(spec, sc, paths[sc.name])
        tests.append(spec)
    first = scenarios[0]
    return Campaign(cname, path, text, hashlib.sha256(text.encode()).hexdigest(), first.lab, first.dut, when, st_sizes,
                    tuple(tests), scenarios, _design(subtable(d, "design")))


def _selftest(st: dict) -> tuple[str, tuple[int, ...]]:
    only_keys(st, ("when", "frame_sizes"), ("selftest",))
    when = st.get("when", "if-stale")
    if when not in SELFTEST_WHEN:
        raise UsageError(f"{when!r} is not one of {', '.join(SELFTEST_WHEN)}", ("selftest", "when"))
    sizes = frame_sizes(st["frame_sizes"], ("selftest", "frame_sizes")) if "frame_sizes" in st else (64, 128, 512, 1518)
    return when, sizes


def _lab(lab_d: dict, where: Field, base: Path) -> LabSpec:
    try:
        return interface.lab_spec(lab_d, base)
    except UsageError as e:
        raise e.at(*where) from None


def _dut(dut_d: dict, lab: LabSpec, where: Field) -> DutConfig:
    try:
        return interface.dut_config(dut_d, lab)
    except UsageError as e:
        raise e.at(*where) from None


SCENARIO_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def _scenarios(d: dict, lab_d: dict, dut_d: dict, n_tests: int, selected: dict[int, list],
               base: Path) -> tuple[Scenario, ...]:
    """The ``[[scenario]]`` tables, each lab and DUT merged over the top-level ones
    (``base``: where a relative lab file is, the campaign file's directory)."""
    raw = d.get("scenario")
    if raw is None:
        for i in selected:
            raise UsageError("the campaign has no [[scenario]] tables", ("test", i, "scenarios"))
        lab = _lab(lab_d, ("lab",), base)
        return (Scenario("", lab, _dut(dut_d, lab, ("dut",)), tuple(range(n_tests))),)
    if not isinstance(raw, list) or not raw:
        raise UsageError("expected [[scenario]] tables", "scenario")
    out: list[Scenario] = []
    for j, sc in enumerate(raw):
        out.append(_scenario(j, sc, out, lab_d, dut_d, base))
    names = [x.name for x in out]
    for i, sel in selected.items():
        for k, n in enumerate(sel):
            if n not in names:
                raise UsageError(f"{n!r} is not a scenario (known: {', '.join(names)})", ("test", i, "scenarios", k))
    return tuple(Scenario(x.name, x.lab, x.dut, tuple(i for i in range(n_tests) if i not in selected or x.name in selected[i]),
                          x.control_of, x.compare_with) for x in out)


def _scenario(j: int, sc: Any, above: list[Scenario], lab_d: dict, dut_d: dict, base: Path) -> Scenario:
    """``scenario[j]``, given the scenarios ``above`` it."""
    where: Field = ("scenario", j)
    if not isinstance(sc, dict):
        raise UsageError("expected a [[scenario]] table", where)
    only_keys(sc, ("name", "description", "lab", "dut", "control_of", "compare_with"), where)
    name = sc.get("name")
    if not isinstance(name, str) or not name or not set(name) <= SCENARIO_NAME_CHARS:
        raise UsageError(f"expected a name of a-z, 0-9 and -, got {name!r}", (*where, "name"))
    if name in (x.name for x in above):
        raise UsageError(f"{name!r} is used twice", (*where, "name"))
    if "control_of" in sc and "compare_with" in sc:
        raise UsageError("an A/A control is compared with the scenario it controls", (*where, "compare_with"))
    named = {k: _above(sc[k], above, (*where, k)) for k in ("control_of", "compare_with") if k in sc}
    if "control_of" in named:
        of = named["control_of"]
        for key in ("lab", "dut"):
            if key in sc:
                raise UsageError(f"a control runs exactly as {of.name!r}: it takes no {key} of its own", (*where, key))
        return Scenario(name, of.lab, of.dut, (), of.name)
    lab = _lab({**lab_d, **subtable(sc, "lab", where)}, (*where, "lab"), base)
    return Scenario(name, lab, _dut({**dut_d, **subtable(sc, "dut", where)}, lab, (*where, "dut")), (),
                    compare_with=named["compare_with"].name if "compare_with" in named else "")


def _above(name: Any, above: list[Scenario], where: Field) -> Scenario:
    """The scenario named ``name`` among those ``above`` (a control or a comparison names one defined before it)."""
    of = next((x for x in above if x.name == name), None)
    if of is None:
        raise UsageError(f"{name!r} is not a scenario above this one (known: {', '.join(x.name for x in above) or 'none'})",
                         where)
    return of


def _test(i: int, t: dict, base: Matrix, counted: bool) -> TestSpec:
    """``test[i]`` over the campaign's matrix ``base`` (``counted``: the
    matrix gives a repeat count)."""
    where: Field = ("test", i)
    if "kind" not in t:
        raise UsageError(f"missing (one of {', '.join(registry.KINDS)})", (*where, "kind"))
    try:
        k = registry.kind(t["kind"])
    except UsageError as e:
        raise e.at(*where) from None
    # `repeat` in a [[test]] is the kind's own repetitions if it has them
    # (latency, back-to-back, recovery, reset); otherwise the test's.
    own_repeat = "repeat" in k.params.__dataclass_fields__
    matrix_keys = tuple(key for key in k.matrix_keys if not (own_repeat and key == "repeat"))
    for key in t:  # a key some kind takes, but not this one
        if key in MATRIX_KEYS + TEST_KEYS and key not in matrix_keys + k.keys + ("kind", "blocks", "scenarios") \
                and not (own_repeat and key == "repeat"):
            raise UsageError(f"{k.name} {k.refuses_why}", (*where, key))
    if "blocks" in t and "repeat" in matrix_keys and "repeat" in t:
        raise UsageError(f"give repeat or blocks, not both (for {k.name} they are the same)", (*where, "blocks"))
    blocks = {"repeat": _count(t["blocks"], (*where, "blocks"))} if "blocks" in t else {}
    mx = _matrix({**{key: t[key] for key in matrix_keys if key in t}, **blocks}, base, where)
    rest = {key: v for key, v in t.items() if key not in MATRIX_KEYS + TEST_KEYS or (own_repeat and key == "repeat")}
    params = parse(k.params, rest, where)
    if getattr(params, "families", None) == "paired":  # both families in every trial: one mix instead of two
        mx = replace(mx, mixes=frames.paired_mixes(mx.mixes))
    try:
        k.check_matrix(mx.mixes, mx.directions)
    except UsageError as e:
        raise e.at(*where) from None
    if not k.sends_frames:  # its matrix: the families, no frames, t1 to t2
        mx = Matrix(mx.mixes, (), ("uni",), mx.blocks, mx.drain_s)
    spec = TestSpec(i, k.name, params, mx, _throughput_search(k, t, params, where), _traffic(k, t, mx, where))
    duration_s = getattr(spec.params, "trial_duration_s", None)
    if spec.traffic.runs_s is not None and duration_s:  # a trial in runs holds two rounds of them, checked now
        for mix in spec.matrix.mixes:
            try:
                frames.check_runs_fit(spec.traffic.runs_s, mix, spec.traffic.flows, duration_s, spec.traffic.foreground)
            except UsageError as e:
                raise UsageError(e.message, (*where, "runs_s")) from None
    if not counted and not {"repeat", "blocks"} & set(t):  # no count given: enough for a verdict
        n, params = registry.default_design(k, spec.params, spec.matrix.mixes)
        spec = replace(spec, params=params, matrix=replace(spec.matrix, blocks=n))
    return spec


def shortfalls(c: Campaign) -> tuple[str, ...]:
    """One line for each test of ``c`` that runs fewer repetition blocks
    than some comparison the report draws from it needs to be a verdict
    (:func:`v6bench.methods.registry.least_blocks`): that comparison will
    say "not enough repetitions". A warning, not an error: a short run may
    be meant (a smoke test, one reset a side)."""
    out = []
    for t in c.tests:
        scenarios = sum(t.index in sc.tests for sc in c.scenarios)
        least, why = registry.least_blocks(registry.kind(t.kind), t.params, t.matrix.mixes, t.traffic.flows, scenarios)
        if t.matrix.blocks < least:
            out.append(f"test[{t.index}] ({t.kind}) runs {t.matrix.blocks} block{'s' if t.matrix.blocks != 1 else ''}: "
                       f"{why}, so its report will say \"not enough repetitions\" (blocks = {least} would do)")
    return tuple(out)


def _throughput_search(k: registry.Kind | registry.HostKind, t: dict, params: Any, where: Field) -> throughput.Params:
    """``[test.throughput_search]``: only where the test may start from a search."""
    if "throughput_search" not in t:
        return throughput.Params()
    if not k.needs_throughput(params):
        raise UsageError(f"{k.name} with these parameters runs no throughput search "
                         f"(only latency at \"throughput\", back-to-back, recovery and reset start from one)",
                         (*where, "throughput_search"))
    return parse(throughput.Params, subtable(t, "throughput_search", where), (*where, "throughput_search"))


def _traffic(k: registry.Kind | registry.HostKind, t: dict, mx: Matrix, where: Field) -> Traffic:
    """The test's frames (``ext_headers``, ``icmp_echo``, ``flows``, ``ext_headers_scope``), checked at every
    mix, size and direction of its matrix (:func:`v6bench.core.frames.check`)."""
    for key in ("ext_headers", "icmp_echo", "ext_headers_scope", "ports", "foreground"):
        if key in t and not isinstance(t[key], str):
            raise UsageError(f"expected a string, got {t[key]!r}", (*where, key))
    for key in ("flows", "addresses"):
        if key in t and (not isinstance(t[key], int) or isinstance(t[key], bool)):
            raise UsageError(f"expected a whole number, got {t[key]!r}", (*where, key))
    runs_s = t.get("runs_s")
    if runs_s is not None and (not isinstance(runs_s, (int, float)) or isinstance(runs_s, bool)):
        raise UsageError(f"expected seconds, got {runs_s!r}", (*where, "runs_s"))
    traffic = Traffic(t.get("ext_headers"), t.get("icmp_echo"), t.get("flows", 1), t.get("ext_headers_scope", "all"),
                      None if runs_s is None else float(runs_s), t.get("ports", "auto"),
                      t.get("preliminary_connections", Traffic.preliminary_connections),
                      t.get("preliminary_rate_fps", Traffic.preliminary_rate_fps), t.get("foreground", Traffic.foreground),
                      t.get("addresses", 1))
    for j, mix in enumerate(mx.mixes):
        for n, fs in enumerate(mx.frame_sizes):
            for bi in sorted({d == "bi" for d in mx.directions}):
                try:
                    frames.check(traffic, mix, fs, bi, mesh=k.mesh)
                except UsageError as e:
                    raise place_in_test(e, where, j, n) from None
    return traffic


def _design(d: dict) -> Design:
    only_keys(d, ("order", "seed", "sequential", "max_blocks", "precision_pct"), ("design",))
    order = d.get("order", "randomized")
    if order not in DESIGN_ORDERS:
        raise UsageError(f"{order!r} is not one of {', '.join(DESIGN_ORDERS)}", ("design", "order"))
    seed = d.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 63):
        raise UsageError(f"expected a whole number 0..2^63-1, got {seed!r}", ("design", "seed"))
    return Design(order, seed, *_sequential(d, order))


def _sequential(d: dict, order: str) -> tuple[bool, int | None, float | None]:
    """``sequential``, ``max_blocks`` and ``precision_pct`` of ``[design]``
    (docs/methods.md, "Sequential designs")."""
    sequential = d.get("sequential", False)
    if not isinstance(sequential, bool):
        raise UsageError(f"expected true or false, got {sequential!r}", ("design", "sequential"))
    most, precision = d.get("max_blocks"), d.get("precision_pct")
    if not sequential:
        for key in ("max_blocks", "precision_pct"):
            if key in d:
                raise UsageError("applies to sequential = true only", ("design", key))
        return False, None, None
    if order != "randomized":
        raise UsageError("a sequential design adds repetition blocks: it needs order = \"randomized\"",
                         ("design", "sequential"))
    if not isinstance(most, int) or isinstance(most, bool) or not 2 <= most <= 1000:
        raise UsageError(f"expected the most blocks a test may run, 2..1000, got {most!r}", ("design", "max_blocks"))
    if precision is not None and (isinstance(precision, bool) or not isinstance(precision, (int, float))
                                  or not 0 < precision <= 100):
        raise UsageError(f"expected a percentage in (0, 100], got {precision!r}", ("design", "precision_pct"))
    return True, most, None if precision is None else float(precision)


def load(path: str) -> Campaign:
    """The campaign file at ``path``; errors name the file and the field."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}", "file") from None
    return parse_campaign(text, path)
