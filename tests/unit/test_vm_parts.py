"""The VM router's parts that need no root: the guest image (its archive
read back by cpio), the startup configuration, the control protocol
(against a stand-in guest that runs the scripts with /bin/sh), the
``[lab] router`` key."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from v6bench.core.errors import LabError, UsageError
from v6bench.lab.vm import guest, vm, vm_config, vm_image
from v6bench.lab.emulated.build import SYSCTLS
from v6bench.lab.vm import jool
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.mtu import Mtus
from v6bench.lab.model.mtu import parse as parse_mtu
from v6bench.lab.interface import dut_config
from v6bench.lab.model.spec import lab_spec
from v6bench.lab.model.topology import ROUTER, parse_topology

HAVE_KERNEL = any(Path("/boot").glob("vmlinuz-*")) and Path("/bin/busybox").exists()


def test_the_router_key_takes_ns_or_vm_on_a_topology_with_routers():
    assert lab_spec({}).lab_kind == "ns"
    assert lab_spec({"router": "vm", "topology": "b"}).lab_kind == "vm"
    with pytest.raises(UsageError) as e:
        lab_spec({"router": "qemu"})
    assert e.value.field == ("router",) and "'qemu' is not one of ns, vm" in e.value.message
    with pytest.raises(UsageError) as e:
        lab_spec({"router": "vm", "topology": "p2p"})
    assert "topology p2p has no router" in e.value.message


@pytest.mark.skipif(not HAVE_KERNEL, reason="needs Debian's kernel and busybox-static (make setup)")
def test_module_closure_holds_each_module_with_what_it_depends_on():
    rel = vm_image.kernel_release()
    mods = vm_image.module_closure(rel, ("nf_tables", "virtio_net", "sit"))
    names = {Path(m).name for m in mods}
    assert {"nf_tables.ko", "nfnetlink.ko", "libcrc32c.ko", "virtio_net.ko", "net_failover.ko", "failover.ko",
            "virtio.ko", "virtio_ring.ko", "sit.ko", "tunnel4.ko", "ip_tunnel.ko"} <= names
    with pytest.raises(LabError, match="has no module no_such_mod"):
        vm_image.module_closure(rel, ("no_such_mod",))


@pytest.mark.skipif(not HAVE_KERNEL or not shutil.which("cpio"), reason="needs the image's inputs and cpio")
def test_the_initramfs_read_back_by_cpio_has_init_busybox_iproute2_nft_snmpd_and_the_modules(tmp_path):
    rel = vm_image.kernel_release()
    data = vm_image.initramfs(rel)
    raw = subprocess.run(["gzip", "-dc"], input=data, capture_output=True, check=True).stdout
    listing = subprocess.run(["cpio", "-itv"], input=raw, capture_output=True, check=True).stdout.decode().splitlines()
    entries = {line.split()[-1] if " -> " not in line else line.split(" -> ")[0].split()[-1]: line for line in listing}
    for path in ("init", "bin/busybox", "usr/bin/ip", "usr/sbin/tc", "usr/sbin/nft", "usr/sbin/snmpd",
                 "etc/v6bench/modules"):
        assert path in entries, path
    assert entries["init"].startswith("-rwxr-xr-x")
    assert entries["lib"].startswith("l") and "-> usr/lib" in entries["lib"]  # Debian 12's merged /usr
    mods = {Path(p).name.replace("-", "_") for p in entries if p.endswith(".ko")}
    builtin = {Path(p).name.replace("-", "_") for p in Path(f"/lib/modules/{rel}/modules.builtin").read_text().split()}
    for m in vm_image.MODULES:
        assert f"{m}.ko" in mods or f"{m}.ko" in builtin, m
    # Every library ip, tc, nft and snmpd need is in it, under its real directory.
    for lib in vm_image.library_closure(vm_image.BINARIES):
        real = os.path.realpath(lib).lstrip("/")
        assert real in entries, real
    # Built twice from the same inputs: the same bytes.
    assert vm_image.initramfs(rel) == data


def test_the_startup_configuration_is_the_namespace_routers():
    topo = parse_topology("a")
    text = vm_config.startup_script(topo, "r1", Mtus(), SYSCTLS[ROUTER], DutConfig(limit_fps=5000, shape=True), 1e8)
    lines = text.splitlines()
    assert "sysctl -q -w net.ipv6.conf.all.forwarding=1" in lines
    assert "/usr/bin/ip addr replace 198.18.0.1/24 dev r1-t1" in lines  # iproute2's ip, not busybox's
    assert "/usr/bin/ip -6 addr replace 2001:2:0:1::1/64 dev r1-t2 nodad" in lines
    assert "/usr/bin/ip addr replace 198.19.255.254/30 dev mgmt" in lines
    assert 'iifname "r1-t1" limit rate over 5000/second burst 125 packets drop' in text
    assert any(line.startswith("/usr/sbin/tc qdisc replace dev r1-t1 root stab") for line in lines)
    assert f"rocommunity {vm.SNMP_COMMUNITY} {vm.MGMT_HOST}/32" in text
    # A link below 1280 bytes carries IPv4 only (RFC 8200 §5), as in the namespace router.
    b = parse_topology("b")
    small = vm_config.startup_script(b, "r1", parse_mtu("r1-r2=1000"), SYSCTLS[ROUTER], DutConfig(), 1e9)
    assert "/usr/bin/ip -6 addr replace 2001:2:0:11::1/64 dev r1-r2 nodad" not in small.splitlines()


def test_a_vm_router_translates_with_jool_as_a_namespace_router_does_with_tayga():
    """NAT64 on a VM router (lab/vm/jool.py): Jool's instance with the
    prefix, t1's address mapped (stateless) or R1's address as pool4
    (stateful), after the addresses; no source NAT for TAYGA's pool."""
    topo = parse_topology("a")
    less = vm_config.startup_script(topo, "r1", Mtus(), SYSCTLS[ROUTER], DutConfig(nat64="stateless"), 1e9).splitlines()
    at = less.index("jool_siit instance add v6bench --netfilter --pool6 2001:2:0:6464::/96")
    assert less[at + 1] == "jool_siit -i v6bench eamt add 198.18.65.2/32 2001:2::2/128"
    assert at > less.index("/usr/bin/ip addr replace 198.19.0.1/24 dev r1-t2")
    full = vm_config.startup_script(topo, "r1", Mtus(), SYSCTLS[ROUTER], DutConfig(nat64="stateful", nat44=True), 1e9)
    assert "jool -i v6bench pool4 add 198.19.0.1 61001-65535 --udp" in full.splitlines()
    assert "v6bench_nat64" not in full and "snat to 198.19.0.1" in full  # NAT44's rule, no TAYGA pool's
    assert "jool" not in vm_config.startup_script(topo, "r1", Mtus(), SYSCTLS[ROUTER], DutConfig(nat44=True), 1e9)


