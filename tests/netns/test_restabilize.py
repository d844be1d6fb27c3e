"""A trial waits out the incomplete datagrams an earlier one left in the
DUT (lab/emulated/leftovers.py; RFC 2544 §23), as root, on the tests' own
lab site: t1 sends R1 first fragments whose rest never comes, R1 holds
them for its reassembly timeout (shortened to 3 s here), the next trial
starts only once they expired and says what was held, and a trial after
it, with nothing held, says nothing."""

from __future__ import annotations

import json
import socket

import pytest
from scapy.all import IP, Ether, Raw

from cli_site import PREFIX, RUN_DIR, clean_site, remove_run_dir, trial_json, v6bench  # noqa: F401
from v6bench.lab.emulated import leftovers, state
from v6bench.lab.machine import nsctl
from v6bench.lab.model.site import Site

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]
SITE = Site(RUN_DIR, PREFIX)
#: First fragments sent, each of its own Identification, and R1's reassembly timeout meanwhile [s].
ORPHANS = 4
TIMEOUT_S = 3


def held(netns: str) -> leftovers.Held:
    return leftovers.parse(nsctl.command(netns, ["cat", *leftovers.FILES]))


def test_a_trial_waits_until_the_dut_holds_no_fragment_of_an_earlier_one():
    up = v6bench("lab", "up", "--topology", "a")
    assert up.returncode == 0, up.stderr
    try:
        lab = state.load(SITE)
        t1, r1 = lab.node("t1"), lab.node("r1")
        port, dut_port = t1["interfaces"][0], r1["interfaces"][0]
        nsctl.command(r1["netns"], ["sysctl", "-qw", f"net.ipv4.ipfrag_time={TIMEOUT_S}"])
        frames = [bytes(Ether(src=port["mac"], dst=dut_port["mac"]) /
                        IP(src=port["ipv4"].split("/")[0], dst=dut_port["ipv4"].split("/")[0], id=1000 + i,
                           flags="MF", proto=17) / Raw(b"\x00" * 64)) for i in range(ORPHANS)]

        def send() -> int:
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
                s.bind((port["name"], 0))
                return sum(s.send(f) for f in frames)
        assert nsctl.run_in(t1["netns"], send) == sum(map(len, frames))
        assert held(r1["netns"]).datagrams == ORPHANS
        r = v6bench("trial", "--mix", "100/0", "--frame-size", "128", "--rate", "100fps", "--duration", "1", "--json")
        assert r.returncode == 0, r.stderr
        waited = json.loads(r.stdout)["restabilized"]
        assert waited["routers"] == {"r1": {"datagrams": ORPHANS, "bytes": held_bytes(waited)}}
        assert 0 < waited["waited_s"] <= TIMEOUT_S + leftovers.MARGIN_S + leftovers.POLL_S
        assert held(r1["netns"]).datagrams == 0
        assert "restabilized" not in trial_json("--mix", "100/0", "--frame-size", "128", "--rate", "100fps",
                                                "--duration", "1")
    finally:
        v6bench("lab", "down")


def held_bytes(waited: dict) -> int:
    """The memory R1 said its datagrams took (the kernel's accounting: more than the bytes sent), checked positive."""
    b = waited["routers"]["r1"]["bytes"]
    assert b > ORPHANS * 64
    return b
