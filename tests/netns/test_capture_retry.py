"""The tier's own capture helper (cli_site.capture) with its retry rule
(spoiled.unspoiled): a trial run again because the tester spoiled it is
captured afresh, so a test that counts the frames on the wire counts the
kept trial's alone."""

from __future__ import annotations

import json

import pytest

import spoiled
from cli_site import PREFIX, RUN_DIR, capture, clean_site, remove_run_dir, tshark_fields, v6bench  # noqa: F401
from v6bench.lab.emulated import state
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)


def test_a_trial_run_again_is_captured_alone(tmp_path):
    up = v6bench("lab", "up")
    assert up.returncode == 0, up.stderr
    try:
        r1 = state.load(SITE).node("r1")["netns"]
        runs: list[dict] = []

        def run() -> dict:
            """A real trial; the first one is said to be spoiled, so the rule runs it again."""
            r = v6bench("trial", "--mix", "100/0", "--frame-size", "128", "--rate", "600fps", "--duration", "0.5",
                        "--ports", "fixed", "--json")
            assert r.returncode == 0, r.stderr
            runs.append(json.loads(r.stdout))
            return {**runs[-1], "tester_limited": len(runs) == 1, "tester_over_capacity": False}

        pcap = tmp_path / "r1-t2.pcap"
        with capture(r1, "r1-t2", pcap, 1000, "udp") as tshark:
            kept = spoiled.unspoiled(run)
        assert len(runs) == 2 and kept["rx_frames"] == runs[1]["rx_frames"] == 300, [r["rx_frames"] for r in runs]
        rows = tshark_fields(pcap, "ip.src")
        assert len(rows) == 300, (len(rows), tshark)  # the kept trial's; the first one's 300 are not in the file
        assert not spoiled.BEFORE_RETRY, "the capture's restart is dropped when its block ends"
    finally:
        v6bench("lab", "down")
