"""DS-Lite (lab/model/dslite.py): the [dut] dslite key's rules, VM routers
only, the B4's and AFTR's startup configuration (the 4in6 ip6tnl tunnel,
RFC 6333's softwire addresses, the AFTR's NAT44 and its drop of what t2
would open), the softwire's 40 bytes in the path's line rate, and t2
answering t1's connections."""

import dataclasses
import re

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab import interface
from v6bench.lab.emulated.backend import NamespaceBackend
from v6bench.lab.emulated.build import SYSCTLS
from v6bench.lab.model import dslite
from v6bench.lab.emulated.ruleset import ruleset
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.mtu import Mtus
from v6bench.lab.model.spec import LabSpec
from v6bench.lab.model.topology import ROUTER, parse_topology
from v6bench.lab.vm import vm_config
from v6bench.lab.vm.backend import VmBackend
from v6bench.trial import answers
from v6bench.trial.path import LabPath
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

from test_trial_spec import lab_of


@pytest.mark.parametrize("d,words", [
    ({"dslite": True, "xlat": "464"}, "not with xlat"),
    ({"dslite": True, "nat44": True}, "not with xlat, nat64, nat44"),
    ({"dslite": True, "tunnel": "4in6"}, "a tunnel"),
    ({"dslite": True, "scope": "flow2"}, "or a scope"),
    ({"dslite": True, "max_connections": 10}, "limits"),
])
def test_the_dslite_key_refuses_what_it_cannot_join(d, words):
    with pytest.raises(UsageError, match=words) as e:
        DutConfig(**d)
    assert e.value.field == ("dslite",)


def test_ds_lite_needs_topology_b_and_vm_routers():
    with pytest.raises(UsageError, match="topology b") as e:
        VmBackend().dut_config({"dslite": True}, LabSpec(topology="a", lab_kind="vm"))
    assert e.value.field == ("dslite",)
    with pytest.raises(UsageError, match="needs VM routers") as e:
        NamespaceBackend().dut_config({"dslite": True}, LabSpec(topology="b"))
    assert e.value.field == ("dslite",)
    dut = VmBackend().dut_config({"dslite": True}, LabSpec(topology="b", lab_kind="vm"))
    assert dut.dslite and dut.keeps_state and dut.answers_only and dut.stateful_router == "r2"
    assert "DS-Lite: B4 on R1, AFTR with NAT44 on R2" in dut.describe()
    assert "dslite" not in DutConfig().to_json() and DutConfig.from_json(dut.to_json()) == dut


def script(router: str) -> list[str]:
    """``router``'s startup configuration with DS-Lite, ``ip`` as the guest runs it whatever its path."""
    text = vm_config.startup_script(parse_topology("b"), router, Mtus(), SYSCTLS[ROUTER], DutConfig(dslite=True), 1e9)
    return [re.sub(r"^/\S*/(ip|nft) ", r"\1 ", line) for line in text.splitlines()]


def test_the_b4_tunnels_t2s_network_to_the_aftr_which_nats_it_and_sends_replies_back():
    r1, r2 = script("r1"), script("r2")
    at = r1.index("ip -6 tunnel add tun0 mode ipip6 local 2001:2:0:11::1 remote 2001:2:0:11::2 encaplimit none "
                  "hoplimit 64")
    assert r1[at + 1:at + 4] == ["ip link set dev tun0 mtu 1460 up", "ip route replace 198.19.0.0/24 dev tun0",
                                 "ip addr replace 192.0.0.2/29 dev tun0"]
    at = r2.index("ip -6 tunnel add tun0 mode ipip6 local 2001:2:0:11::2 remote 2001:2:0:11::1 encaplimit none "
                  "hoplimit 64")
    assert r2[at + 2:at + 4] == ["ip route replace 198.18.0.0/24 dev tun0", "ip addr replace 192.0.0.1/29 dev tun0"]
    topo = parse_topology("b")
    assert ruleset(DutConfig(dslite=True), topo, "r1") is None and not any(x.startswith("nft") for x in r1)
    aftr = ruleset(DutConfig(dslite=True), topo, "r2")
    assert aftr == dslite.aftr_ruleset(topo) and f"table ip {dslite.TABLE} " in aftr
    assert 'oifname "r2-t2" ip saddr 198.18.0.0/24 counter snat to 198.19.0.1' in aftr
    assert 'iifname "r2-t2" ip daddr 198.18.0.0/24 ct state new counter drop' in aftr
    soft = vm_config.links_up_script(topo, "r2", Mtus(), DutConfig(dslite=True))
    assert soft.rstrip().endswith("198.18.0.0/24 dev tun0"), soft  # the softwire's route again after a soft reset


def test_the_softwire_counts_40_bytes_a_frame_in_the_line_rate_and_t2_answers():
    lab = dataclasses.replace(lab_of("b"), dut_config=DutConfig(dslite=True))
    assert interface.tunnel(lab) is dslite.LINK
    assert interface.spec_tunnel(LabSpec(topology="b", lab_kind="vm"), DutConfig(dslite=True)) is dslite.LINK
    plain, through = LabPath.of(lab_of("b")), LabPath.of(lab)
    assert through.line_fps(128, 100) == pytest.approx(plain.line_fps(128, 100) * (128 + 20) / (128 + 20 + 40))
    spec = engine_spec(lab, make_request("100/0", 128, "10kfps", 2, True), 10_000)
    assert answers.answered(spec) == {"ipv4-t2-t1": "ipv4-t1-t2"}
    with pytest.raises(UsageError, match="through DS-Lite t2's IPv4 reaches t1 only by answering") as e:
        engine_spec(lab, dataclasses.replace(make_request("100/0", 128, "10kfps", 2, True), ports="fixed"), 10_000)
    assert e.value.field == ("bidirectional",)
