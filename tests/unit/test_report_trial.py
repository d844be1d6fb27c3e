"""The readable trial result (``v6bench trial`` without ``--json``)."""

from v6bench.report.trial import pauses


def test_a_slipped_schedule_is_said_per_port():
    r = {"engine": {"ports": [
        {"name": "t1", "tx": {"slips": 2, "slipped_ns": 4_500_000, "max_slip_ns": 3_000_000}},
        {"name": "t2", "tx": {"slips": 0, "slipped_ns": 0, "max_slip_ns": 0}},
        {"name": "t3", "tx": None}]}}
    assert pauses(r) == ["sender t1 paused 4.500 ms in 2 stall(s) (longest 3.000 ms): its schedule slipped, "
                         "the DUT saw pauses, no bursts"]
    assert pauses({"engine": {"ports": [{"name": "t1", "tx": {"max_lag_ns": 5}}]}}) == []  # an engine before slips
