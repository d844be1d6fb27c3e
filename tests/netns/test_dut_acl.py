"""DUT access lists (seed 000 §3) and the DUT's CPU, on the tests' own lab
site, as root: the lists are in effect (the test flow is permitted and
walks them once or twice, other destinations hit the implicit deny),
`dut_cpu` is near 0 when idle and rises with load, and a list that only
IPv6 frames walk is found where issue 40 looks for it: IPv6's delay above
IPv4's in the same trials (paired), while a family's two identical flows
differ by far less (the A/A control inside the trial), and IPv6's CPU
time per frame above IPv4's."""

from __future__ import annotations

import json
import time

import pytest

from cli_site import RUN_DIR, PREFIX, capture, clean_site, facing, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench import engine
from v6bench.lab import observe, state
from v6bench.lab.dut import acl_counters
from v6bench.lab.site import Site
from v6bench.trial.request import make_request
from v6bench.trial.runner import dut_cpu_pct
from v6bench.trial.spec import engine_spec

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def _ok(*args) -> dict:
    r = v6bench(*args, timeout=180)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout) if "--json" in args else {}


def _trial(rate: str, duration: str = "2") -> dict:
    return trial_json("--mix", "50/50", "--frame-size", "128", "--rate", rate, "--duration", duration, timeout=180)


def test_the_acl_permits_the_test_flow_and_denies_other_destinations():
    _ok("lab", "up", "--topology", "a", "--acl", "25", "--acl-at", "both", "--acl-udp-only")
    try:
        r = _trial("2kfps", "1")
        assert r["lost_frames"] == 0 and not r["tester_limited"], r["tester_limited_reasons"]
        v4, v6 = (sum(s["tx_frames"] for s in r["streams"] if s["ip_version"] == v) for v in (4, 6))
        # acl_at both: every test frame walks each family's list twice, and passes.
        assert r["dut"]["acl"]["r1"] == {"v4": {"permit": 2 * v4, "deny": 0}, "v6": {"permit": 2 * v6, "deny": 0}}
        # Frames to another host on t2's link (198.19.0.3, 2001:2:0:1::3) are not permitted.
        lab = state.load(SITE)
        spec = engine_spec(lab, make_request("50/50", 128, "1kfps", 1.0, False), 1000.0).to_json()
        for s in spec["streams"]:
            s["dst_ip"] = "198.19.0.3" if s["ip_version"] == 4 else "2001:2:0:1::3"
        before = acl_counters(lab.node("r1")["netns"])
        res = engine.run_trial(spec)
        after = acl_counters(lab.node("r1")["netns"])
        assert res["totals"]["rx_frames"] == 0
        for fam, version in (("v4", 4), ("v6", 6)):
            sent = sum(s["tx_frames"] for s in res["streams"] if s["ip_version"] == version)
            assert after[fam]["deny"] - before[fam]["deny"] == sent, (fam, before, after)
            assert after[fam]["permit"] == before[fam]["permit"]
    finally:
        v6bench("lab", "down")


def test_dut_cpu_is_idle_near_zero_and_rises_with_load():
    """Forwarding CPU of R1 (its NAPI threads' run time over the trial, % of one CPU)."""
    _ok("lab", "up", "--topology", "a", "--link-speed", "10G")
    try:
        lab = state.load(SITE)
        before = observe.snapshot(lab)
        time.sleep(1.0)
        idle = dut_cpu_pct(observe.difference(lab, before, observe.snapshot(lab), 1.0))["r1"]
        assert idle is not None and idle < 2.0, idle
        low = _trial("5kfps")["dut_cpu"]["r1"]
        high = _trial("40kfps")["dut_cpu"]["r1"]
        assert idle < low < high, (idle, low, high)
    finally:
        v6bench("lab", "down")


