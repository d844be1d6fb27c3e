"""RFC 9693's preliminary phase (trial/preliminary.py) and the ports a
stream walks through a DUT that keeps state (core/frames.connection_ports):
every pair of the walk is sent in the phase, the phase is the trial's
frames at its own rate, and only trials that need it run it."""

from __future__ import annotations

import dataclasses
import math

import pytest

from test_trial_spec import lab_of
from v6bench.core import frames
from v6bench.core.errors import UsageError
from v6bench.lab.model.dut import DutConfig
from v6bench.trial import preliminary
from v6bench.trial.connections import port_walk
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec, ports_record


@pytest.mark.parametrize("n", [1, 2, 99, 1000, 10_000, 64512, 64513, 200_000, 4_000_000])
def test_a_walk_holds_n_connections_in_coprime_ranges_about_root_n_each(n):
    for src_values in (16350, 48161, 64512):
        s, d = frames.connection_ports(n, src_values)
        assert s * d >= n and math.gcd(s, d) == 1 and s <= src_values and d <= 49151
        assert s == min(src_values, math.isqrt(n - 1) + 1)
    assert port_walk(1000) == frames.connection_ports(1000, 64512)


def test_every_pair_of_a_walk_is_in_its_first_s_times_d_frames():
    # Frame k carries the (k mod S)-th source and (k mod D)-th destination value of their cycles
    # (docs/engine-spec.md, "Walks"), in any order of each: coprime S and D give every pair once.
    for n in (10, 1000, 5000):
        s, d = frames.connection_ports(n, 64512)
        assert len({(k % s, k % d) for k in range(s * d)}) == s * d


def test_connections_beyond_the_ranges_are_refused_naming_the_key():
    with pytest.raises(UsageError) as e:
        frames.connection_ports(16350 * 49150 + 1, 16350)
    assert e.value.field == ("preliminary_connections",)
    with pytest.raises(UsageError) as e:
        port_walk(0)
    assert e.value.field == ("connections",)


def stateful_lab():
    return dataclasses.replace(lab_of("a"), dut_config=DutConfig(nat44=True))


def test_only_rfc_4814_udp_frames_through_a_dut_that_keeps_state_need_the_phase():
    req = make_request("50/50", 128, "10kfps", 2, False)
    assert preliminary.needed(stateful_lab(), req)
    assert not preliminary.needed(lab_of("a"), req)
    assert not preliminary.needed(stateful_lab(), dataclasses.replace(req, ports="fixed"))
    assert not preliminary.needed(stateful_lab(), make_request("100/0", 128, "1kfps", 2, False, icmp_echo="far"))


def test_the_phase_is_the_trials_streams_each_sending_every_pair_at_the_phases_rate():
    lab = stateful_lab()
    req = dataclasses.replace(make_request("90/10", 128, "100kfps", 2, False, flows=2, preliminary_connections=1000,
                                           preliminary_rate_fps=5000), order_seed=3)
    trial = engine_spec(lab, req, 100_000)
    record = ports_record(lab, req)
    per_stream = max(record["connections_per_stream"].values())
    phase = preliminary.phase_spec(trial, per_stream, req.preliminary_rate_fps)
    assert [(s.name, s.walk) for s in phase.streams] == [(s.name, s.walk) for s in trial.streams]
    assert {s.share for s in phase.streams} == {1}
    senders = [p for p in phase.ports if p.sends]
    assert [p.name for p in senders] == ["t1"] and senders[0].tx_fps == 5000
    assert phase.duration_s is None and phase.frame_count == 4 * per_stream and phase.drain_s == preliminary.DRAIN_S
    assert not phase.export_histograms
    # Each stream walks the ports its record says, so its share of the phase sends each of its pairs.
    for s in trial.streams:
        (src,), (dst,) = s.walk.src_port, s.walk.dst_port
        lo, hi = map(int, src.split("-"))
        d_lo, d_hi = map(int, dst.split("-"))
        assert (hi - lo + 1) * (d_hi - d_lo + 1) == per_stream == 32 * 33


def test_the_phase_keeps_below_half_the_line_rate_and_the_duts_known_limits():
    req = make_request("100/0", 1518, "1kfps", 1, False, preliminary_rate_fps=10_000)
    assert preliminary.rate_fps(req, 8127.0) == pytest.approx(4063.5)  # 1518-B frames on 100M
    assert preliminary.rate_fps(req, 844_594.6) == 10_000
    assert preliminary.rate_fps(req, 844_594.6, DutConfig(nat44=True, limit_fps=8000)) == 4000
    assert preliminary.rate_fps(req, 844_594.6, DutConfig(nat44=True, max_new_fps=2000)) == 1000


def test_a_walk_that_comes_back_later_than_the_dut_keeps_a_connection_is_refused_before_the_phase(monkeypatch):
    """1,056 connections a stream, 8 frames/s of which IPv6's two flows carry 5 % each: each of their pairs
    comes back every 2,640 s, far past the 300 s the DUT keeps an idle connection: refused before the
    phase sends anything, naming the key."""
    from v6bench import engine
    from v6bench.core.errors import UsageError
    monkeypatch.setattr(engine, "run_trial", lambda *a, **k: pytest.fail("the phase ran"))
    lab = stateful_lab()
    req = dataclasses.replace(make_request("90/10", 128, "8fps", 2, False, flows=2, preliminary_connections=1000,
                                           preliminary_rate_fps=5000), order_seed=3)
    trial, record = engine_spec(lab, req, 8), ports_record(lab, req)
    with pytest.raises(UsageError) as e:
        preliminary.run(trial, record, 5000, 8, dut_timeout_s=300.0)
    assert e.value.field == ("preliminary_connections",) and "every 2,640 s at 8 frames/s" in e.value.message
    assert "later than the DUT keeps an idle one (300 s)" in e.value.message


