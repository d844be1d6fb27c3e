#!/usr/bin/env python3
"""Sending rate of the v6bench engine against trafgen (netsniff-ng) and
xdp-trafficgen (xdp-tools) on one veth pair, sender on one core, in one run.

trafgen and the engine send the same 64-byte IPv4/UDP frame (the engine's,
taken from `v6bench-engine frames`) from namespace A to the engine's port
MAC in namespace B, with the sending thread pinned to the same CPU. The
engine also receives and counts every frame on B (its receive thread on the
other CPU); the peers have no receiver. The engine runs once per backend
(``--backends``: af_packet, af_xdp, xdp_live; docs/engine-spec.md), and
for af_packet and af_xdp once more with its stream walking 130,816
destinations in a seeded permutation (the goal: the sender's CPU time a
frame at most 10 % above one destination's, as the median of the rounds'
ratios, each round measuring both back to back; the maximum rates'
ratio is printed beside it).

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
    SCHED_FIFO as the lab runs every NAPI thread (lab/machine/napi.py), and the
    engine's receive thread beside it at the same priority (its
    rx_priority, as the lab gives it: lab/model/cpus.py).

Prints, per arrangement, as medians over --rounds alternating runs:
  * trafgen's rate and the engine's maximum rate, and their ratio;
  * at that maximum, the CPU time a frame of the engine's sender, user
    (the engine's own code, which a zero-copy NIC leaves as it is) and
    system (the kernel's path) apart, and of its receive thread;
  * the engine at trafgen's rate: achieved/intended, receive-ring drops,
    interface drops and lost frames (the goal: the rate kept, achieved/
    intended >= 0.999, and nothing lost, in every round).

Run as root: `make bench`. Creates namespaces v6bb-a and v6bb-b and
removes them on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from v6bench import engine, stopping  # noqa: E402
from v6bench.engine import local as local_engine  # noqa: E402
from v6bench.lab.model.cpus import FIFO_PRIORITY  # noqa: E402

import bench_log  # noqa: E402

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
            # as in the lab (lab/machine/napi.py): a port's receive work runs before any task on its CPU
            sh("chrt", "-f", "-p", str(FIFO_PRIORITY), pid)


def destroy() -> None:
    for ns in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


#: The destinations a walking stream visits (docs/engine-spec.md, "Walks"): the
#: IPv4 benchmarking block but B's own /24, 130,816 addresses in a seeded permutation.
WALK = {"dst_ip": ["198.18.1.0-198.19.255.255"], "order": "permuted", "seed": 1}
WALK_COUNT = 130_816
#: The walk's goal: the sender's CPU time a frame at most this multiple of one destination's.
WALK_COST_GOAL = 1.10


def spec(rate_fps: float, duration_s: float, backend: str = "af_packet", ip_version: int = 4,
         rx_priority: int | None = None, walk: bool = False) -> dict:
    """The engine's trial: A sends to B. ``rx_priority``: the receive
    thread's SCHED_FIFO priority, in the napi arrangement that of the NAPI
    thread on its CPU, as the lab does (lab/model/cpus.py, tester_rx_priority).
    ``walk``: the IPv4 stream walks :data:`WALK`'s destinations."""
    size = 64 if ip_version == 4 else 84
    stream = {"tx_port": "a", "rx_port": "b", "ip_version": ip_version, "frame_size": size}
    if walk:
        stream["walk"] = WALK
    return {
        "spec_version": 3,
        "netns_prefix": "v6bb-",
        "duration_s": duration_s,
        "drain_s": 1.0,
        "learning": {"settle_s": 0.2},
        "rx_cpu": RX_CPU,
        **({} if rx_priority is None else {"rx_priority": rx_priority}),
        "ports": [
            {"name": "a", "interface": IF_A, "netns": NS_A, "ipv4": "198.18.0.2/24", "gateway_ipv4": "198.18.0.3",
             "ipv6": "2001:2::2/64", "gateway_ipv6": "2001:2::3", "tx_rate": {"fps": rate_fps}, "tx_cpu": TX_CPU,
             "backend": backend},
            {"name": "b", "interface": IF_B, "netns": NS_B, "ipv4": "198.18.0.3/24", "ipv6": "2001:2::3/64",
             "backend": backend},
        ],
        "streams": [stream],
    }


