"""The engine spec a trial becomes, checked by the engine's own validator
(`v6bench-engine check`, no root): ports, gateways, CPUs, exact mixes."""

import json
import subprocess
from pathlib import Path

import pytest

from v6bench.lab.emulated.build import describe_nodes
from v6bench.lab.model.cpus import plan
from v6bench.lab.model.site import Site
from v6bench.lab.model.mtu import Mtus
from v6bench.lab.emulated.state import LabState
from v6bench.lab.model.topology import parse_topology
from v6bench.core.errors import UsageError
from v6bench.core.frames import FLOW_SRC_PORT
from v6bench.trial.request import make_request
from v6bench.trial.path import LabPath
from v6bench.trial.spec import engine_spec


def lab_of(topology: str, mtu: Mtus = Mtus(), cpus: tuple[int, ...] = (0, 1)) -> LabState:
    """A recorded lab as `lab/emulated/build.py` writes it, without building it."""
    topo = parse_topology(topology)
    macs = {(n.name, i.name): "02:00:00:00:00:01" for n in topo.nodes for i in n.interfaces}
    nodes = tuple(describe_nodes(Site(Path("/run/v6bench"), "v6b-"), topo, macs))
    return LabState(topo.name, 1e9, mtu, "up", False, 1, 0.0, plan("split", cpus), nodes, (), {}, "test")