def test_a_bidirectional_phase_opens_t1s_connections_learning_them_for_t2s_answers(monkeypatch):
    """Both ways through a DUT that keeps state, t2's streams answer t1's (trial/answers.py): the phase
    sends only t1's streams, each learning the 4-tuples its frames arrive with, and t2 does not send; the
    trial's answers then walk what the phase learned."""
    from v6bench import engine
    from v6bench.trial import answers
    lab = stateful_lab()
    req = dataclasses.replace(make_request("50/50", 128, "10kfps", 2, True, preliminary_connections=100,
                                           preliminary_rate_fps=5000), order_seed=3)
    trial, record = engine_spec(lab, req, 10_000), ports_record(lab, req)
    assert answers.answered(trial) == {"ipv4-t2-t1": "ipv4-t1-t2", "ipv6-t2-t1": "ipv6-t1-t2"}
    phase = preliminary.phase_spec(trial, 110, 5000)
    assert sorted((s.name, s.learn_tuples) for s in phase.streams) == [("ipv4-t1-t2", True), ("ipv6-t1-t2", True)]
    assert [p.name for p in phase.ports if p.sends] == ["t1"] and phase.frame_count == 220
    t2 = next(p for p in phase.ports if p.name == "t2")
    assert (t2.tx_cpu, t2.tx_queues) == (None, None)

    def run_trial(spec, **_):
        return {"streams": [{"name": s.name, "tx_frames": 110, "rx_frames": 110,
                             "learned_tuples": {"count": 110, "missing": 0, "records": f"r-{s.name}"}}
                            for s in spec.streams]}
    monkeypatch.setattr(engine, "run_trial", run_trial)
    out, learned = preliminary.run(trial, record, 5000, 10_000, dut_timeout_s=300.0)
    assert learned == {"ipv4-t1-t2": "r-ipv4-t1-t2", "ipv6-t1-t2": "r-ipv6-t1-t2"} and out["rx_frames"] == 220
    filled = answers.fill(trial, learned)
    assert {s.name: s.walk.reply_to for s in filled.streams if s.tx_port == "t2"} == \
        {"ipv4-t2-t1": "r-ipv4-t1-t2", "ipv6-t2-t1": "r-ipv6-t1-t2"}


def test_a_refused_phase_names_what_else_arrived():
    """The refusal's clue: the receivers' fragments, incomplete datagrams,
    foreign frames, bad checksums and ICMP errors, summed over the ports,
    the nonzero ones only (464XLAT's 1498-B frames arrive as fragments)."""
    eng = {"ports": [{"name": "t1", "rx": {"fragment_frames": 0, "icmp_error_frames": 3}},
                     {"name": "t2", "rx": {"fragment_frames": 20_200, "incomplete_datagrams": 7, "foreign_frames": 0}},
                     {"name": "t3"}]}
    assert preliminary.arrived(eng) == ("its last attempt's receivers counted 20,200 fragments, 7 datagrams left incomplete, "
                            "3 ICMP errors")
    assert preliminary.arrived({"ports": [{"name": "t2", "rx": {"fragment_frames": 0}}]}) == \
        "its last attempt's receivers counted nothing else"


def test_a_phase_that_lost_frames_runs_again_after_the_dut_restabilized_up_to_its_attempts(monkeypatch):
    """A lost frame: the DUT restabilizes (``between``) and the phase runs again, passing at its last attempt;
    one more loss and it is refused, naming each attempt's loss."""
    from v6bench import engine
    from v6bench.core.errors import Refused
    lab = stateful_lab()
    req = dataclasses.replace(make_request("100/0", 128, "10kfps", 2, False, preliminary_connections=100,
                                           preliminary_rate_fps=5000), order_seed=3)
    trial, record = engine_spec(lab, req, 10_000), ports_record(lab, req)
    events: list[str] = []

    def phases(losses: list[int]):
        def run_trial(spec, **_):
            lost = losses.pop(0)
            events.append(f"phase lost {lost}")
            return {"streams": [{"name": s.name, "tx_frames": 110, "rx_frames": 110 - lost} for s in spec.streams],
                    "ports": []}
        return run_trial

    monkeypatch.setattr(engine, "run_trial", phases([1] * (preliminary.ATTEMPTS - 1) + [0]))
    out, _ = preliminary.run(trial, record, 5000, 10_000, dut_timeout_s=300.0,
                             between=lambda: events.append("wait") or {"waited_s": 1.5})
    assert out["attempts"] == preliminary.ATTEMPTS == 5 and out["rx_frames"] == out["tx_frames"]
    assert events == ["phase lost 1"] + ["wait", "phase lost 1"] * 3 + ["wait", "phase lost 0"]
    lost = out["lost_by_attempt"]  # one frame a stream in each of the 4 lost attempts
    assert len(lost) == 4 and len(set(lost)) == 1 and lost[0] >= 1 and out["between_attempts"] == [{"waited_s": 1.5}] * 4
    events.clear()
    monkeypatch.setattr(engine, "run_trial", phases([1, 2, 3, 4, 5]))
    with pytest.raises(Refused, match=r"in 5 attempts \(lost 1, 2, 3, 4, 5\)"):
        preliminary.run(trial, record, 5000, 10_000, dut_timeout_s=300.0, between=lambda: events.append("wait"))
    assert events.count("wait") == 4
