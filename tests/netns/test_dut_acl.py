"""DUT access lists (seed 000 §3) and the DUT's CPU, on the tests' own lab
site, as root: the lists are in effect (the test flow is permitted and
walks them once or twice, other destinations hit the implicit deny),
`dut_cpu` is near 0 when idle and rises with load, a list that only
one flow walks is found inside the trial: that flow's delay above its
family's other flow in the same trials (paired), while IPv4's two
identical flows differ by far less (the A/A control inside the trial),
and IPv6's CPU time per frame above IPv4's; a NAT scoped to one flow
rewrites that flow only."""

from __future__ import annotations

import json
import statistics
import time

import pytest

from cli_site import RUN_DIR, PREFIX, capture, clean_site, facing, remove_run_dir, tshark_fields, trial_json, v6bench  # noqa: F401
from v6bench import engine
from v6bench.lab.emulated import observe, state
from v6bench.lab.emulated.configured import acl_counters
from v6bench.lab.model.site import Site
from v6bench.trial.request import make_request
from v6bench.trial.execute import dut_cpu_pct
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


def test_a_list_only_one_flow_walks_is_found_in_the_trial_and_in_the_cost_per_frame():
    """R1 with a 100-rule list that only IPv6's second flow walks (--scope
    flow2; IPv6's first flow and both of IPv4's forwarded beside it
    unfiltered), 128 B. Measured on this machine (bench/log/performance-2026-11.md,
    "Scenarios on a flow"): at 10–20 kframes/s, where frames do not
    overlap in the router, IPv6's flow 2 − flow 1 median delay +2.0 …
    +2.3 µs a trial, IPv4's two flows −0.26 … +0.14 µs. Asserted with wide
    margins over six 1-s trials at 20 kframes/s: every one with the
    walking flow slower (the exact signed-rank test's p is 2/64), the A/A
    flows' median signed gap (a bias, not the noise: a fresh clone on a busy
    host, 2026-12-01, read IPv4's gaps 0.06 … 7.6 µs apart) under a third
    of the scenario's; six more where a
    host's stalls hid it (a fresh clone on a busy host, 2026-12-01: gaps
    −3.9 … +4.4 µs, two of six negative), the assertions on those; and, in two 2-s
    trials at 60 kframes/s sent in 0.1-s runs (lab/machine/cost.py), the CPU time
    per frame of IPv6's flow 2 0.6 µs above its flow 1's (measured
    +1.52 … +1.93 µs in 10 trials, bench/log/performance-2026-11.md), IPv4's two
    identical flows apart by less than half of that (measured −0.69 …
    +0.62 µs in 74 trials, most within ±0.2 µs), and every family's and
    stream's figure read (a trial whose sender slipped too far is
    tester-limited and run again). The
    trials run in this process with a 0.5-s drain (as campaigns do), for
    make test's time."""
    from dataclasses import replace

    from v6bench.core.frames import flow_of
    from v6bench.report import stats
    from v6bench.trial import execute
    from spoiled import unspoiled

    def trial(mix: str, rate: str, duration_s: float, runs_s: float | None = None) -> dict:
        req = replace(make_request(mix, 128, rate, duration_s, False, flows=2, runs_s=runs_s), drain_s=0.5)
        return unspoiled(lambda: execute.trial(state.load(SITE), req))

    _ok("lab", "up", "--topology", "a", "--link-speed", "1G", "--acl", "100", "--acl-family", "ipv6", "--scope", "flow2")
    try:
        for attempt in range(2):
            one, two, aa = [], [], []
            for _ in range(6):
                r = trial("50/50", "20kfps", 1.0)
                p50 = {(s["ip_version"], flow_of(s["name"])): s["latency_ns"]["p50"] / 1e3 for s in r["streams"]}
                assert set(p50) == {(4, 1), (4, 2), (6, 1), (6, 2)}, p50
                one.append(p50[6, 1])
                two.append(p50[6, 2])
                aa.append(p50[4, 2] - p50[4, 1])
            gaps = sorted(b - a for a, b in zip(one, two))
            if gaps[0] > 0:
                break
        assert gaps[0] > 0, gaps
        c = stats.compare_paired(one, two, "location", "slower")
        assert c.p < stats.ALPHA and c.ci_low_pct > 0, c
        assert abs(statistics.median(aa)) < statistics.median(gaps) / 3, (aa, gaps)
        kept = [trial("50/50", "60kfps", 2.0, runs_s=0.1) for _ in range(2)]
        # A sender slipped beyond a quarter of a run has no cost per family (lab/machine/cost.runs): tester-limited.
        assert not any(r["tester_limited"] for r in kept), [r["tester_limited_reasons"] for r in kept]
        costs = [r["dut_cost"] for r in kept]
        for c in costs:
            assert c["ns_per_frame"] and c["by_family"] and len(c["by_family"]["streams"]) == 4, c
        flow = [{(int(n[3]), flow_of(n)): ns for n, ns in c["by_family"]["streams"].items()} for c in costs]
        walk = sum(f[6, 2] - f[6, 1] for f in flow) / 2
        assert walk > 600, flow
        assert abs(sum(f[4, 2] - f[4, 1] for f in flow) / 2) < walk / 2, flow
    finally:
        v6bench("lab", "down")