def test_a_list_only_ipv6_walks_is_found_paired_and_in_the_cost_per_frame():
    """R1 with a 100-rule list that only IPv6 frames walk (IPv4 forwarded
    beside them unfiltered), 128 B at 60 kframes/s, 2-s trials. Measured
    on this machine (bench/sensitivity.py, 10 blocks): IPv6 − IPv4 median
    delay +1.0 … +2.6 µs a trial; a family's second flow against its first
    −0.40 … +0.46 µs; CPU per frame 7.3–7.8 µs for IPv4 alone, 9.1–9.8 µs
    for IPv6 alone. Asserted with wide margins: six paired trials, every
    one with IPv6 slower (so the exact signed-rank test's p is 2/64), the
    A/A flows' median gap under a third of the families', and IPv6's
    mean cost 0.8 µs above IPv4's over two trials each. The trials run in
    this process with a 0.5-s drain (as campaigns do), for make test's time."""
    from dataclasses import replace

    from v6bench.core.frames import flow_of
    from v6bench.report import stats
    from v6bench.trial import runner
    from spoiled import unspoiled

    def trial(mix: str, flows: int = 1) -> dict:
        req = replace(make_request(mix, 128, "60kfps", 2.0, False, flows=flows), drain_s=0.5)
        return unspoiled(lambda: runner.run(state.load(SITE), req))

    _ok("lab", "up", "--topology", "a", "--link-speed", "1G", "--acl", "100", "--acl-family", "ipv6")
    try:
        v4, v6, aa = [], [], []
        for _ in range(6):
            r = trial("50/50", flows=2)
            p50 = {(s["ip_version"], flow_of(s["name"])): s["latency_ns"]["p50"] / 1e3 for s in r["streams"]}
            assert set(p50) == {(4, 1), (4, 2), (6, 1), (6, 2)}, p50
            v4.append((p50[4, 1] + p50[4, 2]) / 2)
            v6.append((p50[6, 1] + p50[6, 2]) / 2)
            aa += [abs(p50[4, 2] - p50[4, 1]), abs(p50[6, 2] - p50[6, 1])]
        gaps = sorted(b - a for a, b in zip(v4, v6))
        assert gaps[0] > 0, gaps
        c = stats.compare_paired(v4, v6, "location", "slower")
        assert c.p < stats.ALPHA and c.ci_low_pct > 0, c
        assert sorted(aa)[len(aa) // 2] < gaps[len(gaps) // 2] / 3, (aa, gaps)
        cost = {mix: sum(trial(mix)["dut_cost"]["ns_per_frame"] for _ in range(2)) / 2 for mix in ("100/0", "0/100")}
        assert cost["0/100"] - cost["100/0"] > 800, cost
    finally:
        v6bench("lab", "down")


def test_nat44_rewrites_the_ipv4_source_and_leaves_ipv6_alone(tmp_path):
    """With --nat44 the frames reaching t2 carry R1's address as IPv4
    source (read from a capture by tshark, an independent decoder); IPv6
    sources are untouched; the engine still counts every frame."""
    _ok("lab", "up", "--topology", "a", "--nat44")
    try:
        lab = state.load(SITE)
        pcap = tmp_path / "t2.pcap"
        with capture(*facing(lab, "t2"), pcap, 200, "udp"):
            r = _trial("1kfps", "2")
        assert r["lost_frames"] == 0 and not r["tester_limited"], r
        rows = tshark_fields(pcap, "ip.src", "ipv6.src")
        v4 = {a for a, _ in rows if a}
        v6 = {b for _, b in rows if b}
        assert v4 == {"198.19.0.1"} and v6 == {"2001:2::2"}, (v4, v6)
    finally:
        v6bench("lab", "down")


def test_shaping_holds_a_router_port_to_the_link_speed():
    """At 100M with --shape, 1518-byte frames offered at 120 % of line rate
    (the engine knows no link speed; the trial command would refuse) leave
    R1 at line rate, 8,127 frames/s, and the rest is lost; without --shape
    R1 forwards them all."""
    line_fps = 100e6 / ((1518 + 20) * 8)
    for shaped in (True, False):
        _ok("lab", "up", "--topology", "a", "--link-speed", "100M", *(["--shape"] if shaped else []))
        try:
            lab = state.load(SITE)
            spec = engine_spec(lab, make_request("100/0", 1518, "1kfps", 3.0, False), line_fps * 1.2)
            res = engine.run_trial(spec)
            rx_fps = res["totals"]["rx_frames"] / res["traffic_s"]
            if shaped:
                queue = 100e6 / 8 * 0.020 / (1518 + 20) / 3.0  # the 20-ms queue, spread over the trial
                assert line_fps * 0.97 <= rx_fps <= line_fps * 1.01 + queue, (rx_fps, line_fps)
            else:
                assert res["totals"]["lost_frames"] == 0, res["totals"]
        finally:
            v6bench("lab", "down")
