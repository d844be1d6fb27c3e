"""The test kinds: name → parameters and procedure.

Each kind's parameters are a frozen dataclass checked by
:func:`v6bench.methods.params.parse`; its procedure runs on a
:class:`~v6bench.core.tester.Tester` bound to one mix, frame size and
direction. Kinds that start from the throughput (latency at
``"throughput"``, back-to-back, recovery, reset) take the NDR the same run
already measured for that point, or search it first with the
``throughput`` parameters given to them (``throughput_search``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..core.errors import UsageError
from ..core.rates import parse_rate
from ..core.frames import Mix
from ..core.repetitions import MIN_PAIRS, MIN_REPETITIONS
from . import back_to_back, latency, loss, mesh, recovery, reset, retry, rr_latency, stack_throughput, stateful, throughput
from ..core.tester import HostTester, Tester


@dataclass(frozen=True)
class Point:
    """Where a test runs: frame size [bytes], link speed [b/s], and the NDR
    [frames/s per direction] already measured there in this run, if any."""

    frame_size: int
    link_speed_bps: float
    known_ndr_fps: float | None = None
    #: The known NDR is only a lower bound: the tester, not the DUT, capped its search.
    known_ndr_is_lower_bound: bool = False
    #: Where the known NDR came from, in words (campaign/runner.known_ndr).
    known_ndr_from: str = "measured earlier in this run"
    #: What the same mix found at the nearest other frame size earlier in the run: where a throughput search
    #: with ``start = "neighbour"`` starts (campaign/runner.neighbour).
    neighbour: throughput.Neighbour | None = None


#: The keys of a ``[[test]]`` table that set the test's frames (core/frames.Traffic) and its throughput search;
#: a kind that sends test frames takes them all (campaign/spec.py).
FRAME_KEYS = ("throughput_search", "ext_headers", "icmp_echo", "flows", "ext_headers_scope", "ports",
              "preliminary_connections", "preliminary_rate_fps", "foreground", "runs_s", "addresses")
#: The ``[matrix]`` keys, which a ``[[test]]`` may set for itself.
MATRIX_KEYS = ("mixes", "frame_sizes", "directions", "repeat", "drain_s", "settle_s")


@dataclass(frozen=True)
class Kind:
    """A test that sends test frames through the DUT (a :class:`~v6bench.core.tester.Tester`'s trials).

    What it declares for a campaign (campaign/spec.py, campaign/fitting.py):
    the ``[[test]]`` keys it takes (:data:`FRAME_KEYS`, the matrix's, its
    parameters'), whether its frames are mesh traffic (``mesh``: topology
    ``mesh:N``), the DUT resets it makes (``resets``), and whether it
    opens connections through a DUT that keeps state."""

    name: str
    params: type
    needs_throughput: Callable[[Any], bool]
    procedure: Callable[[Tester, Any, Point, float | None], dict]
    summary: str
    #: The report compares this kind's repetitions between families and
    #: scenarios (report/samples.py): see :func:`default_design`.
    compared: bool = False
    #: Whether the report compares the families inside a test whose mix carries both (latency, reset: each
    #: family's own values in every trial); a throughput search is its mix's, compared only between tests of one
    #: family each (:func:`least_blocks`).
    families_in_a_mix: bool = True
    #: The test opens connections through a DUT that keeps state (RFC 9693): what it needs of the traffic and
    #: the DUT is trial/fit.check_connections.
    opens_connections: bool = False
    #: Its frames are mesh traffic between every tester of topology ``mesh:N`` (RFC 2889), not t1 to t2.
    mesh: bool = False
    #: The DUT resets a test with these parameters makes (RFC 2544 §26.6): what it needs of the lab.
    resets: Callable[[Any], tuple[str, ...]] = lambda p: ()
    #: It sends test frames (a :class:`HostKind` does not).
    sends_frames = True
    #: The ``[[test]]`` keys it takes besides its parameters: the frames', and every matrix key.
    keys: tuple[str, ...] = FRAME_KEYS
    matrix_keys: tuple[str, ...] = MATRIX_KEYS
    #: Why it refuses a key it does not take (None: it takes them all).
    refuses_why: str = ""
    #: It runs on the tester hosts' own stacks (what it needs of the lab, lab/interface.check_test).
    runs_host_stacks = False

    def check_matrix(self, mixes: tuple[Mix, ...], directions: tuple[str, ...]) -> None:
        """Any mix and direction (its frames are checked against them, core/frames.check)."""

    @property
    def searches(self) -> bool:
        """Whether the test may start from a throughput search (it does with its default parameters)."""
        return self.needs_throughput(self.params())


def _latency(t: Tester, p: latency.Params, pt: Point, ndr: float | None) -> dict:
    loads = []
    for text in p.loads:
        if text == "throughput":
            loads.append(("throughput", ndr))
        else:
            loads.append((text, parse_rate(text).fps(pt.frame_size, t.line_fps)))
    return latency.run(t, p, loads)


@dataclass(frozen=True)
class HostKind:
    """A test of the tester hosts' own stacks (no test frames): one IP
    version at a time (the mixes 100/0 and 0/100), one stored test per
    variant (protocol, message or payload size) and repetition."""

    name: str
    params: type
    variants: Callable[[Any], list[dict]]
    procedure: Callable[[HostTester, Any, int, dict], dict]
    summary: str
    compared: bool = True
    #: Its mixes carry one family each (:class:`Kind`'s field of the same name).
    families_in_a_mix: bool = True
    #: The largest IP payload [bytes] the test sends, which the path must
    #: carry whole (0: the stacks may fragment or segment what they send).
    whole_payload_bytes: Callable[[Any], int] = lambda p: 0
    #: Runs of its ``duration_s`` one test makes on a lab with a router (rr-latency: through the router and
    #: over the baseline link, host/stack_tester.py); what a plan counts (campaign/estimate.py).
    runs_a_point: int = 1
    #: What it declares for a campaign (:class:`Kind`'s fields of the same names): no frames, so none of
    #: :data:`FRAME_KEYS` nor the frames' matrix keys; one direction, t1 to t2; the hosts' own stacks.
    sends_frames = False
    keys: tuple[str, ...] = ()
    matrix_keys: tuple[str, ...] = ("mixes", "directions", "repeat")
    refuses_why: str = "sends no test frames (it uses the hosts' own stacks)"
    runs_host_stacks = True
    mesh = False
    opens_connections = False

    def resets(self, params: Any) -> tuple[str, ...]:
        return ()

    def check_matrix(self, mixes: tuple[Mix, ...], directions: tuple[str, ...]) -> None:
        """One family a mix (``"100/0"``, ``"0/100"``), t1 to t2 only; errors name the test's field."""
        for j, mix in enumerate(mixes):
            if str(mix) not in ("100/0", "0/100"):
                raise UsageError(f"{mix}: {self.name} measures one family at a time; use \"100/0\" and \"0/100\"",
                                 ("mixes", j))
        if "bi" in directions:
            raise UsageError(f"{self.name} runs from t1 to t2; use [\"uni\"]", "directions")


KINDS: dict[str, Kind | HostKind] = {k.name: k for k in (
    Kind("throughput", throughput.Params, lambda p: False,
         lambda t, p, pt, ndr: throughput.run(t, p, pt.frame_size, pt.neighbour), "NDR and PDR (RFC 2544 §26.1, MLRsearch)", True,
         families_in_a_mix=False),
    Kind("loss", loss.Params, lambda p: False, lambda t, p, pt, ndr: loss.run(t, p), "frame loss rate (RFC 2544 §26.3)"),
    Kind("latency", latency.Params, lambda p: "throughput" in p.loads, _latency,
         "latency, PDV and IPDV (RFC 2544 §26.2, RFC 8219 §7.2-7.3)", True),
    Kind("back-to-back", back_to_back.Params, lambda p: True, lambda t, p, pt, ndr: back_to_back.run(t, p, ndr),
         "back-to-back frames (RFC 9004)"),
    Kind("recovery", recovery.Params, lambda p: True, lambda t, p, pt, ndr: recovery.run(t, p, ndr),
         "system recovery (RFC 2544 §26.5)"),
    Kind("reset", reset.Params, lambda p: True, lambda t, p, pt, ndr: reset.run(t, p, ndr), "reset (RFC 2544 §26.6)",
         True, resets=lambda p: tuple(p.kinds)),
    Kind("mesh", mesh.Params, lambda p: False, lambda t, p, pt, ndr: mesh.run(t, p, pt.frame_size, pt.link_speed_bps),
         "loss per flow under full or partial mesh traffic (RFC 2889 §5.1; topology mesh:N)", mesh=True),
    Kind("connections", stateful.Params, lambda p: False, lambda t, p, pt, ndr: stateful.run(t.connections(), p, t.line_fps),
         "connection-tracking table capacity, connection establishment and tear-down rates (RFC 9693)", True,
         families_in_a_mix=False, opens_connections=True),
    HostKind("stack-throughput", stack_throughput.Params, stack_throughput.variants, stack_throughput.run,
             "TCP/UDP throughput between the tester hosts' stacks by message size, iperf3 (seed 001)"),
    HostKind("rr-latency", rr_latency.Params, rr_latency.variants, rr_latency.run,
             "router latency by UDP request/response, minus a back-to-back baseline (seed 004)",
             whole_payload_bytes=lambda p: max(p.payload_sizes, default=0), runs_a_point=2),
)}


def _own_repeat(params: Any) -> int:
    """The trials a test runs inside each block (its kind's own ``repeat``: latency, back-to-back, recovery,
    reset), each one repetition a side in the report; 1 for a kind without."""
    return getattr(params, "repeat", 1)


def _mix_regression(params: Any, mixes: tuple[Mix, ...]) -> bool:
    """Whether the report fits cost per frame over the IPv6 share from this test: latency over two mixes or more at
    a load given as a rate (report/family_pairs._cost), whose repetition is the block, not the trial."""
    return isinstance(params, latency.Params) and len(mixes) > 1 and any(x != "throughput" for x in params.loads)


def least_blocks(k: Kind | HostKind, params: Any, mixes: tuple[Mix, ...], flows: int, scenarios: int) -> tuple[int, str]:
    """The fewest repetition blocks with which every comparison the report
    draws from a test on its own can be a verdict (docs/report.md, "Minimum
    repetitions"), and which comparison needs them: a mix regression
    :data:`MIN_PAIRS` blocks; a comparison paired inside the trial (a mix
    carrying both families, or two flows) :data:`MIN_PAIRS` trials; one
    between the families' trials or ``scenarios`` (how many the test runs
    in) :data:`MIN_REPETITIONS` a side; a block holds the kind's own
    repetitions. Between scenarios the unit is the lab build, one a
    block (report/builds.py): :data:`MIN_REPETITIONS` blocks whatever a
    block holds. ``(0, "")`` where the test compares nothing on its own:
    a kind the report does not compare, one family in one scenario, or a
    throughput search of a mixed mix (whatever another test holds is not
    counted)."""
    if not k.compared:
        return 0, ""
    own = _own_repeat(params)
    need = (0, "")
    if _mix_regression(params, mixes):
        need = (MIN_PAIRS, f"the mix regression of cost per frame needs {MIN_PAIRS} blocks")
    elif isinstance(params, latency.Params) and (flows > 1 or any(0 < m.ipv6_pct < 100 for m in mixes)):
        need = (-(-MIN_PAIRS // own), f"a paired comparison needs {MIN_PAIRS} trials ({own} a block)")
    elif len({v for m in mixes if k.families_in_a_mix or len(m.versions) == 1 for v, _ in m.versions}) > 1:
        need = (-(-MIN_REPETITIONS // own), f"a comparison needs {MIN_REPETITIONS} repetitions a side ({own} a block)")
    if scenarios > 1 and need[0] < MIN_REPETITIONS:
        need = (MIN_REPETITIONS, f"a comparison between scenarios needs {MIN_REPETITIONS} lab builds a side "
                                 "(one a block)")
    return need


def default_design(k: Kind | HostKind, params: Any, mixes: tuple[Mix, ...]) -> tuple[int, Any]:
    """The repetition blocks a test runs when it gives no count (no
    ``repeat`` or ``blocks`` in it or in ``[matrix]``), and its parameters
    for each block. A kind the report compares runs the fewest blocks a
    verdict takes, :data:`MIN_REPETITIONS`, or :data:`MIN_PAIRS` where the
    report fits a mix regression over its blocks, so that every compared
    point is interleaved with the others block by block (issue 15); a kind
    with trials of its own spreads them over the blocks (latency's 20
    become 4 a block, pooled again by the report). The kinds it does not
    compare run one block as they are. A count that is given is run as
    given (:func:`least_blocks` says whether it is enough)."""
    if not k.compared:
        return 1, params
    n = MIN_PAIRS if _mix_regression(params, mixes) else MIN_REPETITIONS
    own = _own_repeat(params)
    if own > 1:
        params = replace(params, repeat=-(-own // n))
    return n, params


def kind(name: str) -> Kind | HostKind:
    if not isinstance(name, str) or name not in KINDS:
        raise UsageError(f"{name!r} is not a test (known: {', '.join(KINDS)})", "kind")
    return KINDS[name]


def run(k: Kind, tester: Tester, params: Any, point: Point, throughput_search: throughput.Params) -> dict:
    """Runs one test, repeating trials the tester spoiled (:mod:`.retry`);
    adds ``line_fps``, the tester's line rate per direction [frames/s] on
    its path (the report's 100 % of line), and ``throughput_fps`` and where
    it came from when the kind needs it
    (with ``throughput_search_trials``, how many of the test's first trials
    were its own search's), and ``trials_repeated`` when a trial was run again."""
    retrying = retry.Retrying(tester)
    result = {**_run(k, retrying, params, point, throughput_search), "line_fps": tester.line_fps}
    return {**result, "trials_repeated": retrying.repeated} if retrying.repeated else result


def _run(k: Kind, tester: retry.Retrying, params: Any, point: Point, throughput_search: throughput.Params) -> dict:
    ndr = None
    extra: dict = {}
    if k.needs_throughput(params):
        if point.known_ndr_fps is not None:
            ndr, extra = point.known_ndr_fps, {"throughput_from": point.known_ndr_from}
            lower_bound = point.known_ndr_is_lower_bound
        else:
            found = throughput.run(tester, throughput_search, point.frame_size)
            ndr = found["ndr_fps"]
            lower_bound = found["ndr"]["is_lower_bound"]
            # The search's trials come first among the test's: the report leaves them out of the test's own.
            extra = {"throughput_from": "searched for this test", "throughput_search": found,
                     "throughput_search_trials": tester.attempts}
        if not ndr:
            return {**extra, "throughput_fps": ndr, "applicable": False,
                    "reason": "no load passed without loss: there is no throughput to start from"}
        if lower_bound:  # a tester-limited value never becomes a derived load (docs/methods.md, "Tester-limited trials")
            return {**extra, "throughput_fps": ndr, "throughput_is_lower_bound": True, "applicable": False,
                    "reason": "the throughput is only a lower bound (the tester limited its search): no load to start from"}
        extra["throughput_fps"] = ndr
    return {**extra, **k.procedure(tester, params, point, ndr)}
