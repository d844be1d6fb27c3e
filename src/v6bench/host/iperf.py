"""TCP and UDP throughput between the tester hosts' stacks with iperf3
(Debian's ``iperf3`` package, JSON output): seed 001's measurement.

One run: an iperf3 server (``-s -1``: one test, then it exits) bound to
the server host's kernel address, and a client that sends ``message_bytes``
per write (TCP) or per datagram (UDP, unlimited rate ``-b 0``) for
``duration_s``, each pinned to a tester CPU (``-A``). The result keeps
iperf3's own figures: received throughput (goodput, bits of messages per
second), sent throughput, TCP retransmits or UDP datagrams lost, and the
CPU use of both ends (``cpu_utilization_percent``, percent of one CPU).
The server's JSON comes back through the client (``--get-server-output``).

Every process is bounded: the client by ``-t`` and a time-out, the
server by ``-1`` and being killed when the run ends, whatever happened.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time

from ..core.errors import LabError
from ..core.tester import HOST_PROTOCOLS, message_problem
from .kernel import Pair

PORT = 5201
SERVER_START_S = 0.3


def _exe() -> str:
    exe = shutil.which("iperf3")
    if not exe:
        raise LabError("iperf3 is not installed: run `make setup` (Debian package iperf3)")
    return exe


def version() -> str:
    """``iperf 3.12`` (first line of ``iperf3 --version``)."""
    out = subprocess.run([_exe(), "--version"], capture_output=True, text=True, timeout=10).stdout
    return out.splitlines()[0].strip() if out else "iperf3 (version unknown)"


def run(pair: Pair, version_ip: int, protocol: str, message_bytes: int, duration_s: float,
        client_cpu: int, server_cpu: int) -> dict:
    """One iperf3 run from ``pair.client`` to ``pair.server``; returns the summary."""
    assert protocol in HOST_PROTOCOLS and message_problem((protocol,), message_bytes) is None, "checked by its Params"
    exe = _exe()
    server_addr, client_addr = pair.server.address(version_ip), pair.client.address(version_ip)
    server = subprocess.Popen(["ip", "netns", "exec", pair.server.netns, exe, "-s", "-1", "-J", "-B", server_addr,
                               "-p", str(PORT), "-A", str(server_cpu)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(SERVER_START_S)
        argv = ["ip", "netns", "exec", pair.client.netns, exe, "-c", server_addr, "-B", client_addr, "-p", str(PORT),
                "-t", f"{duration_s:g}", "-l", str(message_bytes), "-J", "--get-server-output", "-A", str(client_cpu)]
        if protocol == "udp":
            argv += ["-u", "-b", "0"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=duration_s + 30)
        except subprocess.TimeoutExpired:
            raise LabError(f"iperf3 did not finish within {duration_s + 30:g} s") from None
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise LabError(f"iperf3 failed: {(proc.stderr or proc.stdout).strip()[:300]}") from None
        if "error" in data:
            raise LabError(f"iperf3: {data['error']}")
    finally:
        server.kill()
        server.communicate()
    return summarize(data, protocol, message_bytes, version_ip, pair)


def summarize(data: dict, protocol: str, message_bytes: int, version_ip: int, pair: Pair) -> dict:
    """The figures v6bench keeps from iperf3's JSON (see the module docstring)."""
    end = data["end"]
    sent, received = end["sum_sent"], end["sum_received"]
    cpu = end.get("cpu_utilization_percent", {})
    out = {
        "tool": data["start"].get("version", "iperf3"),
        "protocol": protocol,
        "ip_version": version_ip,
        "path": pair.path,
        "client": f"{pair.client.node} {pair.client.address(version_ip)}",
        "server": f"{pair.server.node} {pair.server.address(version_ip)}",
        "message_bytes": message_bytes,
        "duration_s": received["seconds"],
        "received_bps": received["bits_per_second"],
        "sent_bps": sent["bits_per_second"],
        "received_bytes": received["bytes"],
        "client_cpu_pct": cpu.get("host_total"),
        "server_cpu_pct": cpu.get("remote_total"),
    }
    if protocol == "tcp":
        out["retransmits"] = sent.get("retransmits")
    else:
        out.update(datagrams_sent=sent.get("packets"), datagrams_lost=received.get("lost_packets"),
                   loss_ratio=(received.get("lost_percent") or 0.0) / 100, jitter_ms=received.get("jitter_ms"))
    return out