def check(engine_bin, spec: dict) -> dict:
    p = subprocess.run([str(engine_bin), "check", "--spec", "-"], input=json.dumps(spec), capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("topology,gw1,gw2", [
    ("a", ("198.18.0.1", "2001:2::1"), ("198.19.0.1", "2001:2:0:1::1")),
    ("chain:3", ("198.18.0.1", "2001:2::1"), ("198.19.0.1", "2001:2:0:1::1")),
    ("p2p", ("198.18.0.3", "2001:2::3"), ("198.18.0.2", "2001:2::2")),
])
def test_bidirectional_spec_is_valid_and_exact(engine_bin, topology, gw1, gw2):
    req = make_request("90/10", 128, "10kfps", 2, True)
    lab = lab_of(topology)
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    ports = {p["name"]: p for p in spec["ports"]}
    assert (ports["t1"]["gateway_ipv4"], ports["t1"]["gateway_ipv6"]) == gw1
    assert (ports["t2"]["gateway_ipv4"], ports["t2"]["gateway_ipv6"]) == gw2
    assert ports["t1"]["tx_rate"] == {"fps": 10000} and ports["t2"]["tx_rate"] == {"fps": 10000}
    assert ports["t1"]["tx_cpu"] == 0 and spec["rx_cpu"] == 0
    assert ports["t1"]["interface"].startswith("t1-") and ports["t1"]["netns"] == "v6b-t1"
    plan_out = check(engine_bin, spec)
    assert plan_out["rx_priority"] == 1, "the receive thread beside the tester's FIFO NAPI threads (lab/model/cpus.py)"
    frames = {s["name"]: s["frames"] for s in plan_out["streams"]}
    assert frames == {"ipv4-t1-t2": 18000, "ipv6-t1-t2": 2000, "ipv4-t2-t1": 18000, "ipv6-t2-t1": 2000}


def test_a_stalled_sender_slips_rather_than_bursting_into_the_dut(engine_bin):
    """v6bench's trials slip their schedule after a stall (trial/spec.py),
    beyond half the DUT's input queue: 128 of veth's 256 in ``split``."""
    req = make_request("100/0", 128, "10kfps", 1, False)
    lab = lab_of("a")
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    assert spec["after_stall"] == "slip" and spec["tester_limited_backlog_frames"] == 256
    assert check(engine_bin, spec)["slip_after_frames"] == 128
    assert check(engine_bin, {**spec, "after_stall": "catch_up"})["slip_after_frames"] is None


@pytest.mark.parametrize("bidirectional", [False, True])
def test_a_port_gets_a_sender_on_each_of_its_sender_cpus(engine_bin, bidirectional):
    """On 5+ CPUs the tester has two sender CPUs: a port sending alone gets
    both, two senders on two transmit queues; in both directions, one each."""
    req = make_request("90/10", 128, "10kfps", 1, bidirectional)
    lab = lab_of("a", cpus=tuple(range(6)))
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    ports = {p["name"]: p for p in spec["ports"]}
    if bidirectional:
        assert (ports["t1"]["tx_cpu"], ports["t2"]["tx_cpu"]) == (0, 1)
        assert "tx_queues" not in ports["t1"] and "tx_queues" not in ports["t2"]
    else:
        assert (ports["t1"]["tx_cpu"], ports["t1"]["tx_queues"]) == ([0, 1], 2)
    assert spec["rx_cpu"] == 2
    check(engine_bin, spec)


def test_single_family_unidirectional(engine_bin):
    req = make_request("0/100", 84, "1%", 1, False)
    lab = lab_of("b")
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    assert [s["name"] for s in spec["streams"]] == ["ipv6-t1-t2"]
    assert "tx_rate" not in {p["name"]: p for p in spec["ports"]}["t2"]
    check(engine_bin, spec)


def test_two_flows_a_family_are_the_same_frames_in_two_streams(engine_bin):
    """``flows = 2``: each family's share over two identical streams (the
    second named ``…-flow2``, from UDP source port 49185 where the first
    keeps the engine's default, so that a DUT can scope a scenario to it),
    listed flow by flow so that the families alternate as with one flow,
    the mix exact: 50/50 of 20,000 frames is 5,000 a flow; the engine
    frames them alike (same size, addresses)."""
    from dataclasses import replace

    from v6bench.core.frames import flow_of

    req = make_request("50/50", 128, "10kfps", 2, False, flows=2, ports="fixed")
    lab = lab_of("a")
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    names = [s["name"] for s in spec["streams"]]
    assert names == ["ipv4-t1-t2", "ipv6-t1-t2", "ipv4-t1-t2-flow2", "ipv6-t1-t2-flow2"]  # families alternate
    assert [flow_of(n) for n in names] == [1, 1, 2, 2]
    one, two = spec["streams"][1], spec["streams"][3]
    assert "src_port" not in one and two["src_port"] == 49185 == FLOW_SRC_PORT[2]
    assert {k: v for k, v in one.items() if k != "name"} == {k: v for k, v in two.items() if k not in ("name", "src_port")}
    assert {s["name"]: s["frames"] for s in check(engine_bin, spec)["streams"]} == dict.fromkeys(names, 5000)
    # RFC 4814 ports (the default): each flow walks its own share of the source ports, which is what tells flow 2.
    spec = engine_spec(lab, replace(req, ports="auto"), req.check_against(LabPath.of(lab))).to_json()
    one, two = spec["streams"][1], spec["streams"][3]
    assert (one["walk"]["src_port"], two["walk"]["src_port"]) == (["1024-49184"], ["49185-65534"])
    assert "src_port" not in one and "src_port" not in two
    assert {k: v for k, v in one.items() if k not in ("name", "walk")} == {k: v for k, v in two.items() if k not in ("name", "walk")}
    check(engine_bin, spec)


def test_extension_headers_scoped_to_the_second_flow_ride_on_its_ipv6_frames_only(engine_bin):
    """``ext_headers_scope = "flow2"``: IPv6's second flow carries the
    headers, its first (the control) and IPv4 do not; without flows = 2
    or without headers the scope is refused, naming its field."""
    req = make_request("50/50", 256, "10kfps", 1, False, ext_headers="hbh", flows=2, ext_headers_scope="flow2")
    lab = lab_of("a")
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    carrying = {s["name"] for s in spec["streams"] if s.get("ipv6_ext_headers")}
    assert carrying == {"ipv6-t1-t2-flow2"}, carrying
    check(engine_bin, spec)
    for kw in ({"ext_headers": "hbh"}, {"flows": 2}):
        with pytest.raises(UsageError) as e:
            make_request("50/50", 256, "10kfps", 1, False, ext_headers_scope="flow2", **kw)
        assert e.value.field == ("ext_headers_scope",)


def test_trials_whose_schedule_is_the_measurement_catch_up(monkeypatch, engine_bin):
    """A burst, a rate step and a reset keep their schedule (catch up after
    a stall); a plain trial slips (trial/lab_tester.py)."""
    from v6bench.trial import execute
    from v6bench.trial import lab_tester as tester
    from v6bench.trial.request import parse_mix

    lab = lab_of("a")
    seen = {}

    def fake_run(lab_, req, pid_file=None, adjust=None, during=None, selftest=None, with_preliminary=True):
        spec = engine_spec(lab_, req, req.check_against(LabPath.of(lab_)))
        if adjust:
            spec = adjust(spec)
        seen["spec"] = spec.to_json()
        return {"offered_fps": 0.0, "tx_frames": 0, "rx_frames": 0, "tester_limited": False, "streams": []}

    monkeypatch.setattr(execute, "trial", fake_run)
    m = tester.LabTester(Site(Path("/run/v6bench"), "v6b-"), lab, parse_mix("100/0"), 128)
    calls = {"measure": lambda: m.measure(1.0, 10_000), "burst": lambda: m.burst(100),
             "step": lambda: m.step(2.0, 10_000, 1.0, 5_000), "reset": lambda: m.reset(2.0, 10_000, 1.0, "soft")}
    got = {}
    for name, call in calls.items():
        call()
        got[name] = seen["spec"]["after_stall"]
        check(engine_bin, seen["spec"])
    assert got == {"measure": "slip", "burst": "catch_up", "step": "catch_up", "reset": "catch_up"}


def test_the_pause_after_learning_is_the_engines_default_unless_the_request_or_the_environment_sets_one(
        engine_bin, monkeypatch):
    """RFC 2544 §23's pause after the learning frames: the engine's 0.5 s
    unless asked (the self-test on p2p asks for none, selftest.py);
    ``$V6BENCH_SETTLE_S`` sets the default of requests that set none
    (trial/settle.py), and a bad one is refused naming the variable."""
    from dataclasses import replace

    from v6bench.core.errors import UsageError
    from v6bench.trial import settle

    monkeypatch.delenv(settle.ENV, raising=False)
    req = make_request("100/0", 128, "10kfps", 1, False)
    lab = lab_of("a")
    assert "learning" not in engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    assert settle.applied_s(None) == 0.5
    spec = engine_spec(lab, replace(req, settle_s=0.0), req.check_against(LabPath.of(lab))).to_json()
    assert spec["learning"] == {"settle_s": 0.0}
    check(engine_bin, spec)
    with pytest.raises(UsageError, match="outside 0..60 s"):
        replace(req, settle_s=61.0)
    monkeypatch.setenv(settle.ENV, "0.1")
    assert engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()["learning"] == {"settle_s": 0.1}
    spec = engine_spec(lab, replace(req, settle_s=0.3), req.check_against(LabPath.of(lab))).to_json()
    assert spec["learning"] == {"settle_s": 0.3}  # the request's own wins
    for bad, why in (("soon", "'soon' is not a number of seconds"), ("-1", "-1 s is outside 0..60 s"),
                     ("61", "61 s is outside 0..60 s")):
        monkeypatch.setenv(settle.ENV, bad)
        with pytest.raises(UsageError, match=why) as e:
            engine_spec(lab, req, req.check_against(LabPath.of(lab)))
        assert e.value.field == (settle.ENV,), e.value.field


def test_the_round_robins_order_is_drawn_per_trial_from_its_seed(engine_bin):
    """With an ``order_seed`` the families' order and the flows' order are
    drawn from it (the same seed, the same order; the families still
    alternate, each flow keeps its name and port); over seeds each of the
    four orders comes first: no family or flow holds a place of its own."""
    from dataclasses import replace

    lab = lab_of("a")
    base = make_request("50/50", 128, "10kfps", 1, False, flows=2)
    fps = base.check_against(LabPath.of(lab))

    def order(seed):
        return [s["name"] for s in engine_spec(lab, replace(base, order_seed=seed), fps).to_json()["streams"]]

    assert order(None) == ["ipv4-t1-t2", "ipv6-t1-t2", "ipv4-t1-t2-flow2", "ipv6-t1-t2-flow2"]
    assert order(7) == order(7)
    seen = {tuple(order(seed)) for seed in range(40)}
    assert {o[0] for o in seen} == {"ipv4-t1-t2", "ipv6-t1-t2", "ipv4-t1-t2-flow2", "ipv6-t1-t2-flow2"}
    for o in seen:
        assert [n.split("-")[0] for n in o][0::2] == [o[0].split("-")[0]] * 2  # the families alternate
        assert {n.endswith("flow2") for n in o[:2]} in ({True}, {False})      # flow by flow
    spec = engine_spec(lab, replace(base, order_seed=3, ports="fixed"), fps).to_json()
    assert {s["name"]: s.get("src_port") for s in spec["streams"]}["ipv6-t1-t2-flow2"] == 49185
    check(engine_bin, spec)
    spec = engine_spec(lab, replace(base, order_seed=3), fps).to_json()  # RFC 4814's walk drawn from the same seed
    assert {s["walk"]["seed"] for s in spec["streams"]} == {3}
    check(engine_bin, spec)


def test_a_trial_records_the_ports_it_sent():
    """``ports`` in the trial result (trial/spec.ports_record): asked and
    used, each flow's source range, the destination range and the seed;
    through a DUT that keeps state the first S and D ports of each, S·D
    connections a stream (core/frames.connection_ports); none for ICMP echo."""
    import dataclasses

    from v6bench.lab.model.dut import DutConfig
    from v6bench.trial.spec import ports_record

    lab = lab_of("a")
    req = dataclasses.replace(make_request("50/50", 128, "10kfps", 2, False, flows=2), order_seed=9)
    assert ports_record(lab, req) == {"asked": "auto", "used": "rfc4814", "src": {"1": [1024, 49184], "2": [49185, 65534]},
                                      "dst": [1, 49151], "seed": 9}
    nat = dataclasses.replace(lab, dut_config=DutConfig(nat44=True))
    assert ports_record(nat, req) == {"asked": "auto", "used": "rfc4814", "src": {"1": [1024, 1123], "2": [49185, 49284]},
                                      "dst": [1, 101], "seed": 9, "connections_per_stream": {"1": 10100, "2": 10100}}
    few = dataclasses.replace(req, preliminary_connections=1000)
    assert ports_record(nat, few)["connections_per_stream"] == {"1": 32 * 33, "2": 32 * 33}
    assert ports_record(nat, dataclasses.replace(req, ports="fixed")) == {"asked": "fixed", "used": "fixed"}
    echo = make_request("100/0", 128, "1kfps", 2, False, icmp_echo="dut")
    assert ports_record(lab, echo)["used"] == "none (ICMP echo)"
    table = dataclasses.replace(lab, fib={"seed": 5})
    assert ports_record(table, req)["table_seed"] == 5


def test_foreground_n_of_m_weighs_flow_2_against_flow_1_in_each_family():
    """``foreground = "n/m"`` (RFC 8219's foreground and background, as
    siitperf sends them): with two flows, n of every m frames of a family
    are flow 2's; refused without two flows or as anything but n/m."""
    import dataclasses

    req = dataclasses.replace(make_request("50/50", 128, "10kfps", 2, False, flows=2, foreground="1/4"), order_seed=1)
    spec = engine_spec(lab_of("a"), req, 10_000)
    shares = {s.name: s.share for s in spec.streams}
    assert shares == {"ipv4-t1-t2": 150, "ipv6-t1-t2": 150, "ipv4-t1-t2-flow2": 50, "ipv6-t1-t2-flow2": 50}
    even = engine_spec(lab_of("a"), dataclasses.replace(req, foreground="1/2"), 10_000)
    assert len({s.share for s in even.streams}) == 1
    for bad, flows, words in (("1/4", 1, "needs flows = 2"), ("4/4", 2, "not n/m"), ("a/b", 2, "not n/m"),
                              ("0/3", 2, "not n/m")):
        with pytest.raises(UsageError) as e:
            make_request("50/50", 128, "10kfps", 2, False, flows=flows, foreground=bad)
        assert e.value.field == ("foreground",) and words in e.value.message, e.value.message
