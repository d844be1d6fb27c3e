"""The lab's tester hosts as a :class:`~v6bench.core.tester.HostTester`:
iperf3 runs (:mod:`v6bench.host.iperf`) and UDP request/response
(``v6bench-engine rr``) between t1's and t2's own stacks
(:mod:`v6bench.host.kernel`), pinned to the tester's CPUs (client on the
tester's sending CPU, server on its receiving CPU) so the routers keep
theirs.
"""

from __future__ import annotations

from .. import engine
from ..core.errors import UsageError
from ..core.phases import phase
from ..lab.model.site import Site
from ..lab.protocol import Lab
from ..trial.path import LabPath
from . import iperf
from .kernel import Pair, kernel_stacks

RR_SERVER_PORT = 7


class StackTester:
    def __init__(self, site: Site, lab: Lab) -> None:
        self.site, self.lab = site, lab
        plan = lab.cpu_plan
        self.client_cpu, self.server_cpu = plan.tester_tx[0], plan.tester_rx
        self.path = LabPath.of(lab)

    def _check_family(self, version: int) -> None:
        """Refuses IPv6 on a path with a link below 1280 bytes (LabPath.problem)."""
        why = self.path.problem(version, 0)
        if why:
            raise UsageError(f"IPv{version}: {why}")

    def mtu_payload(self, version: int) -> int:
        return self.path.largest_payload(version)

    def stream(self, version: int, protocol: str, message_bytes: int, duration_s: float) -> dict:
        self._check_family(version)
        with kernel_stacks(self.site, self.lab) as pairs:
            with phase("host-stack runs"):
                out = iperf.run(pairs["routed"], version, protocol, message_bytes, duration_s, self.client_cpu, self.server_cpu)
        return {**out, "topology": self.lab.topology, "client_cpu": self.client_cpu, "server_cpu": self.server_cpu}

    def _rr(self, pair: Pair, version: int, payload_bytes: int, duration_s: float) -> dict:
        spec = {"rr_version": 2, "netns_prefix": self.lab.netns_prefix, "payload_bytes": payload_bytes,
                "duration_s": duration_s, "server_port": RR_SERVER_PORT,
                "client": {"netns": pair.client.netns, "address": pair.client.address(version), "cpu": self.client_cpu},
                "server": {"netns": pair.server.netns, "address": pair.server.address(version), "cpu": self.server_cpu}}
        with phase("host-stack runs"):
            r = engine.run_rr(spec, self.site.engine_pid_file)
        return {"path": pair.path, "exchanges": r["exchanges"], "timeouts": r["timeouts"], "stale_responses": r["stale_responses"],
                "one_way_mean_ns": r["one_way_mean_ns"], "rtt_ns": r["rtt_ns"], "engine_version": r["engine_version"]}

    def rr(self, version: int, payload_bytes: int, duration_s: float) -> dict:
        """Seed 004 §2.1: one-way = mean round trip / 2, through the lab and
        over the baseline link; the router's latency is their difference."""
        self._check_family(version)
        top = self.mtu_payload(version)
        if payload_bytes > top:
            raise UsageError(f"payload size: {payload_bytes} bytes of IPv{version} payload exceed the path's MTU "
                             f"({top} bytes at most); request/response datagrams are sent whole")
        routed = self.lab.topology != "p2p"
        with kernel_stacks(self.site, self.lab, baseline=routed) as pairs:
            through = self._rr(pairs["routed"], version, payload_bytes, duration_s)
            base = self._rr(pairs["baseline"], version, payload_bytes, duration_s) if routed else through
        out = {"ip_version": version, "payload_bytes": payload_bytes, "topology": self.lab.topology,
               "client_cpu": self.client_cpu, "server_cpu": self.server_cpu, "baseline": base}
        if routed:
            out["routed"] = through
            if through["one_way_mean_ns"] is not None and base["one_way_mean_ns"] is not None:
                out["router_latency_ns"] = through["one_way_mean_ns"] - base["one_way_mean_ns"]
                out["router_latency_p50_ns"] = (through["rtt_ns"]["p50"] - base["rtt_ns"]["p50"]) / 2
            else:
                out["router_latency_ns"] = out["router_latency_p50_ns"] = None
        return out