def test_jools_counters_are_read_from_its_csv_and_differenced_over_the_trial():
    text = "JSTAT_RECEIVED6,1200\nJSTAT_RECEIVED4,30\nJSTAT_SUCCESS,1000\nJSTAT_SESSIONS,7\nJSTAT_ENOMEM,0\n"
    before = jool.parse_stats(text)
    assert before == {"JSTAT_SUCCESS": 1000, "JSTAT_RECEIVED6": 1200, "JSTAT_RECEIVED4": 30, "JSTAT_SESSIONS": 7,
                      "JSTAT_BIB_ENTRIES": 0}
    after = {**before, "JSTAT_SUCCESS": 1500, "JSTAT_RECEIVED6": 1800, "JSTAT_SESSIONS": 9}
    assert jool.translated("stateful", before, after) == {
        "mode": "stateful", "implementation": "jool", "running": True, "out_frames": 500, "seen_frames": 600,
        "sessions_before": 7, "sessions": 9}
    assert jool.translated("stateless", before, None) == {"mode": "stateless", "implementation": "jool",
                                                          "running": False}
    assert jool.stats_command("stateless")[:3] == ["jool_siit", "-i", "v6bench"]


class StandInGuest:
    """The guest's control loop (guest/init) in Python: a unix socket
    server answering ``ID`` and ``ID BASE64`` lines by running the script
    with /bin/sh."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(str(path))
        self.srv.listen(1)
        self.stale = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            with conn, conn.makefile("rwb") as f:
                for raw in f:
                    rid, _, b64 = raw.decode().strip().partition(" ")
                    if self.stale:  # an answer to an earlier request first: the client skips it
                        f.write(b"0stale 0 \n")
                    if not b64:
                        f.write(f"{rid} 0 \n".encode())
                    else:
                        r = subprocess.run(["/bin/sh", "-c", base64.b64decode(b64).decode()], capture_output=True)
                        out = base64.b64encode(r.stdout + r.stderr).decode()
                        f.write(f"{rid} {r.returncode} {out}\n".encode())
                    f.flush()

    def close(self) -> None:
        self.srv.close()


@pytest.fixture
def stand_in(tmp_path):
    g = StandInGuest(tmp_path / "r1-ctl.sock")
    yield g
    g.close()


def test_guest_commands_return_output_take_input_and_fail_with_the_guests_words(stand_in, tmp_path, monkeypatch):
    monkeypatch.setattr(guest, "BINARIES", {})  # the stand-in has no /usr/bin/ip to prefer
    g = guest.Guest("r1", guest.control_socket(tmp_path, "r1"))
    assert g.ping()
    assert g.command(["echo", "a b", "c"]) == "a b c\n"
    assert g.command(["tr", "a-z", "A-Z"], input_data="nft rules\n") == "NFT RULES\n"
    blob = bytes(range(256))  # a file's bytes as they are (a compiled program): every byte value, no text
    assert g.command(["od", "-An", "-v", "-tu1"], input_data=blob).split() == [str(b) for b in blob]
    with pytest.raises(LabError) as e:
        g.command(["ls", "/no/such/path"])
    assert e.value.args[0].startswith("r1: ls /no/such/path: ") and "No such file" in e.value.args[0]
    stand_in.stale = True
    assert g.command(["echo", "fresh"]) == "fresh\n"


def test_a_guest_that_does_not_answer_is_an_error_within_the_timeout(tmp_path):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(tmp_path / "r1-ctl.sock"))
    srv.listen(1)
    try:
        g = guest.Guest("r1", tmp_path / "r1-ctl.sock")
        with pytest.raises(LabError, match="no answer from the guest within 0.3 s"):
            g.script("true\n", timeout_s=0.3)
        assert not g.ping(0.2)
    finally:
        srv.close()
    with pytest.raises(LabError, match="did not answer within 0.5 s"):
        guest.Guest("r1", tmp_path / "none.sock").wait_ready(0.5)


def test_guest_nic_macs_are_locally_administered_and_distinct():
    macs = {vm.guest_mac(r, p) for r in range(1, 6) for p in range(8)}
    assert len(macs) == 40
    assert all(int(m.split(":")[0], 16) & 0x02 and not int(m.split(":")[0], 16) & 0x01 for m in macs)


def test_the_startup_disk_holds_the_script_and_refuses_a_larger_one(tmp_path):
    vm.write_startup(tmp_path / "d.img", "echo hi\n")
    data = (tmp_path / "d.img").read_bytes()
    assert len(data) == vm.STARTUP_DISK_BYTES and data.rstrip(b"\0") == b"echo hi\n"
    with pytest.raises(LabError, match="the disk holds"):
        vm.write_startup(tmp_path / "e.img", "x" * vm.STARTUP_DISK_BYTES)


def test_vm_routers_have_real_tunnels_with_their_own_overheads():
    """The same --tunnel name is another mechanism on VM routers: sit's 20
    bytes, not VXLAN's 50; ip6tnl's 40; GRE only there."""
    from v6bench.lab import backends
    ns_routers, vm_routers = backends.REGISTRY["ns"], backends.REGISTRY["vm"]
    assert ns_routers.tunnel("6in4").overhead_bytes == 50
    assert vm_routers.tunnel("6in4").overhead_bytes == 20
    assert vm_routers.tunnel("4in6").overhead_bytes == 40
    assert vm_routers.tunnel("gre6in4").overhead_bytes == 24
    assert vm_routers.tunnel("gre4in6").overhead_bytes == 44
    assert ns_routers.tunnel("") is None and backends.REGISTRY["external"].tunnel("6in4") is None
    with pytest.raises(UsageError, match="on namespace routers"):
        dut_config({"tunnel": "gre6in4"}, lab_spec({"topology": "b"}))
    assert dut_config({"tunnel": "gre6in4"}, lab_spec({"router": "vm", "topology": "b"})).tunnel == "gre6in4"
    vm_lab = SimpleNamespace(dut_config=DutConfig(tunnel="6in4"))
    assert vm_routers.tunnel_record(vm_lab)["stand_in"] is False and "sit" in vm_routers.tunnel_record(vm_lab)["mechanism"]
    assert ns_routers.tunnel_record(vm_lab)["stand_in"] is True
    # The path's line rate counts the mechanism's overhead on the R1-R2 link.
    from v6bench.trial.path import LabPath
    ns = LabPath.build("b", 1e8, Mtus(), ns_routers.tunnel("6in4")).line_fps(128, 0)
    vm_ = LabPath.build("b", 1e8, Mtus(), vm_routers.tunnel("6in4")).line_fps(128, 0)
    assert vm_ > ns


@pytest.mark.parametrize("name,device,route", [
    ("6in4", "/usr/bin/ip tunnel add tun0 mode sit local 198.18.11.1 remote 198.18.11.2 ttl 64",
     "/usr/bin/ip -6 route replace 2001:2:0:1::/64 via 2001:2:0:f6::2 dev tun0"),
    ("gre6in4", "/usr/bin/ip tunnel add tun0 mode gre local 198.18.11.1 remote 198.18.11.2 ttl 64",
     "/usr/bin/ip -6 route replace 2001:2:0:1::/64 via 2001:2:0:f6::2 dev tun0"),
    ("4in6", "/usr/bin/ip -6 tunnel add tun0 mode ipip6 local 2001:2:0:11::1 remote 2001:2:0:11::2 encaplimit none "
             "hoplimit 64", "/usr/bin/ip route replace 198.19.0.0/24 dev tun0"),
    ("gre4in6", "/usr/bin/ip -6 tunnel add tun0 mode ip6gre local 2001:2:0:11::1 remote 2001:2:0:11::2 encaplimit "
                "none hoplimit 64", "/usr/bin/ip route replace 198.19.0.0/24 dev tun0"),
])
def test_a_vm_routers_tunnel_is_set_up_after_its_static_routes(name, device, route):
    lines = vm_config.startup_script(parse_topology("b"), "r1", Mtus(), SYSCTLS[ROUTER], DutConfig(tunnel=name),
                                     1e9).splitlines()
    assert device in lines and route in lines
    assert lines.index(route) > lines.index("/usr/bin/ip route replace 198.19.0.0/24 via 198.18.11.2")
    # After a soft reset's links up, the tunnel's route again over the static one.
    up = vm_config.links_up_script(parse_topology("b"), "r1", Mtus(), DutConfig(tunnel=name)).splitlines()
    assert up[-1] == route


@pytest.mark.parametrize("name,rule,route", [
    ("6in4", "/usr/bin/ip -6 rule add pref 1000 ipproto 17 sport 49185-65534 lookup 46",
     "/usr/bin/ip -6 route replace 2001:2:0:1::/64 via 2001:2:0:f6::2 dev tun0 table 46"),
    ("4in6", "/usr/bin/ip -4 rule add pref 1000 ipproto 17 sport 49185-65534 lookup 46",
     "/usr/bin/ip route replace 198.19.0.0/24 dev tun0 table 46"),
])
def test_a_vm_routers_tunnel_scoped_to_flow_2_routes_by_rule_beside_the_native_route(name, rule, route):
    """Scoped, the tunnel's route goes to table 46, which flow 2's rule looks
    up; the static route over the bare link stays for flow 1."""
    lines = vm_config.startup_script(parse_topology("b"), "r1", Mtus(), SYSCTLS[ROUTER],
                                     DutConfig(tunnel=name, scope="flow2"), 1e9).splitlines()
    assert rule in lines and route in lines and lines.count(rule) == 1
    assert "/usr/bin/ip route replace 198.19.0.0/24 via 198.18.11.2" in lines
    up = vm_config.links_up_script(parse_topology("b"), "r1", Mtus(), DutConfig(tunnel=name, scope="flow2")).splitlines()
    assert up[-1] == route and rule not in up
