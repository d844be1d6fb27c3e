"""A campaign file (TOML) checked into a frozen :class:`Campaign`.

```toml
name = "quick"
[lab]        # topology, link_speed, mtu (bytes or "r1-r2=500,…", lab/mtu.py), cpu_arrangement
[dut]        # limit_fps (0 = none); acl = 0 | 1 | 25, acl_at = "in" | "out" | "both",
             # acl_udp_only, nat44, shape (lab/dut.py)
[selftest]   # when = "if-stale" (missing or stale: selftest.stale) | "always" | "never"; frame_sizes
[matrix]     # defaults: mixes, frame_sizes, directions, repeat, drain_s (repeat: blocks;
             # unset, each test runs registry.default_design: enough for a verdict)
[[test]]     # kind = "throughput" | "loss" | ...; matrix keys override
             # the defaults; other keys are the kind's parameters (`repeat`
             # is the kind's own for latency, back-to-back, recovery, reset:
             # trials inside one test; `blocks` is how many repetition blocks
             # the test runs in, [matrix] repeat by default);
             # [test.throughput_search] for kinds that start from throughput;
             # ext_headers = "chain" etc.: IPv6 extension headers (trial/ext_headers.py)
             # icmp_echo = "dut" | "far": ICMP Echo Requests instead of UDP frames
             # kind = "mesh" (lab.topology = "mesh:N"): pattern = "full" | "partial",
             # loads = ["10%", "50%"] per sending port, trial_duration_s
             # kind = "stack-throughput": protocols, message_sizes, duration_s (iperf3)
             # kind = "rr-latency": payload_sizes, mtu_payload, duration_s
             # (host-stack kinds: mixes "100/0" / "0/100" pick the family; no frame_sizes)
             # scenarios = ["name", …]: only in these scenarios (default: all)
[[scenario]] # name; [scenario.lab] and [scenario.dut] keys override [lab] and [dut];
             # control_of = "name": an A/A control, run exactly as that scenario
[design]     # order = "randomized" (default) | "file"; seed = N (default: drawn at
             # the start of a run and recorded with it)
```

With ``order = "randomized"`` a run is a sequence of repetition blocks
(block r holds every point's repetition r, ``repeat`` of the matrix); each
block visits the scenarios in a random order and, in each, runs its points
in a random order, the throughput searches other tests start from first
(runner.schedule).

Every error is one :class:`UsageError` naming the field:
``quick.toml: test[2].frame_sizes[0]: 50 bytes is outside 64..9216``.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import selftest
from ..errors import UsageError
from ..lab.dut import DutConfig
from ..lab.topology import parse_topology
from ..methods import registry, throughput
from ..params import parse
from ..rates import parse_link_speed
from ..trial import ext_headers
from ..trial.request import ICMP_ECHO_TARGETS, Traffic
from ..trial.path import LabPath
from ..lab.mtu import Mtus
from ..lab.mtu import parse as parse_mtu
from ..trial.request import MAX_FRAME, MIN_FRAME, Mix, parse_mix

MATRIX_KEYS = ("mixes", "frame_sizes", "directions", "repeat", "drain_s")
DIRECTIONS = ("uni", "bi")
SELFTEST_WHEN = selftest.WHEN
DESIGN_ORDERS = ("randomized", "file")


@dataclass(frozen=True)
class Design:
    """The run order: ``randomized`` repetition blocks (seeded), or the
    file's order (each point's repetitions one after the other)."""

    order: str = "randomized"
    #: The shuffle's seed; None: drawn when a run starts (and recorded with it).
    seed: int | None = None


@dataclass(frozen=True)
class LabSpec:
    topology: str = "a"
    link_speed_bps: float = 1e9
    mtu: Mtus = Mtus()
    cpu_arrangement: str | None = None


@dataclass(frozen=True)
class Matrix:
    mixes: tuple[Mix, ...]
    frame_sizes: tuple[int, ...]
    directions: tuple[str, ...]
    repeat: int
    drain_s: float


@dataclass(frozen=True)
class TestSpec:
    index: int
    kind: str
    params: Any
    matrix: Matrix
    throughput_search: throughput.Params
    #: Extension headers or ICMP echo instead of plain UDP frames (trial/request.py).
    traffic: Traffic = Traffic()


@dataclass(frozen=True)
class Scenario:
    """One lab and DUT configuration of a campaign and the tests (by index)
    that run on it. A campaign without ``[[scenario]]`` has one, named ""."""

    name: str
    lab: LabSpec
    dut: DutConfig
    tests: tuple[int, ...]
    #: An A/A control: the same lab and DUT as the scenario named here, compared with it like any two series.
    control_of: str = ""


@dataclass(frozen=True)
class Campaign:
    name: str
    path: str
    text: str
    sha256: str
    lab: LabSpec
    dut: DutConfig
    selftest_when: str
    selftest_frame_sizes: tuple[int, ...]
    tests: tuple[TestSpec, ...] = field(default=())
    scenarios: tuple[Scenario, ...] = field(default=())
    design: Design = Design()


def _table(d: dict, key: str, where: str) -> dict:
    v = d.get(key, {})
    if not isinstance(v, dict):
        raise UsageError(f"{where}{key}: expected a table")
    return v


def _only(d: dict, known: tuple[str, ...], where: str) -> None:
    for k in d:
        if k not in known:
            raise UsageError(f"{where}{k}: unknown key (known: {', '.join(known)})")


def _list(v: Any, where: str) -> list:
    if not isinstance(v, list) or not v:
        raise UsageError(f"{where}: expected a non-empty list")
    return v


def frame_sizes(v: Any, where: str) -> tuple[int, ...]:
    """A non-empty list of frame sizes in bytes (incl. FCS), each in
    MIN_FRAME[4]..MAX_FRAME; errors name ``where``."""
    out = []
    for i, x in enumerate(_list(v, where)):
        if not isinstance(x, int) or isinstance(x, bool):
            raise UsageError(f"{where}[{i}]: expected a whole number of bytes, got {x!r}")
        if not MIN_FRAME[4] <= x <= MAX_FRAME:
            raise UsageError(f"{where}[{i}]: {x} bytes is outside {MIN_FRAME[4]}..{MAX_FRAME}")
        out.append(x)
    return tuple(out)


def _matrix(d: dict, base: Matrix | None, where: str) -> Matrix:
    def get(key, conv, default):
        return conv(d[key], where + key) if key in d else default

    def mixes(v, w):
        out = []
        for i, x in enumerate(_list(v, w)):
            if not isinstance(x, str):
                raise UsageError(f"{w}[{i}]: expected a string such as \"90/10\", got {x!r}")
            try:
                out.append(parse_mix(x))
            except UsageError as e:
                raise UsageError(f"{w}[{i}]: {str(e).removeprefix('--mix: ')}") from None
        return tuple(out)

    def directions(v, w):
        for i, x in enumerate(_list(v, w)):
            if x not in DIRECTIONS:
                raise UsageError(f"{w}[{i}]: {x!r} is not uni or bi")
        return tuple(v)

    def positive_int(v, w):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1000:
            raise UsageError(f"{w}: expected a whole number 1..1000, got {v!r}")
        return v

    def drain(v, w):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 600:
            raise UsageError(f"{w}: expected seconds in 0..600, got {v!r}")
        return float(v)

    # Default sizes: RFC 2544 §9's, with 84 for 64, which cannot carry IPv6/UDP and the signature
    # (a default that fails with the default mixes would be no default).
    b = base or Matrix((Mix(100, 0), Mix(0, 100)), (84, 128, 256, 512, 1024, 1280, 1518), ("uni",), 1, 2.0)
    return Matrix(get("mixes", mixes, b.mixes), get("frame_sizes", frame_sizes, b.frame_sizes),
                  get("directions", directions, b.directions), get("repeat", positive_int, b.repeat),
                  get("drain_s", drain, b.drain_s))


def parse_campaign(text: str, path: str = "<campaign>") -> Campaign:
    """Parses and checks a campaign; every error names its field."""
    name = Path(path).name
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{name}: not valid TOML: {e}") from None
    return from_dict(d, text, path)


def from_dict(d: dict, text: str, path: str) -> Campaign:
    """A campaign from its parsed table (``text`` is kept with the run)."""
    try:
        return _campaign(d, text, path)
    except UsageError as e:
        raise UsageError(f"{Path(path).name}: {e}") from None


def _lab(lab_d: dict, where: str) -> LabSpec:
    _only(lab_d, ("topology", "link_speed", "mtu", "cpu_arrangement"), where)
    topo = lab_d.get("topology", "a")
    try:
        parse_topology(str(topo))
        speed = parse_link_speed(str(lab_d.get("link_speed", "1G")))
    except UsageError as e:
        raise UsageError(f"{where}{'topology' if 'topolog' in str(e) else 'link_speed'}: {str(e).split(': ', 1)[-1]}") from None
    mtu_v = lab_d.get("mtu", 1500)
    if not isinstance(mtu_v, (int, str)) or isinstance(mtu_v, bool):
        raise UsageError(f"{where}mtu: expected bytes or \"LINK=BYTES,…\", got {mtu_v!r}")
    try:
        mtu = parse_mtu(mtu_v)
        mtu.check([(a.node, b.node) for a, b in parse_topology(str(topo)).links()])
    except UsageError as e:
        raise UsageError(f"{where}mtu: {str(e).removeprefix('--mtu: ')}") from None
    arr = lab_d.get("cpu_arrangement")
    if arr not in (None, "split", "inline"):
        raise UsageError(f"{where}cpu_arrangement: {arr!r} is not split or inline")
    return LabSpec(str(topo), speed, mtu, arr)


def _dut(dut_d: dict, lab: LabSpec, where: str) -> DutConfig:
    dut = parse(DutConfig, dut_d, where.rstrip("."))
    if dut.tunnel and lab.topology != "b":
        raise UsageError(f"{where}tunnel: {dut.tunnel} runs between R1 and R2: it needs lab.topology = \"b\", not {lab.topology!r}")
    return dut


SCENARIO_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def _scenarios(d: dict, lab_d: dict, dut_d: dict, n_tests: int, selected: dict[int, list]) -> tuple[Scenario, ...]:
    """The ``[[scenario]]`` tables, each lab and DUT merged over the top-level ones."""
    raw = d.get("scenario")
    if raw is None:
        for i, names in selected.items():
            raise UsageError(f"test[{i}].scenarios: the campaign has no [[scenario]] tables")
        lab = _lab(lab_d, "lab.")
        return (Scenario("", lab, _dut(dut_d, lab, "dut."), tuple(range(n_tests))),)
    if not isinstance(raw, list) or not raw:
        raise UsageError("scenario: expected [[scenario]] tables")
    out: list[Scenario] = []
    for j, sc in enumerate(raw):
        where = f"scenario[{j}]."
        if not isinstance(sc, dict):
            raise UsageError(f"scenario[{j}]: expected a [[scenario]] table")
        _only(sc, ("name", "description", "lab", "dut", "control_of"), where)
        name = sc.get("name")
        if not isinstance(name, str) or not name or not set(name) <= SCENARIO_NAME_CHARS:
            raise UsageError(f"{where}name: expected a name of a-z, 0-9 and -, got {name!r}")
        if name in (x.name for x in out):
            raise UsageError(f"{where}name: {name!r} is used twice")
        if "control_of" in sc:
            of = next((x for x in out if x.name == sc["control_of"]), None)
            if of is None:
                raise UsageError(f"{where}control_of: {sc['control_of']!r} is not a scenario above this one "
                                 f"(known: {', '.join(x.name for x in out) or 'none'})")
            for key in ("lab", "dut"):
                if key in sc:
                    raise UsageError(f"{where}{key}: a control runs exactly as {of.name!r}: it takes no {key} of its own")
            out.append(Scenario(name, of.lab, of.dut, (), of.name))
            continue
        lab = _lab({**lab_d, **_table(sc, "lab", where)}, where + "lab.")
        dut = _dut({**dut_d, **_table(sc, "dut", where)}, lab, where + "dut.")
        out.append(Scenario(name, lab, dut, ()))
    names = [x.name for x in out]
    for i, sel in selected.items():
        for k, n in enumerate(sel):
            if n not in names:
                raise UsageError(f"test[{i}].scenarios[{k}]: {n!r} is not a scenario (known: {', '.join(names)})")
    return tuple(Scenario(x.name, x.lab, x.dut, tuple(i for i in range(n_tests) if i not in selected or x.name in selected[i]),
                          x.control_of) for x in out)


def _campaign(d: dict, text: str, path: str) -> Campaign:
    _only(d, ("name", "description", "lab", "dut", "selftest", "matrix", "test", "scenario", "design"), "")
    cname = d.get("name", Path(path).stem)
    if not isinstance(cname, str) or not cname:
        raise UsageError("name: expected a non-empty string")
    lab_d, dut_d = _table(d, "lab", ""), _table(d, "dut", "")
    st = _table(d, "selftest", "")
    _only(st, ("when", "frame_sizes"), "selftest.")
    when = st.get("when", "if-stale")
    if when not in SELFTEST_WHEN:
        raise UsageError(f"selftest.when: {when!r} is not one of {', '.join(SELFTEST_WHEN)}")
    st_sizes = frame_sizes(st["frame_sizes"], "selftest.frame_sizes") if "frame_sizes" in st else (64, 128, 512, 1518)
    m = _table(d, "matrix", "")
    _only(m, MATRIX_KEYS, "matrix.")
    base = _matrix(m, None, "matrix.")
    tests_d = d.get("test", [])
    if not isinstance(tests_d, list) or not tests_d:
        raise UsageError("test: a campaign needs at least one [[test]]")
    selected = {i: _list(t["scenarios"], f"test[{i}].scenarios") for i, t in enumerate(tests_d) if "scenarios" in t}
    scenarios = _scenarios(d, lab_d, dut_d, len(tests_d), selected)
    paths = {sc.name: LabPath.build(sc.lab.topology, sc.lab.link_speed_bps, sc.lab.mtu, sc.dut.tunnel) for sc in scenarios}
    tests = []
    for i, t in enumerate(tests_d):
        where = f"test[{i}]."
        if "kind" not in t:
            raise UsageError(f"{where}kind: missing (one of {', '.join(registry.KINDS)})")
        try:
            k = registry.kind(t["kind"])
        except UsageError as e:
            raise UsageError(f"{where}{e}") from None
        # `repeat` in a [[test]] is the kind's own repetitions if it has them
        # (latency, back-to-back, recovery, reset); otherwise the test's.
        own_repeat = "repeat" in k.params.__dataclass_fields__
        matrix_keys = tuple(key for key in MATRIX_KEYS if not (own_repeat and key == "repeat"))
        if "blocks" in t and "repeat" in matrix_keys and "repeat" in t:
            raise UsageError(f"{where}blocks: give repeat or blocks, not both (for {k.name} they are the same)")
        blocks = {}
        if "blocks" in t:
            b = t["blocks"]
            if not isinstance(b, int) or isinstance(b, bool) or not 1 <= b <= 1000:
                raise UsageError(f"{where}blocks: expected a whole number 1..1000, got {b!r}")
            blocks = {"repeat": b}
        mx = _matrix({**{key: t[key] for key in matrix_keys if key in t}, **blocks}, base, where)
        matrix_keys += ("blocks",)
        t = {key: v for key, v in t.items() if key != "scenarios"}
        if isinstance(k, registry.HostKind):
            spec = _host_test(i, k, t, mx, where)
        else:
            for fs in mx.frame_sizes:
                for mix in mx.mixes:
                    smallest = max(MIN_FRAME[v] for v, _ in mix.versions)
                    if fs < smallest:
                        raise UsageError(f"{where}frame_sizes: {fs} bytes cannot carry IPv6 (mix {mix}); the smallest is {smallest}")
            if k.name == "mesh" and "bi" in mx.directions:
                raise UsageError(f"{where}directions: the mesh pattern sets the directions; use [\"uni\"]")
            traffic = Traffic(_ext_headers(t.get("ext_headers"), mx, where), _icmp_echo(t.get("icmp_echo"), mx, where))
            rest = {key: v for key, v in t.items()
                    if key not in matrix_keys + ("kind", "throughput_search", "ext_headers", "icmp_echo")}
            params = parse(k.params, rest, where.rstrip("."))
            ts = parse(throughput.Params, _table(t, "throughput_search", where), where + "throughput_search")
            spec = TestSpec(i, k.name, params, mx, ts, traffic)
        if not {"repeat", "blocks"} & (set(m) | set(t)):  # no count given: enough for a verdict
            n, params = registry.default_design(k, spec.params)
            spec = replace(spec, params=params, matrix=replace(spec.matrix, repeat=n))
        for sc in scenarios:
            if i in sc.tests:
                _check_on_lab(spec, sc.lab, paths[sc.name], f"scenario {sc.name}: {where}" if sc.name else where)
        tests.append(spec)
    first = scenarios[0]
    return Campaign(cname, path, text, hashlib.sha256(text.encode()).hexdigest(), first.lab, first.dut, when, st_sizes,
                    tuple(tests), scenarios, _design(_table(d, "design", "")))


def _design(d: dict) -> Design:
    _only(d, ("order", "seed"), "design.")
    order = d.get("order", "randomized")
    if order not in DESIGN_ORDERS:
        raise UsageError(f"design.order: {order!r} is not one of {', '.join(DESIGN_ORDERS)}")
    seed = d.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 63):
        raise UsageError(f"design.seed: expected a whole number 0..2^63-1, got {seed!r}")
    return Design(order, seed)


def _check_on_lab(t: TestSpec, lab: LabSpec, lab_path: LabPath, where: str) -> None:
    """What a test needs of the lab it runs on (``lab_path``: its path from
    t1 to t2): a path that carries its frames, a mesh topology for mesh, a
    router for echo to the DUT."""
    if isinstance(registry.kind(t.kind), registry.HostKind):
        for j, mix in enumerate(t.matrix.mixes):
            why = lab_path.problem(4 if mix.ipv4_pct else 6, 0)
            if why:
                raise UsageError(f"{where}mixes[{j}]: {mix}: {why}")
        return
    for fs in t.matrix.frame_sizes:
        for mix in t.matrix.mixes:
            for v, _ in mix.versions:
                why = lab_path.problem(v, fs)
                if why:
                    raise UsageError(f"{where}mixes: {mix}: {why}")
    if t.kind == "mesh" and not lab.topology.startswith("mesh:"):
        raise UsageError(f"{where}kind: mesh needs lab.topology = \"mesh:N\" (N tester ports on one router), not {lab.topology!r}")
    if t.traffic.icmp_echo == "dut" and lab.topology == "p2p":
        raise UsageError(f"{where}icmp_echo: topology p2p has no router; use \"far\"")


def _host_test(i: int, k: registry.HostKind, t: dict, mx: Matrix, where: str) -> TestSpec:
    """A host-stack test: one family per mix, no frames, one direction."""
    for key in ("frame_sizes", "ext_headers", "icmp_echo", "throughput_search"):
        if key in t:
            raise UsageError(f"{where}{key}: {k.name} sends no test frames (it uses the hosts' own stacks)")
    for j, mix in enumerate(mx.mixes):
        if str(mix) not in ("100/0", "0/100"):
            raise UsageError(f"{where}mixes[{j}]: {mix}: {k.name} measures one family at a time; use \"100/0\" and \"0/100\"")
    if "bi" in mx.directions:
        raise UsageError(f"{where}directions: {k.name} runs from t1 to t2; use [\"uni\"]")
    rest = {key: v for key, v in t.items() if key not in MATRIX_KEYS + ("kind",)}
    params = parse(k.params, rest, where.rstrip("."))
    return TestSpec(i, k.name, params, Matrix(mx.mixes, (), ("uni",), mx.repeat, mx.drain_s), throughput.Params())


def _ext_headers(v: Any, mx: Matrix, where: str) -> str | None:
    """A test's ``ext_headers`` preset, checked against its mixes and sizes."""
    if v is None:
        return None
    if not isinstance(v, str) or v not in ext_headers.LENGTHS:
        raise UsageError(f"{where}ext_headers: {v!r} is not one of {', '.join(ext_headers.PRESETS)}")
    for mix in mx.mixes:
        for fs in mx.frame_sizes:
            why = ext_headers.problem(v, mix, fs, MIN_FRAME[6])
            if why:
                raise UsageError(f"{where}ext_headers: {why}")
    return v


def _icmp_echo(v: Any, mx: Matrix, where: str) -> str | None:
    """A test's ``icmp_echo`` target, checked against its directions (the
    lab in :func:`_check_on_lab`)."""
    if v is None:
        return None
    if v not in ICMP_ECHO_TARGETS:
        raise UsageError(f"{where}icmp_echo: {v!r} is not one of {', '.join(ICMP_ECHO_TARGETS)}")
    if "bi" in mx.directions:
        raise UsageError(f"{where}icmp_echo: echo traffic is already two-way; set directions = [\"uni\"]")
    return v


def load(path: str) -> Campaign:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UsageError(f"FILE: cannot read {path}: {e.strerror}") from None
    return parse_campaign(text, path)