CLK_TCK = os.sysconf("SC_CLK_TCK")


class ThreadCpu(threading.Thread):
    """CPU time of the engine's threads over a window inside the traffic:
    from ``start_s`` after the engine started, for ``window_s``. A thread's
    time is its scheduler run time (/proc/PID/task/TID/schedstat, ns); the
    sender's is split into user and system in the proportion of its clock
    ticks (/proc/PID/task/TID/stat), which for a thread busy all the window
    is a fair sample. User is what the engine's own code costs a frame
    (building, pacing, stamping); system what the kernel's path costs (on
    veth the skb, the far end's receive work when it runs on the sender's
    CPU, the XSK copy), much of which a zero-copy NIC does not spend."""

    def __init__(self, pid_file: Path, start_s: float, window_s: float):
        super().__init__(daemon=True)
        self.pid_file, self.start_s, self.window_s = pid_file, start_s, window_s
        self.used: dict[str, tuple[int, int, int]] = {}  # thread -> (user ticks, system ticks, run ns) in the window

    @staticmethod
    def sample(pid: int) -> dict[str, tuple[int, int, int]]:
        out = {}
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                text = (task / "stat").read_text()
                run_ns = int((task / "schedstat").read_text().split()[0])
            except OSError:
                continue
            comm = text[text.index("(") + 1 : text.rindex(")")]
            fields = text[text.rindex(")") + 2 :].split()
            out[f"{comm}/{task.name}"] = (int(fields[11]), int(fields[12]), run_ns)  # utime, stime: stat(5) fields 14, 15
        return out

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.pid_file.read_text().strip() and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        pid = int(self.pid_file.read_text().split()[0])
        try:
            time.sleep(self.start_s)
            before = self.sample(pid)
            time.sleep(self.window_s)
            after = self.sample(pid)
        except OSError:
            return  # the engine ended before the window did: no split
        self.used = {k: tuple(a - b for a, b in zip(after[k], v)) for k, v in before.items() if k in after}

    def split(self, sent: float, received: float) -> dict:
        """The sender (the busiest thread but the receiver) in ns a frame
        sent, user and system apart; the receiver ("rx") in ns a frame
        received; {} without a window."""
        if not self.used or sent <= 0:
            return {}
        tx = max((v for k, v in self.used.items() if not k.startswith("rx/")), key=lambda v: v[2])
        if tx[2] < 0.5 * self.window_s * 1e9:
            # No thread but the receiver was busy for the window (a sender at its maximum rate is): the
            # sender started after the window did (a slow learning phase) and the split would be another's.
            return {}
        user_share = tx[0] / max(1, tx[0] + tx[1])
        out = {"sender_user_ns": tx[2] * user_share / sent, "sender_system_ns": tx[2] * (1 - user_share) / sent}
        rx = [v for k, v in self.used.items() if k.startswith("rx/")]
        if rx and received > 0:
            out["receiver_ns"] = rx[0][2] / received
        return out


# The engine kept a rate when it sent the planned frames within 0.1 % of
# the planned time (achieved/intended), as trafgen's rate is measured.
RATE_KEPT = 0.999
CPU_KEYS = ("sender_user_ns", "sender_system_ns", "receiver_ns")


