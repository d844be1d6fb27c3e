#!/usr/bin/env python3
"""Sending rate of the v6bench engine against trafgen (netsniff-ng) and
xdp-trafficgen (xdp-tools) on one veth pair, sender on one core, in one run.

trafgen and the engine send the same 64-byte IPv4/UDP frame (the engine's,
taken from `v6bench-engine frames`) from namespace A to the engine's port
MAC in namespace B, with the sending thread pinned to the same CPU. The
engine also receives and counts every frame on B (its receive thread on the
other CPU); the peers have no receiver. The engine runs once per backend
(``--backends``: af_packet, af_xdp, xdp_live; docs/engine-spec.md).

xdp-trafficgen (Debian's 1.3.1) sends only IPv6/UDP, 68-byte frames (64
without FCS), through XDP (BPF_PROG_RUN live frames), which needs NAPI on
the receiving veth: it runs in the napi arrangement only, against the
engine's smallest IPv6/UDP frame (84 B, its signature included). Its rate
is read from B's receive counter over the middle of a long run.

Two arrangements of the receiving veth are measured, each with both tools:
  * plain: the receive work of every frame (the veth peer's softirq, with
    the engine's ring copy) runs on the sending CPU;
  * napi: GRO and threaded NAPI on the receiving veth move that work into a
    kernel thread pinned to the other CPU (the engine's receive CPU), at
    SCHED_FIFO as the lab runs every NAPI thread (lab/napi.py).

Prints, per arrangement, as medians over --rounds alternating runs:
  * trafgen's rate and the engine's maximum rate, and their ratio;
  * the engine at trafgen's rate: achieved/intended, receive-ring drops,
    interface drops and lost frames (the goal: none).

Run as root: `make bench`. Creates namespaces v6bb-a and v6bb-b and
removes them on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from v6bench import engine, stopping  # noqa: E402
from v6bench.lab import napi as napi_lab  # noqa: E402

NS_A, NS_B, IF_A, IF_B = "v6bb-a", "v6bb-b", "v6bba", "v6bbb"
TX_CPU, RX_CPU = 1, 0


def sh(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, check=True, timeout=kw.pop("timeout", 60), **kw)


def build(napi: bool, queues: int = 1) -> None:
    """The veth pair A–B; ``queues`` transmit and receive queues each way
    (bench/sender_queues.py)."""
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "add", ns)
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
    q = ("numtxqueues", str(queues), "numrxqueues", str(queues))
    sh("ip", "link", "add", IF_A, "netns", NS_A, *q, "type", "veth", "peer", "name", IF_B, "netns", NS_B, *q)
    sh("ip", "-n", NS_A, "link", "set", IF_A, "up")
    sh("ip", "-n", NS_B, "link", "set", IF_B, "up")
    for _ in range(100):
        if "LOWER_UP" in sh("ip", "-n", NS_B, "link", "show", IF_B).stdout:
            break
        time.sleep(0.05)
    if napi:
        # veth hands a frame to NAPI only if GRO is on and, with TSO on the sender,
        # UDP GRO forwarding is on at the receiver (veth_skb_is_eligible_for_gro).
        sh("ip", "netns", "exec", NS_B, "ethtool", "-K", IF_B, "gro", "on", "rx-udp-gro-forwarding", "on")
        sh("ip", "netns", "exec", NS_B, "sh", "-c", f"echo 1 > /sys/class/net/{IF_B}/threaded")
        time.sleep(0.2)
        threads = [line.split()[0] for line in sh("ps", "-eo", "pid,comm").stdout.splitlines() if f"napi/{IF_B}" in line]
        if not threads:
            raise SystemExit("threaded NAPI did not start on the receiving veth")
        for pid in threads:
            sh("taskset", "-pc", str(RX_CPU), pid)
            # as in the lab (lab/napi.py): a port's receive work runs before any task on its CPU
            sh("chrt", "-f", "-p", str(napi_lab.FIFO_PRIORITY), pid)


def destroy() -> None:
    for ns in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def spec(rate_fps: float, duration_s: float, backend: str = "af_packet", ip_version: int = 4) -> dict:
    size = 64 if ip_version == 4 else 84
    return {
        "spec_version": 1,
        "duration_s": duration_s,
        "drain_s": 1.0,
        "learning": {"settle_s": 0.2},
        "rx_cpu": RX_CPU,
        "ports": [
            {"name": "a", "interface": IF_A, "netns": NS_A, "ipv4": "198.18.0.2/24", "gateway_ipv4": "198.18.0.3",
             "ipv6": "2001:2::2/64", "gateway_ipv6": "2001:2::3", "tx_rate": {"fps": rate_fps}, "tx_cpu": TX_CPU,
             "backend": backend},
            {"name": "b", "interface": IF_B, "netns": NS_B, "ipv4": "198.18.0.3/24", "ipv6": "2001:2::3/64",
             "backend": backend},
        ],
        "streams": [{"tx_port": "a", "rx_port": "b", "ip_version": ip_version, "frame_size": size}],
    }


def engine_run(rate_fps: float, duration_s: float, backend: str = "af_packet", ip_version: int = 4) -> dict:
    r = engine.run_trial(spec(rate_fps, duration_s, backend, ip_version))
    a, b = r["ports"]
    return {
        "offered_fps": a["tx"]["offered_fps"],
        "intended_fps": a["tx"]["intended_fps"],
        "tx": r["totals"]["tx_frames"],
        "lost": r["totals"]["lost_frames"],
        "ring_drops": b["rx_ring_drops"],
        "if_drops": (b["interface_counters"] or {}).get("rx_dropped", 0),
        "mac_a": a["mac"],
        "mac_b": b["mac"],
    }


def trafgen_config(mac_a: str, mac_b: str, workdir: Path) -> Path:
    s = spec(1000, 1)
    s["ports"][0]["mac"] = mac_a
    s["ports"][0]["next_hop_mac"] = mac_b
    pcap = workdir / "frame.pcap"
    engine.write_frames(s, pcap, count=1)
    frame = pcap.read_bytes()[24 + 16 :]
    cfg = workdir / "frame.cfg"
    cfg.write_text("{ " + ", ".join(f"0x{b:02x}" for b in frame) + " }\n")
    return cfg


def trafgen_run(cfg: Path, frames: int) -> float:
    out = sh("ip", "netns", "exec", NS_A, "taskset", "-c", str(TX_CPU), "trafgen", "--dev", IF_A, "--conf", str(cfg),
             "--cpus", "1", "-n", str(frames), timeout=300)
    text = out.stdout + out.stderr
    m = re.search(r"(\d+) sec, (\d+) usec on CPU\d+ \((\d+) packets\)", text)
    if not m:
        raise SystemExit(f"cannot read trafgen's timing from:\n{text}")
    return int(m.group(3)) / (int(m.group(1)) + int(m.group(2)) / 1e6)


class PeerFailed(Exception):
    """A peer tool that does not run here (said in the output, then left out)."""


def xdp_trafficgen_run(mac_a: str, mac_b: str, window_s: float = 2.0) -> float:
    """xdp-trafficgen's rate [frames/s]: B's received frames over ``window_s``
    in the middle of a run bounded in count (and by a time-out)."""
    frames = 40_000_000
    cmd = ["ip", "netns", "exec", NS_A, "taskset", "-c", str(TX_CPU), "xdp-trafficgen", "udp", "--threads", "1",
           "--src-mac", mac_a, "--dst-mac", mac_b, "--src-addr", "2001:2::2", "--dst-addr", "2001:2::3",
           "--num-packets", str(frames), IF_A]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0)
        if p.poll() is not None:
            raise PeerFailed(" / ".join(line.strip() for line in p.stdout.read().splitlines()[-2:]))
        before, t0 = rx_packets(), time.monotonic()
        time.sleep(window_s)
        after, t1 = rx_packets(), time.monotonic()
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return (after - before) / (t1 - t0)


def rx_packets() -> int:
    """Frames B's veth received (/proc/net/dev in namespace B)."""
    text = sh("ip", "netns", "exec", NS_B, "cat", "/proc/net/dev").stdout
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == IF_B:
            return int(rest.split()[1])
    raise SystemExit(f"{IF_B} not in namespace {NS_B}'s /proc/net/dev")


