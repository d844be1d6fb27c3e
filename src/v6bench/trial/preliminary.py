"""RFC 9693's preliminary phase: before a trial through a DUT that keeps
state (NAT44, stateful NAT64, the flowtable data plane: the lab's
``keeps_state``) with RFC
4814's ports, every connection the trial's frames will use is opened, so
that the trial measures forwarding through connections that exist, not
their set-up (RFC 9693 §4: "the preliminary phase").

Each stream walks S source and D destination ports, S·D connections
(core/frames.connection_ports, trial/spec.py). The phase is the trial's
own engine spec with every stream's share set to 1 and
``frame_count`` = S·D × the streams of a sending port, so each stream
sends at least S·D frames and with them every one of its S·D port pairs,
at ``preliminary_rate_fps`` per sending port (below the DUT's connection
establishment rate; at most half the path's line rate and of the DUT's
known limits, :func:`rate_fps`),
without a rate step, runs or histograms, drained
for :data:`DRAIN_S`. It runs right before the trial and outside its
counters and CPU reading; the DUT's table is not emptied first (what it
held from the trial before is refreshed).

Every frame must arrive: a frame lost is a connection the DUT may not
hold, and the trial would count its set-up. A phase that lost frames is
run once more; lost again, the trial stops with an error that names the
rate (or the number of connections) to lower. A connection is kept only
while a frame refreshes it within the DUT's timeout (Linux: 30 s for UDP
that was never answered), which the lab sets to
:data:`~v6bench.core.tester.IDLE_TIMEOUT_S` before the phase where it can
(``dut_timeout_s`` in the record, None where it cannot be read): a trial
whose slowest stream's walk, at the trial's load, comes back to a pair
(``revisit_s``) later than that, the phase's own duration added, is
refused before the phase runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import time
from dataclasses import replace

from .. import engine
from ..core import frames
from ..core.errors import Refused, UsageError
from ..engine.spec import TrialSpec
from ..lab.protocol import Lab
from ..lab.model.dut import DutConfig
from ..engine.result import take_learned_tuples
from . import answers
from .request import TrialRequest

#: The phase's drain [s]: long enough for the DUT's queue, short beside the trial's.
DRAIN_S = 0.5
#: How many times a phase that lost frames is run in all before the trial is refused. siitperf's search
#: retakes a trial whose phase failed to fill the table until one does (its ``binary-rate-alg.sh-sf``); a
#: bound here. Two were too few on Xeon-167: 464XLAT's 128-B search (2026-12-02, run T4) needed a second
#: attempt in 6 of 28 trials, its phase at 10,000/s against the DUT's NDR of some 17,500, and was refused
#: at its 29th when one frame was lost in each of two.
ATTEMPTS = 5
#: The phase's rate is at most this share of the path's line rate, and of any rate the DUT is known to
#: hold (its limiter, its connection set-up limit): a shaped or slow link (large frames on 100M) or a
#: limiter would drop the phase's frames, and a lost frame is a connection not opened.
LINE_SHARE = 0.5


def rate_fps(request: TrialRequest, line_fps: float, dut: DutConfig = DutConfig()) -> float:
    """The phase's rate per sending port [frames/s]: the request's
    ``preliminary_rate_fps``, but at most :data:`LINE_SHARE` of the path's
    line rate ``line_fps`` for the trial's frames, and of the DUT's known
    limits (``dut``: :attr:`~v6bench.lab.model.dut.DutConfig.known_limits_fps`)."""
    caps = [line_fps, *dut.known_limits_fps]
    return min(request.preliminary_rate_fps, LINE_SHARE * min(caps))


def needed(lab: Lab, request: TrialRequest) -> bool:
    """Whether the trial needs the phase: UDP test frames with RFC 4814's
    ports through a DUT that keeps state."""
    return (lab.keeps_state and frames.ports_used(request.ports) == "rfc4814"
            and not request.icmp_echo and request.mesh is None)


def phase_spec(spec: TrialSpec, connections_per_stream: int, rate_fps: float) -> TrialSpec:
    """The phase's engine spec, from the trial's (module docstring). Streams
    that answer connections (:mod:`.answers`) are left out, and the
    streams they answer learn their connections' 4-tuples
    (``learn_tuples``); a port left without a stream does not send."""
    replies = answers.answered(spec)
    streams = tuple(replace(s, share=1, learn_tuples=s.name in replies.values()) for s in spec.streams
                    if s.name not in replies)
    sending = {s.tx_port for s in streams}
    per_port = max(sum(1 for s in streams if s.tx_port == name) for name in sending)
    ports = tuple(replace(p, tx_fps=rate_fps, rate_step=None, tx_run_frames=None) if p.name in sending
                  else replace(p, tx_fps=None, tx_cpu=None, tx_queues=None, rate_step=None, tx_run_frames=None)
                  for p in spec.ports)
    return replace(spec, ports=ports, streams=streams, duration_s=None,
                   frame_count=connections_per_stream * per_port, drain_s=DRAIN_S, export_histograms=False,
                   tx_stamp_check=False)


def run(spec: TrialSpec, record: dict[str, Any], rate_fps: float, load_fps: float,
        engine_pid_file: Path | None = None, dut_timeout_s: float | None = None,
        between: Callable[[], object] = lambda: None) -> tuple[dict[str, Any], dict[str, str]]:
    """Runs the phase for the trial ``spec`` whose ports record (trial/spec.ports_record)
    is ``record``, at ``rate_fps`` per sending port; the trial's own load
    is ``load_fps`` per direction; ``dut_timeout_s``, how long the DUT keeps
    an idle connection (None: not known). Returns what the trial stores
    under ``preliminary``, and the 4-tuples learned for the streams that
    answer (by the name of the stream answered; :func:`.answers.fill`); raises :class:`UsageError` if the trial's walk
    would come back to a connection later than the DUT keeps it (before
    the phase runs), or if the DUT lost frames of it :data:`ATTEMPTS`
    times in a row. ``between`` runs before each attempt after the first
    (the DUT restabilizes: a lost attempt's fragments would meet the next
    one's, which reuses their Identifications); what it returns is stored
    with each lost attempt's count."""
    per_stream = max(record["connections_per_stream"].values())
    phase = phase_spec(spec, per_stream, rate_fps)
    shares = {p.name: sum(s.share for s in spec.streams if s.tx_port == p.name) for p in spec.ports if p.sends}
    slowest = min(s.share / shares[s.tx_port] for s in spec.streams if s.tx_port in shares)
    revisit_s = per_stream / (load_fps * slowest) if load_fps else None
    phase_s = (phase.frame_count or 0) / rate_fps
    if revisit_s is not None and dut_timeout_s is not None and revisit_s + phase_s > dut_timeout_s:
        raise UsageError(f"the trial's walk comes back to each of its {per_stream:,} connections a stream every "
                         f"{revisit_s:,.0f} s at {load_fps:,.0f} frames/s (after a {phase_s:,.0f}-s "
                         f"preliminary phase), later than the DUT keeps an idle one ({dut_timeout_s:,.0f} s): raise "
                         f"the load, or lower preliminary_connections (--preliminary-connections)",
                         "preliminary_connections")
    lost: list[int] = []
    waited: list[object] = []
    for attempt in range(1, ATTEMPTS + 1):
        if attempt > 1:
            waited.append(between())
        started = time.monotonic()
        eng = engine.run_trial(phase, pid_file=engine_pid_file)
        learned = take_learned_tuples(eng)
        took_s = time.monotonic() - started
        tx = sum(s["tx_frames"] for s in eng["streams"])
        rx = sum(s["rx_frames"] for s in eng["streams"])
        if tx and rx >= tx:
            break
        lost.append(tx - rx)
    out = {"connections_per_stream": record["connections_per_stream"], "rate_fps": rate_fps,
           "frames_per_port": phase.frame_count, "tx_frames": tx, "rx_frames": rx, "attempts": attempt,
           "took_s": took_s,
           # How long a stream's walk takes to come back to a pair: its connection must outlive that.
           "revisit_s": revisit_s, "dut_timeout_s": dut_timeout_s,
           # Each refused attempt's loss, and what ``between`` reported before the next (None: nothing waited out).
           **({"lost_by_attempt": lost, "between_attempts": waited} if lost else {})}
    if rx < tx or not tx:
        raise Refused(f"RFC 9693's preliminary phase: the DUT passed {rx:,} of {tx:,} frames at {rate_fps:,.0f} "
                         f"frames/s in {ATTEMPTS} attempts (lost {', '.join(f'{n:,}' for n in lost)}), so not "
                         f"every connection the trial uses was opened; "
                         f"lower the phase's rate (preliminary_rate_fps, --preliminary-rate) below the DUT's "
                         f"connection establishment rate, or its connections (preliminary_connections, "
                         f"--preliminary-connections) below its table's capacity ({arrived(eng)})", "preliminary_rate_fps")
    return out, learned


#: The receive counters a refused phase's message names (docs/engine-spec.md), in words.
ARRIVED = (("fragment_frames", "fragments"), ("incomplete_datagrams", "datagrams left incomplete"),
           ("foreign_frames", "foreign frames"), ("bad_checksum_frames", "bad checksums"),
           ("icmp_error_frames", "ICMP errors"))


def arrived(eng: dict[str, Any]) -> str:
    """What the receiving ports counted beside the test frames in a
    phase's engine result, in words: the nonzero :data:`ARRIVED` counters
    summed over the ports (a refusal's clue: a path that fragments, a DUT
    that answers with errors)."""
    sums = {key: sum(int((p.get("rx") or {}).get(key) or 0) for p in eng.get("ports", [])) for key, _ in ARRIVED}
    seen = [f"{sums[key]:,} {words}" for key, words in ARRIVED if sums[key]]
    return "its last attempt's receivers counted " + (", ".join(seen) if seen else "nothing else")
