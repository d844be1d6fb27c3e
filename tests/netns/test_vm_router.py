"""VM routers (issue 20), as root: ``--router vm`` boots QEMU with Debian's
kernel from the image ``make setup`` built, its NICs taps in the testers'
namespaces; v6bench configures it, sends through it, reads its CPU and
counters over SNMP from inside the guest, resets it, and leaves nothing
behind (no QEMU, tap or namespace), also when QEMU is killed.
``pytest -k vm`` selects these tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

import cli_site
import spoiled
from cli_site import PREFIX, RUN_DIR, clean_site, namespaces, remove_run_dir, v6bench  # noqa: F401
from v6bench.lab.emulated.ruleset import burst_frames

pytestmark = [pytest.mark.netns, pytest.mark.usefixtures("clean_site", "remove_run_dir")]

LIMIT_FPS = 3000
#: Frames that can wait for the guest when a trial ends, to reach its limiter after the tester stopped: a tap's
#: queue (the kernel's TUN_READQ_SIZE) and the virtio-net receive ring QEMU gives the guest (its default size).
TAP_QUEUE_FRAMES = 500
VIRTIO_RING_FRAMES = 256
#: Frames a port carries beside the test frames (ARP, NS and their answers).
CONTROL_FRAMES_MAX = 10


def qemu_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"qemu-system-x86_64") and any(PREFIX.encode() in c or str(RUN_DIR).encode() in c
                                                                         for c in cmd):
                pids.append(int(entry))
    return pids


def taps_in_root() -> list[str]:
    return [d.name for d in Path("/sys/class/net").iterdir() if (d / "tun_flags").exists()]


@pytest.fixture
def nothing_left():
    taps_before = set(taps_in_root())
    yield
    assert not qemu_processes(), "a QEMU process was left running"
    assert set(taps_in_root()) <= taps_before, "a tap was left in the root namespace"


@contextlib.contextmanager
def vm_lab(*options: str):
    """A lab of VM routers with ``options`` (``lab up``), taken down after the block."""
    up = v6bench("lab", "up", "--router", "vm", *options, timeout=240)
    assert up.returncode == 0, up.stderr
    try:
        yield
    finally:
        v6bench("lab", "down")


def hard_reset_trial_s(boot_s: float) -> float:
    """The hard reset's trial [s] (reset 1 s in), from the guest's boot at ``lab up``: on EPYC-25 a reboot under TCG
    took 11.3-13.4 s to forwarding again (boot 11.9 s), once not within 15 s; on Xeon-167 the guest booted in 18.7 s
    and was not forwarding 23 s after the reset, and (booting at its PVH entry in 10-12 s) answered 22.2 s after a
    reset with the trial's traffic on (a fresh clone, 2026-12-01): 30 s after the reset, or twice the boot where
    that is longer."""
    return 1.0 + max(30.0, 2 * boot_s)


#: The soft reset's trial [s] (reset 1 s in). Xeon-167 under TCG: the guest's links down and up took 1.3-2.8 s and
#: IPv6 came back 1.4-3.1 s after the reset (IPv4 0.3-0.7 s), 4 trials; in CI both families were still losing frames
#: 3 s after it. 8 s after the reset: 2.6 times the longest measured.
SOFT_RESET_TRIAL_S = 9.0

#: Each family's cost per frame in runs against the whole trial's (the same QEMU threads over part of its window).
COST_RATIO = (0.5, 2.0)


def trial_json(*options: str) -> dict:
    """A 1-s trial at 1,000 frames/s a sending port on the lab that is up, its result."""
    return cli_site.trial_json("--rate", "1kfps", "--duration", "1", *options)


def test_vm_router_lab_trials_snmp_search_resets_and_a_killed_qemu(nothing_left, tmp_path):
    """One VM router for the whole test (a boot is seconds under TCG):
    status, trials with the guest's counters, a campaign on the lab that is
    up (the binary search finds the guest's limiter; a soft reset, links
    down and up in the guest, and a hard one, the guest rebooting and
    configuring itself from its startup disk, are the DUT's loss, not the
    tester's), then QEMU killed: a stale lab the next command removes."""
    up = v6bench("lab", "up", "--router", "vm", "--link-speed", "100M", "--dut-limit", str(LIMIT_FPS), "--json",
                 timeout=180)
    assert up.returncode == 0, up.stderr
    try:
        st = json.loads(v6bench("lab", "status", "--json").stdout)
        assert st["router"] == "vm"
        r1 = next(n for n in st["nodes"] if n["name"] == "r1")
        assert r1["vm"]["accel"] in ("kvm", "tcg") and qemu_processes() == [r1["vm"]["pid"]]
        assert os.sched_getaffinity(r1["vm"]["pid"]) == {r1["vm"]["cpu"]}  # the router's own CPU
        hard_trial_s = hard_reset_trial_s(r1["vm"]["boot_s"])
        assert "VM: QEMU" in v6bench("lab", "status").stdout
        # Below the limiter: every frame through, counted by the guest's IF-MIB as by the engine (+ ARP/ND).
        # Sent in 0.1-s runs: QEMU's threads, sampled every 20 ms, give each family's cost inside the trial.
        r = cli_site.trial_json("--mix", "50/50", "--frame-size", "128", "--rate", "1000fps", "--duration", "2",
                                "--runs", "0.1")
        assert r["tx_frames"] == 2000 and r["rx_frames"] == 2000 and not r["tester_limited"], r
        assert r["lab"]["router"] == "vm" and r["lab"]["vms"]["r1"]["accel"] == r1["vm"]["accel"]
        assert r["lab"]["vm_image"]["kernel_release"] and r["lab"]["vm_image"]["initrd_sha256"]
        assert r["lab"]["vm_image"]["kernel_entry"] == "pvh"  # Debian's kernel booted uncompressed (lab/vm/pvh.py)
        ifs = r["dut"]["interfaces"]
        assert 2000 <= ifs["r1/r1-t1"]["rx_packets"] <= 2000 + CONTROL_FRAMES_MAX, ifs
        assert 2000 <= ifs["r1/r1-t2"]["tx_packets"] <= 2000 + CONTROL_FRAMES_MAX, ifs
        host = r["dut"]["routers"][0]["host"]
        assert 0 < host["qemu_busy_ratio"] <= 1.05 and host["cpu"] == r1["vm"]["cpu"], host
        each = r["dut_cost"]["by_family"]
        assert all(COST_RATIO[0] < each[v] / r["dut_cost"]["ns_per_frame"] < COST_RATIO[1] for v in ("4", "6")), r["dut_cost"]
        # The guest kernel's own count of what it forwarded (lab/dataplanes/kernel), read in the guest.
        assert r["lab"]["data_plane"] == {"name": "kernel"} and _plane_agrees(r)["slow_path_frames"] == 0
        # Above the limiter the guest's nftables drops the excess: the DUT's loss, not the tester's.
        r = cli_site.trial_json("--mix", "100/0", "--frame-size", "128", "--rate", f"{2 * LIMIT_FPS}fps", "--duration", "2")
        assert not r["tester_limited"], r["tester_limited_reasons"]
        # At most the limit over the trial, its bucket, and the frames still queued for a guest that stalled near the
        # end (CI: 6,343 of 6,000, beyond a bound of +3 %); far below the 12,000 sent either way.
        most = LIMIT_FPS * 2 + burst_frames(LIMIT_FPS) + TAP_QUEUE_FRAMES + VIRTIO_RING_FRAMES
        assert 0.95 * LIMIT_FPS * 2 <= r["rx_frames"] <= most, (r["rx_frames"], most)
        campaign = tmp_path / "vm.toml"
        campaign.write_text(f"""\
name = "vm"
[lab]
router = "vm"
link_speed = "100M"
[dut]
limit_fps = {LIMIT_FPS}
[selftest]
when = "never"
[matrix]
mixes = ["50/50"]
frame_sizes = [1518]    # 8,127 frames/s at 100M: the search starts below what the tester sends through a tap
drain_s = 0.5
[[test]]
kind = "throughput"
search = "binary"
trial_duration_s = 1.0
resolution = 0.05
repeat = 1
confirm_losses = 1      # a TCG guest stalled now and then (Xeon-167): 95 of 2,032 and 73 of 1,778 frames lost, NDR 1,714
[[test]]
kind = "reset"
kinds = ["soft"]
trial_duration_s = {SOFT_RESET_TRIAL_S}
reset_at_s = 1.0
load_pct_of_throughput = 50
repeat = 1
[[test]]
kind = "reset"
kinds = ["hard"]
trial_duration_s = {hard_trial_s}
reset_at_s = 1.0
load_pct_of_throughput = 50
repeat = 1
[design]
order = "file"
    """)
        r = v6bench("run", str(campaign), "--db", str(tmp_path / "r.db"), "--json", timeout=400)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        env = out["run"]["environment"]
        assert "limit rate over" in env["dut"]["rulesets"]["r1"], env["dut"]  # read from the guest
        tests = {t["kind"]: t for t in out["tests"]}
        ndr = tests["throughput"]["result"]["ndr_fps"]
        # Never above the limiter (its 25-ms bucket: +2.5 % in 1-s trials). Below it, a TCG guest's stalls of ~100 ms
        # (Xeon-167) overflow that bucket when the guest catches up, losing frames at loads under the limit in both
        # trials of a load: NDR 1,714 and 2,413 in 2 of 7 runs there (3,048 in the passing runs whose files were
        # kept). The search's precision against a known limiter is test_methods_lab.py's, on namespace routers.
        assert 0.5 * LIMIT_FPS <= ndr <= 1.026 * LIMIT_FPS, ndr
        resets = [t["result"]["kinds"] for t in out["tests"] if t["kind"] == "reset"]
        soft, hard = resets[0]["soft"]["repetitions"][0], resets[1]["hard"]["repetitions"][0]
        for rep in (soft, hard):
            assert not rep["tester_limited"], rep
            for v in ("4", "6"):
                fam = rep["families"][v]
                assert fam["lost_frames"] > 0 and fam["reset_time_s"] is not None and fam.get("recovered") is not False, (rep["reset_kind"], fam)
        # A reboot is longer than links down and up; the guest answered again within the trial.
        assert hard["families"]["4"]["reset_time_s"] > soft["families"]["4"]["reset_time_s"]
        assert hard["guest_answered_after_s"] < hard_trial_s - 2, hard
        # The campaign ran on the lab that is up, which is up still.
        assert qemu_processes() == [r1["vm"]["pid"]]
        # QEMU killed: the next command finds a stale lab and removes it.
        os.kill(r1["vm"]["pid"], signal.SIGKILL)
        time.sleep(0.5)
        assert json.loads(v6bench("lab", "status", "--json").stdout)["up"] is False
        down = v6bench("lab", "down")
        assert down.returncode == 0 and "removed" in down.stdout, down
        assert not namespaces() and not qemu_processes()
    except BaseException:  # a failure takes its lab down itself (the fixtures then check, not clean)
        v6bench("lab", "down")
        raise


def test_a_vm_router_with_four_tester_ports_carries_full_mesh_traffic(nothing_left):
    """mesh:4: one VM with a NIC per tester port (a tap in each tester's
    namespace); every port sends to every other, both families, and all of
    it arrives. (chain:N has no code of its own beyond topology b's
    guest-to-guest links; it ran by hand, docs/vm-router.md.)"""
    with vm_lab("--topology", "mesh:4"):
        res = trial_json("--mesh", "full", "--frame-size", "256")
        assert res["tx_frames"] == 4000 and res["lost_frames"] == 0, (res["lost_frames"], res["tester_limited_reasons"])
        assert len({s["direction"] for s in res["streams"]}) == 12
        nics = set(guest_cmd("r1", "ls", "/sys/class/net").split())
        assert {"r1-t1", "r1-t2", "r1-t3", "r1-t4", "mgmt"} <= nics, nics  # named by their MACs (lab/vm/guest/init)


def test_the_dut_configurations_run_inside_the_guest(nothing_left):
    """ACLs at both ends, NAT44, a 1400-byte link MTU and shaping, all
    applied by the guest's startup script and counted by the guest's own
    kernel: every datagram checked by the ACL twice (in and out), the NAT
    rule taken by the flow's first frame, 1518-byte frames fragmented at the
    source and every one received, a token bucket at the link speed on each
    port, the link's MTU."""
    with vm_lab("--acl", "25", "--acl-at", "both", "--nat44", "--mtu", "1400", "--shape", "--link-speed", "100M"):
        # Fixed ports: the rule counters below count the trial's frames alone, with no preliminary phase before them.
        # The guest's counters add up every run of the trial: a run the tests' retry rule repeats (spoiled.py) is
        # counted from the ruleset as it stood before the repeat (in CI the counters read 2,000 and 4,000 for one trial).
        before = {"rules": guest_cmd("r1", "/usr/sbin/nft", "list", "ruleset")}
        rebase = lambda: before.update(rules=guest_cmd("r1", "/usr/sbin/nft", "list", "ruleset"))
        with spoiled.before_retry(rebase):
            res = trial_json("--mix", "50/50", "--frame-size", "1518", "--ports", "fixed")
        assert res["rx_frames"] == 1000 and res["lost_frames"] == 0, (res["lost_frames"], res["tester_limited_reasons"])
        rules = guest_cmd("r1", "/usr/sbin/nft", "list", "ruleset")
        # 500 datagrams a family, each checked in and out; IPv4's two fragments are one datagram again by then
        # (NAT's connection tracking reassembles them), IPv6's are checked one by one.
        for rule, packets in (("ip daddr 198.19.0.2", 1000), ("ip6 daddr 2001:2:0:1::2", 2000)):
            assert rule_packets(rules, rule) - rule_packets(before["rules"], rule) == packets, rules
        snat = next(x for x in rules.splitlines() if "snat to 198.19.0.1" in x)
        assert "counter packets 0 " not in snat, snat
        qdiscs = guest_cmd("r1", "/usr/sbin/tc", "qdisc", "show")
        assert all(f"tbf 800{i}: dev r1-t{i} root" in qdiscs and "rate 100Mbit" in qdiscs for i in (1, 2)), qdiscs
        assert guest_cmd("r1", "cat", "/sys/class/net/r1-t2/mtu") == "1400"


#: Frames a flow sends through the flowtable's slow path at most: its first (connection tracking confirms the flow),
#: the one whose forward-chain rule puts it in the flowtable, and a few in flight meanwhile. Measured on EPYC-25-1
#: under TCG: 10 for four streams (two a direction) at 1,000 frames/s each.
FLOWTABLE_SLOW_FRAMES_A_STREAM = 10


def _plane_agrees(res: dict) -> dict:
    """R1's data-plane counts over trial ``res``, after checking that they equal what the engine received."""
    assert res["lost_frames"] == 0, res["tester_limited_reasons"]
    r1 = res["dut"]["data_plane"]["routers"]["r1"]
    assert r1["beyond_engine_ipv4_frames"] == r1["beyond_engine_ipv6_frames"] == 0, r1
    assert r1["forwarded_ipv4_frames"] + r1["forwarded_ipv6_frames"] == res["rx_frames"], r1
    return r1


def test_the_flowtable_and_the_xdp_forwarder_forward_in_the_guest_counting_what_the_engine_counts(nothing_left):
    """Data planes in the VM router's guest (lab/dataplanes/): nftables'
    flowtable forwards a flow's frames after its first few, which the
    kernel's stack forwards (the slow path), its counts (ingress counters
    around its hook, and the kernel's) equal to the engine's; with RFC 4814's
    ports the flowtable tracks connections, so the preliminary phase opens
    them first. The XDP forwarder, on virtio-net's native XDP in the guest,
    forwards both families both ways, its counters (bpftool in the guest)
    equal to the engine's."""
    with vm_lab("--data-plane", "flowtable"):
        assert guest_cmd("r1", "/usr/sbin/nft", "list", "flowtables").count("flowtable fast") == 1
        res = trial_json("--mix", "50/50", "--bidirectional", "--ports", "fixed")
        assert res["rx_frames"] == 2000 and res["lab"]["data_plane"]["name"] == "flowtable"
        counts = _plane_agrees(res)
        assert counts["slow_path_frames"] <= 4 * FLOWTABLE_SLOW_FRAMES_A_STREAM, counts
        walked = trial_json("--mix", "50/50", "--preliminary-connections", "100")
        assert walked["ports"]["connections_per_stream"]["1"] >= 100 and walked["rx_frames"] == 1000
        _plane_agrees(walked)
    with vm_lab("--data-plane", "xdp"):
        assert "xdp" in guest_cmd("r1", "/usr/bin/ip", "link", "show", "dev", "r1-t1")
        res = trial_json("--mix", "50/50", "--bidirectional")
        assert res["rx_frames"] == 2000 and res["lab"]["data_plane"]["name"] == "xdp"
        counts = _plane_agrees(res)
        assert counts["forwarded_ipv4_frames"] == counts["forwarded_ipv6_frames"] == 1000
        assert counts["slow_path_frames"] <= 4, counts  # the first frames, before the neighbours were known


#: The datapath's misses at most in a trial once its flows are cached (the first trial's frames wait for them under
#: TCG: 677 of 8,000 and 1,350 of 10,000 on EPYC-25-1): ARP and ND, and a flow's frame now and then. Measured: 2
#: and 6 of 8,000, 0 of 10,000.
OVS_CACHED_MISSES = 40


def test_open_vswitch_s_kernel_datapath_routes_in_the_guest_counting_what_the_engine_counts(nothing_left):
    """Open vSwitch's kernel datapath (the guest's openvswitch module) as the
    VM router: the router's addresses on the bridge's internal ports, so the
    guest's kernel answers ARP and ND through the bridge; both families both
    ways, the flows' counts equal to the engine's; its flow cache is state,
    so with RFC 4814 ports the preliminary phase opens the trial's flows
    first and the trial's frames miss little."""
    with vm_lab("--data-plane", "ovs-kernel"):
        assert "r1-t1-k" in guest_cmd("r1", "/usr/bin/ip", "-br", "addr", "show")
        first = trial_json("--mix", "50/50", "--bidirectional", "--ports", "fixed")
        assert first["rx_frames"] == 2000 and first["lab"]["data_plane"]["datapath"] == "system"
        _plane_agrees(first)
        res = trial_json("--mix", "50/50", "--bidirectional", "--preliminary-connections", "100",
                         "--preliminary-rate", "1000")
        assert res["preliminary"] and res["ports"]["connections_per_stream"]["1"] >= 100
        counts = _plane_agrees(res)
        assert counts["forwarded_ipv4_frames"] == counts["forwarded_ipv6_frames"] == 1000
        assert counts["slow_path_frames"] <= OVS_CACHED_MISSES, counts


@pytest.mark.parametrize("mode", ["stateless", "stateful"])
def test_a_vm_router_translates_with_jool_in_its_kernel(nothing_left, mode):
    """NAT64 on a VM router: Jool, built by DKMS into the image, in R1's
    guest kernel. Stateless (SIIT): IPv6 from t1 arrives at t2 as IPv4 and
    IPv4 from t2 at t1 as IPv6 in one bidirectional trial. Stateful, on
    flow 2 beside NAT44 and both families native on flow 1: RFC 4814's
    ports, their connections opened by the preliminary phase, held by
    Jool's sessions. Jool's own counters read back with the trial."""
    options = ["--nat64", mode] + (["--nat44", "--scope", "flow2"] if mode == "stateful" else [])
    with vm_lab(*options):
        mods = guest_cmd("r1", "cat", "/proc/modules")
        assert ("jool_siit " if mode == "stateless" else "jool ") in mods, mods
        if mode == "stateless":
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--bidirectional")
            by = {(s["direction"], s["ip_version"]): s for s in res["streams"]}
            assert by[("t1->t2", 6)]["rx_ip_version"] == 4 and by[("t2->t1", 4)]["rx_ip_version"] == 6, by.keys()
            translated = by[("t1->t2", 6)]["rx_frames"] + by[("t2->t1", 4)]["rx_frames"]
        else:
            # A TCG guest opens fewer than 10,000 Jool sessions a second on Xeon-167 (32,581 of 40,400 passed), so
            # 1,000 connections a stream at 2,000/s.
            res = trial_json("--mix", "50/50", "--frame-size", "128", "--flows", "2", "--preliminary-connections", "1000",
                             "--preliminary-rate", "2000")
            assert res["preliminary"]["rx_frames"] == res["preliminary"]["tx_frames"], res["preliminary"]
            translated = next(s["rx_frames"] for s in res["streams"] if s.get("rx_ip_version") == 4)
        assert res["lost_frames"] == 0 and res["rx_frames"] == res["tx_frames"], res["tester_limited_reasons"]
        t = res["dut"]["translator"]
        assert t["implementation"] == "jool" and t["mode"] == mode and t["running"], t
        assert t["out_frames"] >= translated > 0, (t, translated)
        if mode == "stateful":
            assert t["sessions"] >= res["preliminary"]["connections_per_stream"]["2"], t


def rule_packets(ruleset: str, rule: str) -> int:
    """The packets nftables counted for the rule of ``ruleset`` (``nft list ruleset``) that starts with ``rule``."""
    (line,) = [x for x in ruleset.splitlines() if x.strip().startswith(rule + " counter packets ")]
    return int(line.split("counter packets ")[1].split()[0])


def guest_cmd(node: str, *argv: str) -> str:
    from v6bench.lab import backends
    from v6bench.lab.emulated import state
    from v6bench.lab.model.site import Site
    lab = state.load(Site(RUN_DIR, PREFIX))
    return backends.of(lab).router_command(lab.node(node), list(argv)).strip()


def test_a_vm_router_holds_a_table_loaded_in_its_guest_and_again_after_a_reset(nothing_left):
    """``--table`` with VM routers (lab/vm/vm_lab.py): the route file is the
    guest's second disk and its memory grows for it; the table is loaded in
    the guest and counted back from the guest's kernel; t1's frames walk it,
    every frame counted; a soft reset (links down and up, which takes the
    routes through the next hop with it) loads it again, counted back and
    looked up again (the reset fails otherwise). Measured under TCG: lab up
    24 s (boot 11.5 s, 20,000 routes in 3.3 s), the reset 7.7 s."""
    from v6bench.lab.emulated import control, fib_load
    from v6bench.lab import interface
    from v6bench.lab.vm import vm_lab as vm_routers
    from v6bench.lab.model.site import Site

    with vm_lab("--table", "10k", "--destinations", "500"):
        st = json.loads(v6bench("lab", "status", "--json").stdout)
        r1 = st["fib"]["routers"]["r1"]
        assert (r1["ipv4_routes"], r1["ipv6_routes"]) == (10_000, 10_000) and 0 < r1["load_s"] <= r1["fib_learning_s"], r1
        assert r1["slab_kib"] > 0, r1  # the guest's own kernel memory, not this machine's
        (node,) = [n for n in st["nodes"] if n["name"] == "r1"]
        assert node["vm"]["memory_mb"] > 256, node["vm"]

        r = trial_json("--mix", "50/50")
        for s in r["engine"]["streams"]:
            assert s["walk"]["dst_ip"] == 500 and s["walk"]["order"] == "permuted", s["walk"]
            assert s["tx_frames"] == 500 and s["rx_frames"] == 500 and s["lost_frames"] == 0, s
        site = Site(RUN_DIR, PREFIX)
        lab, busy = control.status(site)
        assert lab is not None and not busy
        _, timing = interface.reset(site, lab, "soft")
        assert timing["reset_kind"] == "soft"
        shell = vm_routers.table_shells({"r1": vm_routers.vm_of(lab.node("r1"))})["r1"]
        assert fib_load.route_counts(shell) == {4: 10_000, 6: 10_000}


def test_ds_lite_frames_are_rfc_2473s_between_b4_and_aftr_natted_after_and_t2_answers_through_both(nothing_left,
                                                                                                   tmp_path):
    """DS-Lite (RFC 6333; lab/model/dslite.py) on VM routers: t1's IPv4
    frames as the B4 (R1) takes them in equal byte for byte on the link
    between the B4 and the AFTR (R2), both written by QEMU (lab/vm/capture.py),
    scapy's IPv6 packet (next header 4, the routers' link addresses) around
    them with the B4's hop (TTL − 1), and after the AFTR scapy's NAT44 of
    them (R2's address, TTL − 2, checksums recomputed). Both ways, with
    RFC 4814 ports, t2 answers t1's connections back through AFTR and B4
    and every frame arrives, counted on both guests' tunnel device; nothing
    from t2 opened a connection. (The one real tunnel of VM routers in make
    test, for its time: the others' configuration is tested in
    tests/unit/test_vm_parts.py, and they ran by hand, docs/vm-router.md.)"""
    from scapy.all import IP, UDP, IPv6, rdpcap

    from v6bench.lab.emulated import state
    from v6bench.lab.model import dslite
    from v6bench.lab.model.site import Site
    from v6bench.lab.vm import capture as qemu_capture, vm_lab as vm_routers

    with vm_lab("--topology", "b", "--dslite"):
        st = json.loads(v6bench("lab", "status", "--json").stdout)
        assert st["tunnel"]["kind"] == "DS-Lite" and st["tunnel"]["overhead_bytes"] == 40, st["tunnel"]
        lab = state.load(Site(RUN_DIR, PREFIX))
        iface = {(n["name"], i["name"]): i for n in lab.nodes for i in n["interfaces"]}
        sent_pcap, between_pcap, after_pcap = (tmp_path / f"{k}.pcap" for k in ("sent", "between", "after"))
        r1 = vm_routers.vm_of(lab.node("r1"))
        with cli_site.capture(lab.node("t2")["netns"], "t2-r2", after_pcap, 5, "udp"), \
                qemu_capture.dump(r1, "r1-t1", sent_pcap), qemu_capture.dump(r1, "r1-r2", between_pcap), \
                spoiled.before_retry(lambda: [qemu_capture.restart(r1, n, f) for n, f in (("r1-t1", sent_pcap), ("r1-r2", between_pcap))]):
            # A first trial, then what a repeat of a spoiled one does (one CI run's captures held both): each
            # capture, QEMU's too, starts afresh and holds the kept trial's frames alone.
            trial_json("--mix", "100/0", "--ports", "fixed", "--frame-size", "128", "--rate", "5fps")
            spoiled.start_afresh()
            res = trial_json("--mix", "100/0", "--ports", "fixed", "--frame-size", "128", "--rate", "5fps")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 5, res["tester_limited_reasons"]
        sent = [f[IP] for f in rdpcap(str(sent_pcap)) if UDP in f]
        between = [f[IPv6] for f in rdpcap(str(between_pcap)) if IPv6 in f and f[IPv6].nh == 4]
        after = [f[IP] for f in rdpcap(str(after_pcap)) if UDP in f]
        assert len(sent) == len(between) == len(after) == 5, (len(sent), len(between), len(after))
        assert len({b.fl for b in between}) == 1  # the tunnel's flow label: a hash of the inner flow
        r1_v6, r2_v6 = (iface[k]["ipv6"].split("/")[0] for k in (("r1", "r1-r2"), ("r2", "r2-r1")))
        r2_v4 = iface[("r2", "r2-t2")]["ipv4"].split("/")[0]
        for s, b, a in zip(sent, between, after):
            inner = _rewritten(s, ttl=s.ttl - 1)
            outer = IPv6(tc=0, fl=b.fl, hlim=64, nh=4, src=r1_v6, dst=r2_v6) / inner
            assert bytes(b) == bytes(IPv6(bytes(outer))), (b.show2(dump=True), outer.show2(dump=True))
            natted = _rewritten(s, ttl=s.ttl - 2, src=r2_v4)
            assert bytes(a) == bytes(natted), (a.show2(dump=True), natted.show2(dump=True))
        res = trial_json("--mix", "100/0", "--frame-size", "128", "--rate", "500fps", "--bidirectional",
                         "--preliminary-connections", "100", "--preliminary-rate", "5000")
        assert res["lost_frames"] == 0 and res["rx_frames"] == 1000, (res["lost_frames"], res["tester_limited_reasons"])
        assert {s["direction"] for s in res["streams"]} == {"t1->t2", "t2->t1"}
        rules = guest_cmd("r2", "/usr/sbin/nft", "list", "table", "ip", dslite.TABLE)
        unsolicited = next(x for x in rules.splitlines() if "ct state new" in x)
        assert "counter packets 0 " in unsolicited, rules
        assert "counter packets 0 " not in next(x for x in rules.splitlines() if "snat to" in x), rules
        for node in ("r1", "r2"):  # each end of the softwire encapsulates one direction and takes the other out
            tx = int(guest_cmd(node, "cat", "/sys/class/net/tun0/statistics/tx_packets"))
            rx = int(guest_cmd(node, "cat", "/sys/class/net/tun0/statistics/rx_packets"))
            assert tx >= 500 and rx >= 500, (node, tx, rx)


def _rewritten(ip, **fields):
    """IPv4 packet ``ip`` with ``fields`` changed as a router and a NAT change them, its checksums recomputed (a
    zero UDP checksum, none, stays zero)."""
    from scapy.all import IP, UDP
    p = ip.copy()
    for k, v in fields.items():
        setattr(p, k, v)
    del p.chksum
    if "src" in fields and p[UDP].chksum:
        del p[UDP].chksum
    return IP(bytes(p))