def measure(napi: bool, rounds: int, duration_s: float, backends: list[str]) -> dict:
    name = "napi" if napi else "plain"
    destroy()
    peers = {"trafgen": []}
    if napi:
        peers["xdp-trafficgen"] = []
    eng_max = {b: [] for b in backends}
    eng6_max = {b: [] for b in backends}
    at_tg = {b: [] for b in backends}
    try:
        build(napi)
        probe = engine_run(1000, 0.2)
        with tempfile.TemporaryDirectory() as d:
            cfg = trafgen_config(probe["mac_a"], probe["mac_b"], Path(d))
            for i in range(rounds):
                peers["trafgen"].append(trafgen_run(cfg, 3_000_000))
                line = f"[{name}] round {i + 1}: trafgen {peers['trafgen'][-1]:,.0f} fps"
                if "xdp-trafficgen" in peers:
                    try:
                        peers["xdp-trafficgen"].append(xdp_trafficgen_run(probe["mac_a"], probe["mac_b"]))
                        line += f", xdp-trafficgen (IPv6, 68 B) {peers['xdp-trafficgen'][-1]:,.0f} fps"
                    except PeerFailed as e:
                        print(f"[{name}] xdp-trafficgen does not run here, left out: {e}", flush=True)
                        del peers["xdp-trafficgen"]
                for b in backends:
                    eng_max[b].append(engine_run(20e6, duration_s, b)["offered_fps"])
                    line += f", engine {b} {eng_max[b][-1]:,.0f} fps"
                    if "xdp-trafficgen" in peers:
                        eng6_max[b].append(engine_run(20e6, duration_s, b, 6)["offered_fps"])
                        line += f" (IPv6 84 B {eng6_max[b][-1]:,.0f})"
                print(line, flush=True)
            target = statistics.median(peers["trafgen"])
            for _ in range(rounds):
                for b in backends:
                    at_tg[b].append(engine_run(target, duration_s, b))
    finally:
        destroy()
    print()
    out = {"arrangement": name, "trafgen_fps": target, "engines": {}}
    print(f"[{name}] trafgen 64 B IPv4, 1 core          : {target:12,.0f} fps (median of {rounds})")
    xtg = statistics.median(peers["xdp-trafficgen"]) if peers.get("xdp-trafficgen") else None
    if xtg:
        print(f"[{name}] xdp-trafficgen 68 B IPv6, 1 core   : {xtg:12,.0f} fps (median of {rounds})")
        out["xdp_trafficgen_fps"] = xtg
    for b in backends:
        best = statistics.median(eng_max[b])
        print(f"[{name}] engine {b:<9} 64 B, max          : {best:12,.0f} fps   ratio to trafgen {best / target:.3f}")
        e = {"engine_max_fps": best, "ratio": best / target}
        if xtg:
            best6 = statistics.median(eng6_max[b])
            print(f"[{name}] engine {b:<9} 84 B IPv6, max     : {best6:12,.0f} fps   ratio to xdp-trafficgen {best6 / xtg:.3f}")
            e.update(engine_ipv6_max_fps=best6, ratio_xdp_trafficgen=best6 / xtg)
        print(f"[{name}] engine {b} at trafgen's rate ({target:,.0f} fps), per round:")
        for r in at_tg[b]:
            print(f"  achieved/intended {r['offered_fps'] / r['intended_fps']:.5f}  sent {r['tx']:,}  lost {r['lost']}  "
                  f"ring drops {r['ring_drops']}  interface drops {r['if_drops']}")
        ok = best >= target and all(r["ring_drops"] == 0 and r["if_drops"] == 0 and r["lost"] == 0 for r in at_tg[b])
        print(f"[{name}] engine {b}: goal (>= trafgen, no receive drops at that rate): {'met' if ok else 'NOT met'}")
        e.update(goal_met=ok, at_trafgen_rate=at_tg[b])
        out["engines"][b] = e
    print()
    return out


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per engine run")
    ap.add_argument("--arrangement", choices=["plain", "napi", "both"], default="both")
    ap.add_argument("--backends", default="af_packet,af_xdp,xdp_live", help="the engine's, comma-separated, of af_packet, af_xdp, xdp_live [all three]")
    args = ap.parse_args()
    todo = [False, True] if args.arrangement == "both" else [args.arrangement == "napi"]
    results = [measure(napi, args.rounds, args.duration, args.backends.split(",")) for napi in todo]
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