def engine_run(rate_fps: float, duration_s: float, backend: str = "af_packet", ip_version: int = 4,
               cpu_split: bool = False, rx_priority: int | None = None, walk: bool = False) -> dict:
    """One engine run; with ``cpu_split``, the CPU time its sender and
    receiver spent a frame over the middle of the run (:class:`ThreadCpu`);
    with ``walk``, to :data:`WALK`'s destinations."""
    with tempfile.TemporaryDirectory() as d:
        pid_file = Path(d) / "pid"
        pid_file.write_text("")
        window_s = max(0.5, duration_s - 1.5)
        probe = ThreadCpu(pid_file, 1.0, window_s) if cpu_split else None
        if probe:
            probe.start()
        r = engine.run_trial(spec(rate_fps, duration_s, backend, ip_version, rx_priority, walk), pid_file=pid_file if probe else None)
        if probe:
            probe.join()
    a, b = r["ports"]
    sent = a["tx"]["offered_fps"] * window_s  # the window's frames, at the run's mean rate
    kept = 1 - r["totals"]["lost_frames"] / max(1, r["totals"]["tx_frames"])
    return {
        "cpu": probe.split(sent, sent * kept) if probe else {},
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
    local_engine.write_frames(s, pcap, count=1)
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
    prio = FIFO_PRIORITY if napi else None  # the receive thread's, beside the FIFO NAPI thread
    destroy()
    peers = {"trafgen": []}
    if napi:
        peers["xdp-trafficgen"] = []
    eng_max = {b: [] for b in backends}
    eng6_max = {b: [] for b in backends}
    eng_cpu = {b: [] for b in backends}  # per round: the sender's and receiver's CPU a frame at the maximum
    walkers = [b for b in backends if b != "xdp_live"]  # xdp_live sends one template (docs/engine-spec.md)
    walk_max = {b: [] for b in walkers}
    walk_cpu = {b: [] for b in walkers}
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
                    r = engine_run(20e6, duration_s, b, cpu_split=True, rx_priority=prio)
                    eng_max[b].append(r["offered_fps"])
                    eng_cpu[b].append(r["cpu"])
                    line += f", engine {b} {eng_max[b][-1]:,.0f} fps"
                    if "xdp-trafficgen" in peers:
                        eng6_max[b].append(engine_run(20e6, duration_s, b, 6, rx_priority=prio)["offered_fps"])
                        line += f" (IPv6 84 B {eng6_max[b][-1]:,.0f})"
                    if b in walk_max:
                        w = engine_run(20e6, duration_s, b, cpu_split=True, rx_priority=prio, walk=True)
                        walk_max[b].append(w["offered_fps"])
                        walk_cpu[b].append(w["cpu"])
                        line += f" (walking {walk_max[b][-1]:,.0f})"
                print(line, flush=True)
            target = statistics.median(peers["trafgen"])
            for _ in range(rounds):
                for b in backends:
                    at_tg[b].append(engine_run(target, duration_s, b, rx_priority=prio))
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
        cpu = {k: statistics.median(c[k] for c in eng_cpu[b] if k in c) for k in CPU_KEYS if any(k in c for c in eng_cpu[b])}
        if cpu:
            print(f"[{name}] engine {b:<9} CPU at max         : sender {cpu.get('sender_user_ns', 0):,.0f} ns user + "
                  f"{cpu.get('sender_system_ns', 0):,.0f} ns system a frame sent; receive thread {cpu.get('receiver_ns', 0):,.0f} ns "
                  f"a frame received (medians)")
            e["cpu_ns_per_frame"] = cpu
        if b in walk_max:
            e["walk"] = walk_row(name, b, eng_max[b], eng_cpu[b], walk_max[b], walk_cpu[b])
        if xtg:
            best6 = statistics.median(eng6_max[b])
            print(f"[{name}] engine {b:<9} 84 B IPv6, max     : {best6:12,.0f} fps   ratio to xdp-trafficgen {best6 / xtg:.3f}")
            e.update(engine_ipv6_max_fps=best6, ratio_xdp_trafficgen=best6 / xtg)
        print(f"[{name}] engine {b} at trafgen's rate ({target:,.0f} fps), per round:")
        for r in at_tg[b]:
            print(f"  achieved/intended {r['offered_fps'] / r['intended_fps']:.5f}  sent {r['tx']:,}  lost {r['lost']}  "
                  f"ring drops {r['ring_drops']}  interface drops {r['if_drops']}")
        kept = all(r["offered_fps"] / r["intended_fps"] >= RATE_KEPT for r in at_tg[b])
        ok = best >= target and kept and all(r["ring_drops"] == 0 and r["if_drops"] == 0 and r["lost"] == 0 for r in at_tg[b])
        print(f"[{name}] engine {b}: goal (>= trafgen, and at its rate the rate kept and no frame lost, every round): "
              f"{'met' if ok else 'NOT met'}")
        e.update(goal_met=ok, at_trafgen_rate=at_tg[b])
        out["engines"][b] = e
    print()
    return out


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval of the median of ``values`` (order
    statistics, binomial with p = 1/2: the k-th smallest and largest, k the
    largest with P(Bin(n, 1/2) < k) <= (1 - confidence) / 2); None for
    fewer than 6 values, which give none at 95 %."""
    n = len(values)
    k = int(binom.ppf((1 - confidence) / 2, n, 0.5))
    if binom.cdf(k - 1, n, 0.5) > (1 - confidence) / 2:
        k -= 1
    if k < 1:
        return None
    s = sorted(values)
    return s[k - 1], s[n - k]


def walk_row(name: str, b: str, one_fps: list[float], one_cpu: list[dict], fps: list[float],
             cpu: list[dict]) -> dict:
    """The walk against one destination, paired by round (each round
    measures one destination, then the walk, back to back, so the lab's
    drift between rounds, 10-20 % here, cancels): the sender's CPU time a
    frame (user and system: :class:`ThreadCpu`'s run time, exact, where
    its user/system split is by clock ticks) as the median of the rounds'
    ratios, the goal (issue: the sender's cost a frame within
    :data:`WALK_COST_GOAL` of one destination's); and the maximum rate's
    ratio, which the receive path's share of the sending CPU moves too."""
    def total(c: dict) -> float | None:
        return c["sender_user_ns"] + c["sender_system_ns"] if "sender_user_ns" in c else None
    best = statistics.median(fps)
    ratios = [w / o for w, o in zip(fps, one_fps)]
    ratio = statistics.median(ratios)
    costs = [(total(w), total(o)) for w, o in zip(cpu, one_cpu)]
    cost_ratios = [w / o for w, o in costs if w and o]
    cost_ratio = statistics.median(cost_ratios) if cost_ratios else None
    user = [c["sender_user_ns"] for c in cpu if "sender_user_ns" in c]
    one_user = [c["sender_user_ns"] for c in one_cpu if "sender_user_ns" in c]
    met = cost_ratio is not None and cost_ratio <= WALK_COST_GOAL
    interval = median_interval(cost_ratios)
    print(f"[{name}] engine {b:<9} 64 B walking {WALK_COUNT:,} destinations, max: {best:12,.0f} fps   ratio to one "
          f"destination, median of the rounds' {', '.join(f'{r:.3f}' for r in ratios)}: {ratio:.3f}")
    if cost_ratio is not None:
        print(f"[{name}] engine {b:<9} sender CPU a frame walking against one destination, median of the rounds' "
              f"{', '.join(f'{r:.3f}' for r in cost_ratios)}: {cost_ratio:.3f} "
              f"({f'95 % interval of the median {interval[0]:.3f}-{interval[1]:.3f}' if interval else 'no interval below 6 rounds'}; "
              f"goal <= {WALK_COST_GOAL}: "
              f"{'met' if met else 'NOT met'}); of it user {statistics.median(user):,.0f} ns against "
              f"{statistics.median(one_user):,.0f} (medians, split by clock ticks)")
    return {"walk_max_fps": best, "ratio_to_one_destination": ratio, "round_ratios": ratios,
            "sender_cost_ratio": cost_ratio, "round_cost_ratios": cost_ratios, "sender_cost_ratio_interval": interval,
            "sender_user_ns": statistics.median(user) if user else None, "goal_met": met}


def main() -> int:
    stopping.install()  # Ctrl-C and SIGTERM unwind like the command line's: nothing left behind
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10,
                    help="alternating rounds [10]: the walk's paired ratios vary by about 25 %% from round to round "
                         "here, and 6 or more give an interval of their median")
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per engine run")
    ap.add_argument("--arrangement", choices=["plain", "napi", "both"], default="both")
    ap.add_argument("--backends", default="af_packet,af_xdp,xdp_live", help="the engine's, comma-separated, of af_packet, af_xdp, xdp_live [all three]")
    args = ap.parse_args()
    todo = [False, True] if args.arrangement == "both" else [args.arrangement == "napi"]
    results = [measure(napi, args.rounds, args.duration, args.backends.split(",")) for napi in todo]
    print(json.dumps(results))
    bench_log.append("engine_vs_trafgen", vars(args), results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
