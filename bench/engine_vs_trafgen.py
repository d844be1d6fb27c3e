#!/usr/bin/env python3
"""Sending rate of the v6bench engine against trafgen (netsniff-ng) on one
veth pair, 64-byte frames, sender on one core, in one run.

Both tools send the same 64-byte IPv4/UDP frame (the engine's, taken from
`v6bench-engine frames`) from namespace A to the engine's port MAC in
namespace B, with the sending thread pinned to the same CPU. The engine
also receives and counts every frame on B (its receive thread on the other
CPU); trafgen has no receiver.

Two arrangements of the receiving veth are measured, each with both tools:
  * plain: the receive work of every frame (the veth peer's softirq, with
    the engine's ring copy) runs on the sending CPU;
  * napi: GRO and threaded NAPI on the receiving veth move that work into a
    kernel thread pinned to the other CPU (the engine's receive CPU).

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

NS_A, NS_B, IF_A, IF_B = "v6bb-a", "v6bb-b", "v6bba", "v6bbb"
TX_CPU, RX_CPU = 1, 0


def sh(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, check=True, timeout=kw.pop("timeout", 60), **kw)


def build(napi: bool) -> None:
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "add", ns)
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
    sh("ip", "link", "add", IF_A, "netns", NS_A, "type", "veth", "peer", "name", IF_B, "netns", NS_B)
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


def destroy() -> None:
    for ns in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def spec(rate_fps: float, duration_s: float) -> dict:
    return {
        "spec_version": 1,
        "duration_s": duration_s,
        "drain_s": 1.0,
        "learning": {"settle_s": 0.2},
        "rx_cpu": RX_CPU,
        "ports": [
            {"name": "a", "interface": IF_A, "netns": NS_A, "ipv4": "198.18.0.2/24", "gateway_ipv4": "198.18.0.3",
             "tx_rate": {"fps": rate_fps}, "tx_cpu": TX_CPU},
            {"name": "b", "interface": IF_B, "netns": NS_B, "ipv4": "198.18.0.3/24"},
        ],
        "streams": [{"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 64}],
    }


def engine_run(rate_fps: float, duration_s: float) -> dict:
    r = engine.run_trial(spec(rate_fps, duration_s))
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


def measure(napi: bool, rounds: int, duration_s: float) -> dict:
    name = "napi" if napi else "plain"
    destroy()
    try:
        build(napi)
        probe = engine_run(1000, 0.2)
        with tempfile.TemporaryDirectory() as d:
            cfg = trafgen_config(probe["mac_a"], probe["mac_b"], Path(d))
            tg, eng_max, at_tg = [], [], []
            for i in range(rounds):
                tg.append(trafgen_run(cfg, 3_000_000))
                eng_max.append(engine_run(20e6, duration_s)["offered_fps"])
                print(f"[{name}] round {i + 1}: trafgen {tg[-1]:,.0f} fps, engine max {eng_max[-1]:,.0f} fps", flush=True)
            target = statistics.median(tg)
            for _ in range(rounds):
                at_tg.append(engine_run(target, duration_s))
    finally:
        destroy()
    best = statistics.median(eng_max)
    print()
    print(f"[{name}] trafgen 64 B, 1 core           : {target:12,.0f} fps (median of {rounds})")
    print(f"[{name}] engine  64 B, 1 core, max      : {best:12,.0f} fps")
    print(f"[{name}] ratio engine/trafgen           : {best / target:12.3f}")
    print(f"[{name}] engine at trafgen's rate ({target:,.0f} fps), per round:")
    for r in at_tg:
        print(f"  achieved/intended {r['offered_fps'] / r['intended_fps']:.5f}  sent {r['tx']:,}  lost {r['lost']}  "
              f"ring drops {r['ring_drops']}  interface drops {r['if_drops']}")
    ok = best >= target and all(r["ring_drops"] == 0 and r["if_drops"] == 0 and r["lost"] == 0 for r in at_tg)
    print(f"[{name}] goal (>= trafgen, no receive drops at that rate): {'met' if ok else 'NOT met'}")
    print()
    return {"arrangement": name, "trafgen_fps": target, "engine_max_fps": best, "ratio": best / target,
            "goal_met": ok, "at_trafgen_rate": at_tg}


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per engine run")
    ap.add_argument("--arrangement", choices=["plain", "napi", "both"], default="both")
    args = ap.parse_args()
    todo = [False, True] if args.arrangement == "both" else [args.arrangement == "napi"]
    results = [measure(napi, args.rounds, args.duration) for napi in todo]
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
