"""A lab whose tester has two sender CPUs (5+ CPUs in `split`, lab/model/cpus.py)
gives its tester links two queues and a port sending alone two senders:
built here on any machine with a hand-made CPU plan, its counts exact."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from spoiled import unspoiled

from v6bench.lab.emulated import build
from v6bench.lab.machine import lock
from v6bench.lab.model.cpus import CpuPlan
from v6bench.lab.model.mtu import Mtus
from v6bench.lab.model.site import Site
from v6bench.lab.model.topology import parse_topology
from v6bench.trial import execute
from v6bench.trial.request import make_request

pytestmark = pytest.mark.netns

#: What plan() gives on 5+ CPUs, squeezed onto CPUs 0 and 1 (so tester and DUT share: fine for counting).
TWO_SENDERS = CpuPlan("split", (0, 1), (0, 1), 0, (1,))


@pytest.fixture
def site(tmp_path):
    s = Site(Path(f"/run/v6bench-senders-{os.getpid()}"), f"v6s{os.getpid() % 1000}-")
    yield s
    build.destroy(s)
    shutil.rmtree(s.run_dir, ignore_errors=True)
    assert not build.our_namespaces(s), "a namespace was left behind"


def test_a_port_sending_alone_uses_both_sender_cpus(site):
    with lock.locked(site, "test"):
        lab = build.build(site, parse_topology("a"), 1e9, Mtus(), TWO_SENDERS, temporary=True)
        # Every veth end of a tester's link has two receive queues, each its own NAPI thread; the routers' inner links one.
        per_end = {}
        for t in lab.napi:
            per_end[(t["node"], t["ifname"])] = per_end.get((t["node"], t["ifname"]), 0) + 1
        assert set(per_end.values()) == {2}, per_end
        # Fixed ports: each stream one 5-tuple, so each crosses one receive queue and stays in order (with RFC
        # 4814's, a stream's frames spread over both queues and their NAPI threads: docs/methods.md, "UDP ports").
        out = unspoiled(lambda: execute.trial(lab, make_request("90/10", 128, "20kfps", 2, False, ports="fixed")))
    port = {p["name"]: p for p in out["engine"]["ports"]}["t1"]
    assert (port["backend"], port["tx"]["queues"], port["tx"]["cpus"]) == ("af_xdp", 2, [0, 1])
    assert out["tx_frames"] == 40_000
    for s in out["engine"]["streams"]:
        assert s["reordered_frames"] == s["duplicate_frames"] == 0
    assert out["lost_frames"] == 0 and out["rx_frames"] == 40_000, out["tester_limited_reasons"]
