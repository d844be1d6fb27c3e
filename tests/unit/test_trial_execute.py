"""Whose loss it is: the lab's own tester_limited reasons (no root)."""

from test_trial_spec import lab_of

from v6bench.lab.emulated.observe import LabObserver
from v6bench.lab.external.snmp_observe import SnmpDut, SnmpObserver
from v6bench.trial.request import make_request
from v6bench.trial import execute


def summarize(lab, request, fps, eng, dut_rec, reset_router=None, observer=None):
    """The result as a trial's execution makes it: the lab's observer gives its reasons."""
    watch = observer or LabObserver(lab)
    return execute.summarize(lab, request, fps, eng, dut_rec, watch.reasons(eng, dut_rec, reset_router))


def engine_result(tx_dropped_t1: int = 0) -> dict:
    port = {"name": "t1", "interface": "t1-x", "interface_counters": {"tx_dropped": tx_dropped_t1}}
    return {"status": "completed", "tester_limited_reasons": [], "engine_version": "0.1.0",
            "totals": {"intended_fps": 1000.0, "offered_fps": 1000.0, "tx_frames": 1000, "rx_frames": 990,
                       "lost_frames": 10, "loss_ratio": 0.01},
            "ports": [port], "streams": []}


def dut(counters: dict) -> dict:
    zero = {"rx_packets": 0, "tx_packets": 0, "rx_dropped": 0, "tx_dropped": 0}
    return {"routers": [], "tester_rx": {}, "interfaces": {k: {**zero, **v} for k, v in counters.items()}}


REQ = make_request("50/50", 128, "1kfps", 1, False)


def test_drops_into_a_tester_port_are_the_testers():
    r = summarize(lab_of("a"), REQ, 1000, engine_result(), dut({"r1/r1-t2": {"tx_dropped": 10}, "r1/r1-t1": {}}))
    assert r["tester_limited"] and "r1/r1-t2" in r["tester_limited_reasons"][0]


def test_drops_at_the_dut_input_or_between_routers_are_the_duts():
    r = summarize(lab_of("b"), REQ, 1000, engine_result(tx_dropped_t1=10),
                  dut({"r1/r1-r2": {"tx_dropped": 5}, "r2/r2-t2": {}}))
    assert not r["tester_limited"] and r["lost_frames"] == 10


def test_any_p2p_drop_is_the_testers():
    p2p = lab_of("p2p")
    r = summarize(p2p, REQ, 1000, engine_result(tx_dropped_t1=3), dut({}))
    assert r["tester_limited"] and "p2p" in r["tester_limited_reasons"][0]


def test_a_reset_routers_own_transmit_drops_are_the_resets():
    r = summarize(lab_of("a"), REQ, 1000, engine_result(), dut({"r1/r1-t2": {"tx_dropped": 10}, "r1/r1-t1": {}}),
                  reset_router="r1")
    assert not r["tester_limited"], r["tester_limited_reasons"]


def test_a_router_read_over_snmp_owns_its_discards_toward_a_tester():
    """An external DUT's (or a VM router's) discards are its own, whatever port they face."""
    watch = SnmpObserver(SnmpDut("dut", None, ()), None)
    r = summarize(lab_of("a"), REQ, 1000, engine_result(), dut({"dut/t2": {"tx_dropped": 10}}), observer=watch)
    assert not r["tester_limited"], r["tester_limited_reasons"]
