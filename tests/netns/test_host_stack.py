"""Host-stack tests (seed 001, seed 004 §2.1), as root: iperf3 between
the tester hosts' kernels through R1, and UDP request/response through R1
and over a direct baseline link, whose difference is the router's
latency. The kernel addresses and the baseline link are gone afterwards."""

from __future__ import annotations

import json
import subprocess

import pytest

from cli_site import PREFIX, clean_site, remove_run_dir, v6bench  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]


def _addresses(ns: str) -> str:
    return subprocess.run(["ip", "-n", ns, "-o", "addr"], capture_output=True, text=True, check=True).stdout


def test_stack_throughput_and_rr_latency_through_the_router(tmp_path):
    assert v6bench("lab", "up", "--topology", "a", "--link-speed", "100M", "--shape").returncode == 0
    try:
        db = tmp_path / "r.db"
        r = v6bench("test", "stack-throughput", "--protocol", "tcp,udp", "--message-size", "1024", "--duration", "2", "--repeat", "1",
                    "--db", str(db), "--json", timeout=300)
        assert r.returncode == 0, r.stderr
        tests = json.loads(r.stdout)["tests"]
        assert len(tests) == 4  # tcp/udp × IPv4/IPv6
        for t in tests:
            res = t["result"]
            assert res["tool"].startswith("iperf 3") and res["path"] == "routed"
            # Shaped to 100 Mb/s at layer 1: goodput is below it, and well above nothing.
            assert 30e6 < res["received_bps"] < 100e6, res
            assert res["client_cpu_pct"] is not None and res["server_cpu_pct"] is not None
        assert {(t["result"]["protocol"], t["result"]["ip_version"]) for t in tests} == {
            ("tcp", 4), ("tcp", 6), ("udp", 4), ("udp", 6)}

        r = v6bench("test", "rr-latency", "--payload-size", "8,mtu", "--duration", "1", "--repeat", "1", "--db", str(db), "--json", timeout=300)
        assert r.returncode == 0, r.stderr
        tests = json.loads(r.stdout)["tests"]
        sizes = {(t["result"]["ip_version"], t["result"]["payload_bytes"]) for t in tests}
        assert sizes == {(4, 8), (4, 1480), (6, 8), (6, 1460)}  # seed 004 Table 1's MTU payloads
        for t in tests:
            res = t["result"]
            assert res["routed"]["exchanges"] > 100 and res["baseline"]["exchanges"] > 100
            assert res["routed"]["one_way_mean_ns"] > res["baseline"]["one_way_mean_ns"] > 0
            assert res["router_latency_ns"] == pytest.approx(res["routed"]["one_way_mean_ns"] - res["baseline"]["one_way_mean_ns"])
        for node in ("t1", "t2"):
            left = _addresses(f"{PREFIX}{node}")
            assert ".102/" not in left and "::66/" not in left and "base" not in left, left
    finally:
        v6bench("lab", "down")
