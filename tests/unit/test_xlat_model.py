"""464XLAT (lab/model/xlat.py): the CLAT's and PLAT's TAYGA configurations
and routes on topology b, the [dut] xlat key's rules, the PLAT's source
NAT on R2, the IPv6-only link's 20 bytes in the path's line rate, and the
engine spec of a trial through both (t2 answering t1's connections)."""

import dataclasses
import re

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab import interface
from v6bench.lab.emulated.build import SYSCTLS
from v6bench.lab.model import translation, xlat
from v6bench.lab.vm import jool
from v6bench.lab.model.mtu import Mtus
from v6bench.lab.model.topology import ROUTER
from v6bench.lab.vm import vm_config
from v6bench.lab.emulated.ruleset import ruleset
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.spec import LabSpec, dut_config
from v6bench.lab.model.topology import parse_topology
from v6bench.lab.vm.backend import VmBackend
from v6bench.trial import answers
from v6bench.trial.path import LabPath
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

from test_trial_spec import lab_of


def test_the_clat_maps_t1_into_its_prefix_and_sends_ipv4_to_the_plats_prefix_on_r2():
    clat, plat = xlat.taygas("", "464", parse_topology("b"))
    assert clat.router == "r1" and clat.tun == "clat" and not clat.stateful
    assert "map 198.18.0.2 2001:2:0:4646::c612:2" in clat.conf and "prefix 2001:2:0:6464::/96" in clat.conf
    assert ("-4", "route", "replace", "198.19.0.0/24", "dev", "clat") in clat.routes
    assert ("-6", "route", "replace", "2001:2:0:6464::/96", "via", "2001:2:0:11::2") in clat.routes
    assert plat.router == "r2" and plat.tun == translation.TUN_DEV and plat.stateful
    assert "dynamic-pool 198.18.66.0/24" in plat.conf and not any(x.startswith("data-dir") for x in plat.conf)
    assert ("-6", "route", "replace", "2001:2:0:4646::/96", "via", "2001:2:0:11::1") in plat.routes
    assert ("-4", "route", "replace", "unreachable", "198.18.0.0/24") in plat.routes
    assert xlat.taygas("stateful", "", parse_topology("a")) == (translation.nat64("stateful", "2001:2::2"),)
    assert xlat.taygas("", "", parse_topology("b")) == ()


def test_the_plats_source_nat_is_on_r2_and_r1_keeps_no_state():
    topo, dut = parse_topology("b"), DutConfig(xlat="464")
    assert ruleset(dut, topo, "r1") is None
    assert 'oifname "r2-t2" ip saddr 198.18.66.0/24 counter snat to 198.19.0.1' in ruleset(dut, topo, "r2")
    assert dut.keeps_state and dut.stateful_router == "r2" and DutConfig(nat44=True).stateful_router == "r1"
    assert "464XLAT: CLAT on R1, stateful PLAT on R2" in dut.describe()


@pytest.mark.parametrize("d,words", [
    ({"xlat": "464", "nat64": "stateful"}, "not with nat64"),
    ({"xlat": "464", "nat44": True}, "not with nat64, nat44"),
    ({"xlat": "464", "scope": "flow2"}, "scope all"),
    ({"xlat": "464", "table": "10k"}, "not with a table"),
    ({"xlat": "46"}, "is not one of 464"),
])
def test_the_xlat_key_refuses_what_it_cannot_join(d, words):
    with pytest.raises(UsageError, match=words) as e:
        DutConfig(**d)
    assert e.value.field == ("xlat",)


def test_464xlat_needs_topology_b_and_on_vm_routers_jool_translates_in_the_guests():
    with pytest.raises(UsageError, match="topology b") as e:
        dut_config({"xlat": "464"}, LabSpec(topology="a"))
    assert e.value.field == ("xlat",)
    assert VmBackend().dut_config({"xlat": "464"}, LabSpec(topology="b", lab_kind="vm")).xlat == "464"
    b = parse_topology("b")

    def script(router: str) -> list[str]:  # "ip" as the guest runs it, whatever its path
        text = vm_config.startup_script(b, router, Mtus(), SYSCTLS[ROUTER], DutConfig(xlat="464"), 1e9)
        return [re.sub(r"^/\S*/ip ", "ip ", line) for line in text.splitlines()]
    r1 = script("r1")
    at = r1.index("jool_siit instance add v6bench --netfilter --pool6 2001:2:0:6464::/96")
    assert r1[at + 1:at + 3] == ["jool_siit -i v6bench eamt add 198.18.0.2/32 2001:2:0:4646::c612:2/128",
                                 "ip -6 route replace 2001:2:0:6464::/96 via 2001:2:0:11::2"]
    r2 = script("r2")
    at = r2.index("jool instance add v6bench --netfilter --pool6 2001:2:0:6464::/96")
    assert r2[at + 1:at + 4] == ["jool -i v6bench pool4 add 198.19.0.1 61001-65535 --udp",
                                 "ip -6 route replace 2001:2:0:4646::/96 via 2001:2:0:11::1",
                                 "ip -4 route replace unreachable 198.18.0.0/24"]
    assert not any(line.startswith("nft") for line in r1 + r2), "Jool's NAT64 keeps its own sessions"
    assert jool.translators("", "464") == [("r2", "stateful", "translator"), ("r1", "stateless", "clat")]


def test_the_ipv6_only_link_counts_20_bytes_a_frame_in_the_line_rate_and_t2_answers():
    lab = dataclasses.replace(lab_of("b"), dut_config=DutConfig(xlat="464"))
    assert interface.tunnel(lab) is xlat.LINK
    plain, through = LabPath.of(lab_of("b")), LabPath.of(lab)
    assert through.line_fps(128, 100) == pytest.approx(plain.line_fps(128, 100) * (128 + 20) / (128 + 20 + 20))
    assert through.line_fps(128, 0) == plain.line_fps(128, 0)  # IPv6 is forwarded as before
    spec = engine_spec(lab, make_request("100/0", 128, "10kfps", 2, True), 10_000)
    assert answers.answered(spec) == {"ipv4-t2-t1": "ipv4-t1-t2"}
    with pytest.raises(UsageError, match="only by answering") as e:
        engine_spec(lab, dataclasses.replace(make_request("100/0", 128, "10kfps", 2, True), ports="fixed"), 10_000)
    assert e.value.field == ("bidirectional",)
