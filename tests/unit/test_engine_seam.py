"""The seam between v6bench and its engine (issue 17): the trial spec as
Python types, checked against golden JSON and against the engine binary's
own validator; the result's version and fields checked on arrival.

A golden file is the exact JSON a trial on a recorded lab becomes. When
the spec changes on purpose, regenerate them with
``V6BENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_engine_seam.py`` and
review the diff: it is the change the engine sees.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

from test_trial_spec import lab_of
from v6bench import engine
from v6bench.core.errors import UsageError
from v6bench.engine import result as results
from v6bench.engine.spec import Port, Stream, TrialSpec
from v6bench.lab import interface
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.mtu import parse as parse_mtu
from v6bench.trial import packet_io
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "engine-spec"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "report-run.json.gz"

#: name: (topology, MTUs, DUT, trial request arguments)
CASES = {
    "p2p-uni-50-50": ("p2p", "1500", {}, ("50/50", 128, "10kfps", 1, False)),
    "a-bi-90-10": ("a", "1500", {}, ("90/10", 256, "20kfps", 2, True)),
    "b-fragments": ("b", "all=1500,r1-r2=1300", {}, ("50/50", 1518, "1kfps", 1, True)),
    "b-tunnel-6in4": ("b", "1500", {"tunnel": "6in4"}, ("50/50", 1400, "1kfps", 1, False)),
    "a-echo-dut": ("a", "1500", {}, ("50/50", 128, "1kfps", 1, False, None, "dut")),
    "a-ext-headers-srh": ("a", "1500", {}, ("0/100", 512, "1kfps", 1, False, "srh")),
    "mesh4-full": ("mesh:4", "1500", {}, ("50/50", 1518, "5kfps", 1, False, None, None, "full")),
}


def built(name: str) -> TrialSpec:
    topology, mtu, dut, args = CASES[name]
    lab = dataclasses.replace(lab_of(topology, parse_mtu(mtu)), dut_config=DutConfig(**dut))
    req = make_request(*args)
    return engine_spec(lab, req, req.check_on_lab(lab.topology, lab.link_speed_bps, lab.mtu, interface.tunnel(lab)))


@pytest.fixture(autouse=True)
def auto_backend(monkeypatch):
    monkeypatch.delenv(packet_io.ENV, raising=False)


@pytest.mark.parametrize("name", CASES)
def test_a_trial_becomes_the_golden_spec_and_the_engine_accepts_it(engine_bin, name):
    got = built(name).to_json()
    path = GOLDEN / f"{name}.json"
    if os.environ.get("V6BENCH_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert path.exists(), f"no golden spec {path.name}: run with V6BENCH_UPDATE_GOLDEN=1 and review it"
    golden = json.loads(path.read_text())
    assert got == golden, f"the spec of {name} changed: regenerate the golden file if that is intended"
    p = subprocess.run([str(engine_bin), "check", "--spec", "-"], input=json.dumps(golden), capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert [s["name"] for s in plan["streams"]] == [s["name"] for s in golden["streams"]]


def test_one_builder_makes_point_to_point_and_mesh_streams():
    """Both are a stream per (sender, receiver, family); mesh ports send at
    the rate each, whole frames, no histograms."""
    a, mesh = built("a-bi-90-10"), built("mesh4-full")
    assert [(s.tx_port, s.rx_port, s.ip_version) for s in a.streams] == [
        ("t1", "t2", 4), ("t1", "t2", 6), ("t2", "t1", 4), ("t2", "t1", 6)]
    assert len(mesh.streams) == 4 * 3 * 2 and all(s.fragment_mtu is None for s in mesh.streams)
    assert all(p.tx_fps == 5000 for p in mesh.ports) and a.export_histograms and not mesh.export_histograms
    frag = built("b-fragments")  # IPv4 is fragmented by the routers, IPv6 at the source to the path MTU
    assert {s.name: s.fragment_mtu for s in frag.streams} == {
        "ipv4-t1-t2": None, "ipv6-t1-t2": 1300, "ipv4-t2-t1": None, "ipv6-t2-t1": 1300}


def test_specs_are_validated_when_made():
    port = Port("t1", "t1-r1", tx_fps=10)
    with pytest.raises(ValueError, match="exactly one of duration_s and frame_count"):
        TrialSpec((port,), (), duration_s=1, frame_count=10)
    with pytest.raises(ValueError, match="its ports are not the spec's"):
        TrialSpec((port,), (Stream("s", "t1", "t9", 4, 128),), duration_s=1)
    assert "tx_rate" not in Port("t2", "t2-r1").to_json() and Port("t1", "i", tx_cpu=(1, 2)).to_json()["tx_cpu"] == [1, 2]


def test_the_engine_speaks_the_versions_this_v6bench_writes_and_reads(engine_bin):
    v = engine.version()
    assert (v["spec_version"], v["result_version"]) == (engine.SPEC_VERSION, engine.RESULT_VERSION)


def stored_engine_result() -> dict:
    """An engine result as a measured run stored it (tests/fixtures), moved
    to this version: the fixture is of result version 1, and version 2 only
    added each stream's ``walk`` (null without one)."""
    d = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    r = next(tr["result"]["engine"] for t in d["tests"] for tr in t["trials"] if (tr["result"] or {}).get("engine"))
    assert r["result_version"] == 1
    return {**r, "result_version": engine.RESULT_VERSION, "streams": [{**s, "walk": None} for s in r["streams"]]}


