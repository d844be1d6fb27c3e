"""A router v6bench did not build, for the external-lab tests: built here
with ip, sysctl, nft and Debian's snmpd, none of v6bench's lab code.

    tester namespace T            router namespace R (snmpd, nftables limiter)
      T-p1  ---------------------- R-e1   198.18.0.1/24   2001:2::1/64
      T-p2  ---------------------- R-e2   198.19.0.1/24   2001:2:0:1::1/64
      T-m   198.18.250.2/30 ------ R-m    198.18.250.1/30 (management: SNMP)

The tester's two ports carry no address (the engine answers for them);
the management link is reached from T (``[dut.snmp] netns``). With
``bgp``, the router also runs Debian's BIRD 2: one eBGP session a family
with the tester's BGP speaker (198.19.0.3 and 2001:2:0:1::3 on R-e2's
link, AS 4200000001; the router is AS 4200000002), every route it learns
exported to its kernel. The
router's receive work is steered to its own CPU by RPS, so the tester
(CPU 0) and the router (CPU 1) do not share a CPU. A known-capacity
limiter (nftables ``limit``, all forwarded frames) is the DUT's capacity
the tests must find. ``reset_soft`` of the lab file takes the router's
ports down and up; nothing of v6bench does it. With ``nat64``, the router
also translates: Debian's TAYGA, stateless, in R (its own configuration,
not v6bench's), IPv6 to 2001:2:0:6464::/96 out as IPv4, and t1's
2001:2::2 mapped to :data:`MAPPED_V4`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

#: NET-SNMP-AGENT-MIB nsCacheTimeout, indexed by the cached table's OID.
NS_CACHE_TIMEOUT = "1.3.6.1.4.1.8072.1.5.3.1.2"
SNMP_USER = "v6bench"
SNMP_AUTH = "auth-pass-123"
SNMP_PRIV = "priv-pass-456"
#: The fixture translator's prefix, and the IPv4 address it maps t1's IPv6 address to.
NAT64_PREFIX = "2001:2:0:6464::/96"
MAPPED_V4 = "198.18.9.9"


def sh(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30, input=input)


@dataclass
class ExternalRouter:
    tag: str
    tmp: Path
    limit_fps: int | None
    bgp: bool = False
    nat64: bool = False
    snmpd: subprocess.Popen | None = None
    bird: subprocess.Popen | None = None
    tayga: subprocess.Popen | None = None

    @property
    def tester(self) -> str:
        return f"{self.tag}T"

    @property
    def router(self) -> str:
        return f"{self.tag}R"

    def iface(self, name: str) -> str:
        return f"{self.tag}{name}"

    def build(self) -> None:
        t, r = self.tester, self.router
        for ns in (t, r):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for a, b in (("p1", "e1"), ("p2", "e2"), ("m", "rm")):
            sh("ip", "link", "add", self.iface(a), "netns", t, "type", "veth", "peer", "name", self.iface(b), "netns", r)
        sh("ip", "netns", "exec", t, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        for a in ("p1", "p2", "m"):
            sh("ip", "-n", t, "link", "set", self.iface(a), "up")
        sh("ip", "-n", t, "addr", "add", "198.18.250.2/30", "dev", self.iface("m"))
        sh("ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
           "net.ipv6.conf.all.keep_addr_on_down=1", "net.ipv6.conf.default.keep_addr_on_down=1")
        for name, v4, v6 in (("e1", "198.18.0.1/24", "2001:2::1/64"), ("e2", "198.19.0.1/24", "2001:2:0:1::1/64")):
            sh("ip", "-n", r, "addr", "add", v4, "dev", self.iface(name))
            sh("ip", "-n", r, "addr", "add", v6, "dev", self.iface(name), "nodad")
            sh("ip", "-n", r, "link", "set", self.iface(name), "up")
            # RPS: the router's receive and forwarding work on CPU 1, the tester's on CPU 0.
            self._in_router_sysfs(f"/sys/class/net/{self.iface(name)}/queues/rx-0/rps_cpus", "2")
        sh("ip", "-n", r, "addr", "add", "198.18.250.1/30", "dev", self.iface("rm"))
        sh("ip", "-n", r, "link", "set", self.iface("rm"), "up")
        if self.limit_fps:
            rules = ("table inet fixture_limiter {\n chain forward {\n  type filter hook forward priority 0; policy accept;\n"
                     f"  limit rate over {self.limit_fps}/second burst {max(self.limit_fps // 40, 5)} packets counter drop\n }}\n}}\n")
            sh("ip", "netns", "exec", r, "nft", "-f", "-", input=rules)
        self._start_snmpd()
        if self.bgp:
            self._start_bird()
        if self.nat64:
            self._start_tayga()
        self.wait_carrier()

    def limiter_drops(self) -> int:
        """Frames the limiter has dropped so far (its rule's counter)."""
        out = json.loads(sh("ip", "netns", "exec", self.router, "nft", "-j", "list", "table", "inet", "fixture_limiter").stdout)
        (counter,) = [e["counter"] for item in out["nftables"] for e in item.get("rule", {}).get("expr", []) if "counter" in e]
        return int(counter["packets"])

    def _start_tayga(self) -> None:
        """Stateless TAYGA in R, its tun device routed (tayga.conf(5))."""
        dev = f"{self.tag}x"
        conf = self.tmp / "tayga.conf"
        (self.tmp / "tayga").mkdir(exist_ok=True)
        conf.write_text(f"tun-device {dev}\nipv4-addr 198.18.64.1\nprefix {NAT64_PREFIX}\n"
                        f"map {MAPPED_V4} 2001:2::2\ndata-dir {self.tmp / 'tayga'}\n")
        r = self.router
        sh("ip", "netns", "exec", r, "tayga", "--config", str(conf), "--mktun")
        sh("ip", "-n", r, "link", "set", dev, "up")
        for args in (("-6", "route", "add", NAT64_PREFIX, "dev", dev), ("-4", "route", "add", f"{MAPPED_V4}/32", "dev", dev),
                     ("-4", "route", "add", "198.18.64.1/32", "dev", dev)):
            sh("ip", "-n", r, *args)
        self.tayga = subprocess.Popen(["ip", "netns", "exec", r, "tayga", "--config", str(conf), "--nodetach"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def _start_bird(self) -> None:
        """BIRD in R: BGP from the tester's speaker, learned routes into R's kernel."""
        sh("ip", "netns", "exec", self.router, "sysctl", "-qw", "net.ipv6.route.max_size=2147483647")
        conf = self.tmp / "bird-router.conf"
        conf.write_text(
            f'log "{self.tmp / "bird-router.log"}" all;\n'
            "router id 198.19.0.1;\nprotocol device {}\n"
            "protocol kernel k4 { ipv4 { import none; export all; }; }\n"
            "protocol kernel k6 { ipv6 { import none; export all; }; }\n"
            + "".join(f"protocol bgp tester{v} {{ local {me} as 4200000002; neighbor {peer} as 4200000001; "
                      "connect delay time 1; connect retry time 5; error wait time 1, 10; "
                      f"ipv{v} {{ import all; export none; }}; }}\n"
                      for v, me, peer in ((4, "198.19.0.1", "198.19.0.3"), (6, "2001:2:0:1::1", "2001:2:0:1::3"))))
        self.bird = subprocess.Popen(
            ["ip", "netns", "exec", self.router, "bird", "-f", "-c", str(conf), "-s", str(self.tmp / "bird-router.ctl")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def bird_routes(self) -> dict[int, int]:
        """The routes BIRD put in R's kernel, by IP version."""
        return {v: len(sh("ip", "-n", self.router, f"-{v}", "route", "show", "proto", "bird").stdout.splitlines())
                for v in (4, 6)}

    def _in_router_sysfs(self, path: str, value: str) -> None:
        # sysfs shows the namespace of the process that mounted it: write from a private mount in R.
        sh("ip", "netns", "exec", self.router, "sh", "-c", f"echo {value} > {path}")

    def _start_snmpd(self) -> None:
        conf = self.tmp / "snmpd.conf"
        conf.write_text(
            "agentAddress udp:198.18.250.1:161\n"
            "rocommunity public 198.18.250.0/30\n"
            "rwcommunity fixture-rw 198.18.250.0/30\n"
            f"createUser {SNMP_USER} SHA \"{SNMP_AUTH}\" AES \"{SNMP_PRIV}\"\n"
            f"rouser {SNMP_USER} priv\n")
        persist = self.tmp / "snmp-persist"
        persist.mkdir(exist_ok=True)
        env = {**os.environ, "SNMP_PERSISTENT_DIR": str(persist), "MIBS": ""}
        self.snmpd = subprocess.Popen(
            ["ip", "netns", "exec", self.router, "/usr/sbin/snmpd", "-f", "-C", "-c", str(conf), "-Lf",
             str(self.tmp / "snmpd.log"), "-M", "/dev/null", "-m", ""],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(100):
            p = sh("ip", "netns", "exec", self.tester, "snmpget", "-v2c", "-c", "public", "-m", "", "-t", "0.2", "-r", "0",
                   "198.18.250.1", "1.3.6.1.2.1.1.3.0", check=False)
            if p.returncode == 0:
                # The agent serves interface counters from a 3-s cache (NET-SNMP-AGENT-MIB nsCacheTimeout of
                # ifTable): the fixture turns it off, so the lab file's counter_refresh_s can be short and
                # the tests' trials do not wait 3 s each. Only the fixture writes; v6bench reads.
                sh("ip", "netns", "exec", self.tester, "snmpset", "-v2c", "-c", "fixture-rw", "-m", "", "-t", "1",
                   "198.18.250.1", f"{NS_CACHE_TIMEOUT}.1.3.6.1.2.1.2.2", "i", "0")
                return
            time.sleep(0.1)
        raise RuntimeError("snmpd did not answer: " + (self.tmp / "snmpd.log").read_text()[-500:])

    def wait_carrier(self) -> None:
        for ns, names in ((self.tester, ("p1", "p2")), (self.router, ("e1", "e2"))):
            for n in names:
                for _ in range(100):
                    if "LOWER_UP" in sh("ip", "-n", ns, "link", "show", self.iface(n)).stdout:
                        break
                    time.sleep(0.05)

    def remove(self) -> None:
        for proc in (self.snmpd, self.bird, self.tayga):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
        for ns in (self.tester, self.router):
            sh("ip", "netns", "del", ns, check=False)

    def reset_command(self) -> str:
        """The lab file's soft reset: the router's ports down, then up (as ``shutdown``/``no shutdown``)."""
        r = self.router
        return (f"ip -n {r} link set {self.iface('e1')} down && ip -n {r} link set {self.iface('e2')} down && "
                f"sleep 0.2 && ip -n {r} link set {self.iface('e1')} up && ip -n {r} link set {self.iface('e2')} up")

    def lab_file(self, snmp_version: str = "2c", table: bool = False, translation: str = "", **port_extra) -> Path:
        """The lab file of this router (TOML), written to the test's directory;
        ``table``: it allows a table, announced to the router's BIRD;
        ``translation``: the file's ``[translation]`` table's lines."""
        snmp = ('community = "public"' if snmp_version == "2c" else
                f'user = "{SNMP_USER}"\nauth_protocol = "SHA"\nauth_password = "{SNMP_AUTH}"\n'
                f'priv_protocol = "AES"\npriv_password = "{SNMP_PRIV}"')
        extra = "".join(f"{k} = {v}\n" for k, v in port_extra.items())
        text = f"""\
[lab]
name = "fixture-router"
link_speed = "100M"
mtu = 1500
tester_cpus = [0]
shared_machine = true
dut_cpus = [1]

[port.t1]
interface = "{self.iface('p1')}"
netns = "{self.tester}"
dut_interface = "{self.iface('e1')}"
{extra}
[port.t2]
interface = "{self.iface('p2')}"
netns = "{self.tester}"
dut_interface = "{self.iface('e2')}"

[dut]
name = "fixture"
description = "a Linux router namespace with snmpd, built by the test"
apply = "ip netns exec {self.router} nft list ruleset > /dev/null"
reset_soft = "{self.reset_command()}"
command_timeout_s = 20

[dut.snmp]
host = "198.18.250.1"
netns = "{self.tester}"
version = "{snmp_version}"
{snmp}
counter_refresh_s = 0.5
poll_interval_s = 0.5
""" + ("\n[table]\nallow_full_table = true\nhold_time_s = 30\nlearning_timeout_s = 60\n" if table else "") \
            + (f"\n[translation]\n{translation}" if translation else "")
        path = self.tmp / f"lab-{snmp_version}{'-table' if table else ''}{'-nat64' if translation else ''}.toml"
        path.write_text(text)
        return path


@contextmanager
def built(router: ExternalRouter) -> Iterator[ExternalRouter]:
    """``router`` built for the block and removed after it, also on failure."""
    try:
        router.build()
        yield router
    finally:
        router.remove()