def test_nat44_scoped_to_flow_2_rewrites_its_ipv4_source_only(tmp_path):
    """With --nat44 --scope flow2 the IPv4 frames of the second flow (UDP
    source port 49185) reach t2 with R1's address as source, those of the
    first (its control) with t1's; IPv6 sources are untouched (read from a
    capture by tshark, an independent decoder); the engine still counts
    every frame. The unscoped NAT's rule is the same less the port match
    (tests/unit/test_dut_config.py); a throughput search runs through it
    (test_dut_search.py)."""
    _ok("lab", "up", "--topology", "a", "--nat44", "--scope", "flow2")
    try:
        lab = state.load(SITE)
        pcap = tmp_path / "t2.pcap"
        with capture(*facing(lab, "t2"), pcap, 200, "udp"):
            # Fixed ports: one 5-tuple a flow, each source port read back as sent (RFC 4814's through a NAT44 are
            # test_ports.py's, with their preliminary phase).
            r = trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "1kfps", "--duration", "1", "--flows", "2",
                           "--ports", "fixed")
        assert r["lost_frames"] == 0 and not r["tester_limited"], r
        rows = tshark_fields(pcap, "ip.src", "ipv6.src", "udp.srcport")
        v4 = {(a, port) for a, _, port in rows if a}
        v6 = {(b, port) for _, b, port in rows if b}
        assert v4 == {("198.18.0.2", "49184"), ("198.19.0.1", "49185")}, v4
        assert v6 == {("2001:2::2", "49184"), ("2001:2::2", "49185")}, v6
    finally:
        v6bench("lab", "down")


def test_shaping_holds_a_router_port_to_the_link_speed():
    """At 100M with --shape, 1518-byte frames offered at 120 % of line rate
    (the engine knows no link speed; the trial command would refuse) leave
    R1 at line rate, 8,127 frames/s, and the rest is lost; without --shape
    R1 forwards them all.

    The lower bound is 90 % of line rate: here the shaper passes line rate
    within 0.3 %, but a router CPU taken away for longer than the bucket's
    2 ms loses that time's tokens, and CI on 2 shared cores once passed
    95.1 % (7,732 frames/s). The bug it guards against, a one-frame bucket,
    passed 75 %."""
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
                assert line_fps * 0.90 <= rx_fps <= line_fps * 1.01 + queue, (rx_fps, line_fps)
            else:
                assert res["totals"]["lost_frames"] == 0, res["totals"]
        finally:
            v6bench("lab", "down")


def test_a_router_slower_than_the_load_drops_large_frames_it_does_not_throttle_the_tester():
    """R1 walking a 150-rule list in and out forwards about 48,000 frames/s
    of 1518 B on EPYC-25 (48,100–48,400 in four 1- and 2-s trials; 38,700–
    41,900 on EPYC-25-1's slower host of 2026-12-03) and 65,000–84,000 on
    Xeon-167 (all of 1 Gb/s's 81,274 at times: so a 10G link). Offered
    120,000 a second, its input queue (veth's 256-frame ring) overflows and
    the frames it cannot take are refused at the sender, counted and lost
    (Xeon-167: 33–48 % in eight 1-s trials; EPYC-25-1: 65–68 %), as a
    router's input queue drops them; the tester sends every frame. With the
    AF_XDP transmit socket's default send buffer (208 KiB: about 90 skbs of
    1518 B in flight, fewer than that ring) the sender was throttled
    instead: nothing refused or lost, the schedule slipped by 185–450 ms
    (engine/src/xsk.rs, SNDBUF_PER_CHUNK). Refusals are the assertion, not
    the sender's slip: on 2 CPUs the tester's receive work and veth's
    transmit share the sender's CPU, and a slow host slips without any
    throttling (1.6–21 ms on Xeon-167; 313–339 ms in 239–255 stalls of at
    most 4.5 ms on EPYC-25-1's slower host, 65 % of the frames refused). The
    trial is one run: its loss is the DUT's whatever the tester's slip."""
    _ok("lab", "up", "--topology", "a", "--link-speed", "10G", "--acl", "150", "--acl-at", "both")
    try:
        r = _ok("trial", "--mix", "100/0", "--frame-size", "1518", "--rate", "120kfps", "--duration", "1", "--json")
        (tx,) = [p["tx"] for p in r["engine"]["ports"] if p["name"] == "t1"]
        assert tx["unsent_frames"] == 0 and tx["refused_frames"] > 0.1 * tx["planned_frames"], tx
        refused = sum(s["refused_frames"] for s in r["streams"])
        assert r["loss_ratio"] > 0.1 and refused == tx["refused_frames"], (r["loss_ratio"], refused, r["rx_frames"])
    finally:
        v6bench("lab", "down")