def test_a_result_of_another_version_or_missing_a_field_is_refused_on_arrival():
    good = stored_engine_result()
    assert results.problem(good) is None
    for change, why in ((lambda r: r.update(result_version=1), "result_version 1"),
                        (lambda r: r.pop("totals"), "totals: missing"),
                        (lambda r: r["totals"].pop("rx_frames"), "totals.rx_frames"),
                        (lambda r: r.update(traffic_s="1"), "traffic_s")):
        bad = copy.deepcopy(good)
        change(bad)
        assert why in results.problem(bad)


@pytest.mark.parametrize("version", [4, 6])
def test_the_smallest_frame_is_the_engine_s(engine_bin, version):
    """v6bench refuses a frame below MIN_FRAME (core/frames.py) before a
    trial, the engine its spec (spec/validate.rs): the two agree."""
    from v6bench.core.frames import MIN_FRAME

    def accepted(size: int) -> bool:
        spec = built("p2p-uni-50-50")
        stream = dataclasses.replace(spec.streams[0], ip_version=version, frame_size=size, share=1)
        one = dataclasses.replace(spec, streams=(dataclasses.replace(stream, name="s"),))
        p = subprocess.run([str(engine_bin), "check", "--spec", "-"], input=json.dumps(one.to_json()),
                           capture_output=True, text=True, timeout=30)
        return p.returncode == 0

    assert accepted(MIN_FRAME[version]) and not accepted(MIN_FRAME[version] - 1)


def test_every_trial_crosses_the_tester_host_seam(monkeypatch):
    # engine/tester_host.py: the contract is the engine's JSON spec in, its JSON result out. A host that is not
    # this machine is a class and one line in HOSTS; its results are checked like the local engine's.
    from v6bench.engine import process

    class Recorded:
        name = "recorded"

        def __init__(self):
            self.seen = []

        def run(self, command, spec, timeout_s, pid_file):
            self.seen.append((command, spec, timeout_s))
            return {"result_version": "0.0"} if spec.get("bad") else {"status": "ok"}

        def version(self):
            return {"engine_version": "recorded"}

        def program_sha256(self):
            return "ab" * 32

        def stop_recorded(self, pid_file):
            self.seen.append(("stop", pid_file, None))
            return None

    host = Recorded()
    monkeypatch.setitem(process.HOSTS, "recorded", host)
    monkeypatch.setenv("V6BENCH_TESTER_HOST", "recorded")
    assert engine.run_rr({"duration_s": 1.0}) == {"status": "ok"}
    assert engine.version() == {"engine_version": "recorded"}
    (command, spec, timeout_s), = host.seen
    assert command == "rr" and spec == {"duration_s": 1.0} and timeout_s == pytest.approx(1 + 3 + 0.2 + 15)
    with pytest.raises(engine.EngineError, match="not one this v6bench reads"):
        engine.run_trial({"bad": True, "duration_s": 0.1})
    # The self-test's record of the program and the lab's clean-up of a crashed command's engine go the same way.
    assert engine.program_sha256() == "ab" * 32
    engine.stop_recorded(Path("/nonexistent/engine.pid"))
    assert host.seen[-1] == ("stop", Path("/nonexistent/engine.pid"), None)
    monkeypatch.setenv("V6BENCH_TESTER_HOST", "elsewhere")
    with pytest.raises(UsageError, match="is not one of local, recorded"):
        engine.run_trial({"duration_s": 0.1})


def test_nothing_above_the_engine_reaches_the_local_host_past_the_seam():
    # engine/__init__ exports what goes through the tester host; engine/local.py (this machine's binary, its
    # frames command) is imported only by engine/process.py among v6bench's modules (tests and benchmarks may).
    from test_layers import python_imports

    found = {mod for mod, targets in python_imports().items()
             if "v6bench.engine.local" in targets and mod not in ("v6bench.engine.process", "v6bench.engine.local")}
    assert found == set()
