"""NAT64 on R1 (lab/model/translation.py): RFC 6052 addresses against the
RFC's own examples, the [dut] nat64 key's rules, TAYGA's configuration and
the stateful mode's source NAT, and the engine spec of a trial across the
translator, checked by the engine's own validator."""

import base64
import dataclasses
import ipaddress

import pytest

from v6bench.core.address_blocks import BENCHMARKING
from v6bench.core.errors import UsageError
from v6bench.core.frames import Traffic
from v6bench.core.params import parse
from v6bench.lab.model import translation
from v6bench.lab.emulated.ruleset import ruleset
from v6bench.lab.model.dut import DutConfig, flow2_scenarios
from v6bench.lab.model.spec import LabSpec, dut_config
from v6bench.lab.model.topology import parse_topology
from v6bench.lab.vm.backend import VmBackend
from v6bench.trial import answers
from v6bench.trial.path import LabPath
from v6bench.trial.request import make_request
from v6bench.trial.spec import engine_spec

from test_trial_spec import check, lab_of

#: RFC 6052 §2.4, Table 1: 192.0.2.33 embedded under each prefix length.
RFC6052_EXAMPLES = [
    ("2001:db8::/32", "2001:db8:c000:221::"),
    ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
    ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
    ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
    ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"),
    ("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"),
    ("64:ff9b::/96", "64:ff9b::192.0.2.33"),
]


@pytest.mark.parametrize("prefix,address", RFC6052_EXAMPLES)
def test_addresses_are_embedded_and_extracted_as_rfc_6052_shows(prefix, address):
    net = ipaddress.ip_network(prefix)
    assert translation.embed(net, "192.0.2.33") == ipaddress.ip_address(address)
    assert translation.extract(net, address) == ipaddress.ip_address("192.0.2.33")


def test_the_default_prefix_is_network_specific_inside_the_benchmarking_block():
    v6_block = next(n for n in BENCHMARKING if n.version == 6)
    assert translation.PREFIX.prefixlen == 96 and translation.PREFIX.subnet_of(v6_block)
    assert translation.PREFIX.network_address.packed[8] == 0, "RFC 6052 §2.2: the u octet is zero"
    for a in (translation.TAYGA_V4, translation.STATIC_V4):
        assert any(a in n for n in BENCHMARKING if n.version == 4)
    assert translation.DYNAMIC_POOL.subnet_of(ipaddress.ip_network("198.18.0.0/15"))
    with pytest.raises(ValueError, match="/32, /40"):
        translation.embed(ipaddress.ip_network("2001:2::/80"), "198.19.0.2")


def test_taygas_configuration_maps_t1_statelessly_or_pools_statefully():
    stateless = translation.tayga_conf("stateless", "2001:2::2", "/run/x")
    assert "map 198.18.65.2 2001:2::2\n" in stateless and "dynamic-pool" not in stateless
    assert "prefix 2001:2:0:6464::/96\n" in stateless and "tun-device nat64\n" in stateless
    stateful = translation.tayga_conf("stateful", "2001:2::2", "/run/x")
    assert "dynamic-pool 198.18.66.0/24\n" in stateful and "map " not in stateful


def test_the_stateful_mode_puts_r1s_address_in_front_of_the_pool():
    topo = parse_topology("a")
    text = ruleset(DutConfig(nat64="stateful"), topo, "r1")
    assert 'oifname "r1-t2" ip saddr 198.18.66.0/24 counter snat to 198.19.0.1' in text
    assert f"table ip {translation.NAT64_TABLE}" in text
    assert ruleset(DutConfig(nat64="stateless"), topo, "r1") is None, "stateless: no rule, no connection tracking"


@pytest.mark.parametrize("d,field,words", [
    ({"nat64": "stateful", "tunnel": "6in4"}, "nat64", "not with a tunnel"),
    ({"nat64": "stateless", "acl": 1}, "nat64", "not with an ACL"),
    ({"nat64": "stateless", "table": "10k"}, "nat64", "not with a table"),
    ({"nat64": "both"}, "nat64", "is not one of stateless, stateful"),
])
def test_the_nat64_key_refuses_what_it_cannot_join(d, field, words):
    with pytest.raises(UsageError) as e:
        parse(DutConfig, d, ("dut",))
    assert e.value.field == ("dut", field) and words in str(e.value)


def test_nat64_and_nat44_share_flow_2_one_family_each():
    dut = DutConfig(nat64="stateful", nat44=True, scope="flow2")
    assert flow2_scenarios(dut, Traffic(flows=2)) == {"4": "IPv4 source NAT", "6": "stateful NAT64"}
    assert "stateful NAT64 (prefix 2001:2:0:6464::/96)" in dut.describe()


def test_nat64_is_on_r1_of_topology_a_on_namespace_and_vm_routers():
    with pytest.raises(UsageError, match="topology a") as e:
        dut_config({"nat64": "stateless"}, LabSpec(topology="b"))
    assert e.value.field == ("nat64",)
    # A VM router translates with Jool in its kernel (lab/vm/jool.py).
    assert VmBackend().dut_config({"nat64": "stateful"}, LabSpec(lab_kind="vm")).nat64 == "stateful"


def nat64_lab(mode: str, scope: str = "all"):
    return dataclasses.replace(lab_of("a"), dut_config=DutConfig(nat64=mode, scope=scope))


def streams(lab, req) -> dict[str, dict]:
    spec = engine_spec(lab, req, req.check_against(LabPath.of(lab))).to_json()
    return {s["name"]: s for s in spec["streams"]}, spec


def test_ipv6_from_t1_goes_to_t2s_ipv4_address_in_the_prefix_and_t2_answers_its_connections(engine_bin):
    by_name, spec = streams(nat64_lab("stateful"), make_request("50/50", 128, "10kfps", 2, True))
    assert by_name["ipv6-t1-t2"]["dst_ip"] == "2001:2:0:6464::c613:2" and by_name["ipv6-t1-t2"]["rx_ip_version"] == 4
    assert "rx_ip_version" not in by_name["ipv4-t1-t2"] and "dst_ip" not in by_name["ipv4-t1-t2"]
    # t2 answers each of t1's streams in the family it arrives in (trial/answers.py): IPv6's as IPv4,
    # 20 bytes shorter, arriving at t1 as IPv6; IPv4's as IPv4. Both wait for the phase's 4-tuples.
    reply6, reply4 = by_name["ipv6-t2-t1"], by_name["ipv4-t2-t1"]
    assert (reply6["ip_version"], reply6["frame_size"], reply6["rx_ip_version"]) == (4, 108, 6)
    assert (reply4["ip_version"], reply4["frame_size"], "rx_ip_version" in reply4) == (4, 128, False)
    assert reply6["walk"] == {"reply_to": "learn:ipv6-t1-t2", "order": "sequential"}
    assert "dst_ip" not in reply6 and "src_port" not in reply6
    record = base64.b64encode(bytes([4, 198, 18, 66, 1, 198, 19, 0, 2]) + (61000).to_bytes(2, "big")
                              + (7).to_bytes(2, "big")).decode()
    filled = answers.fill(engine_spec(nat64_lab("stateful"), make_request("50/50", 128, "10kfps", 2, True), 10_000),
                          {"ipv6-t1-t2": record, "ipv4-t1-t2": record}).to_json()
    planned = {s["name"]: s for s in check(engine_bin, filled)["streams"]}
    assert planned["ipv6-t1-t2"]["frames"] == 10000
    assert (planned["ipv6-t2-t1"]["dst_ip"], planned["ipv6-t2-t1"]["dst_port"], planned["ipv6-t2-t1"]["src_port"]) == \
        ("198.18.66.1", 61000, 7)
    with pytest.raises(ValueError, match="no connections learned from ipv6-t1-t2"):
        answers.fill(engine_spec(nat64_lab("stateful"), make_request("0/100", 128, "10kfps", 2, True), 10_000), {})


def test_stateless_translates_both_ways_and_a_scope_keeps_flow_1_native(engine_bin):
    by_name, spec = streams(nat64_lab("stateless"), make_request("50/50", 1400, "10kfps", 2, True))
    assert (by_name["ipv4-t2-t1"]["dst_ip"], by_name["ipv4-t2-t1"]["rx_ip_version"]) == ("198.18.65.2", 6)
    check(engine_bin, spec)
    by_name, spec = streams(nat64_lab("stateless", "flow2"), make_request("0/100", 128, "10kfps", 2, False, flows=2))
    assert by_name["ipv6-t1-t2-flow2"]["rx_ip_version"] == 4 and "rx_ip_version" not in by_name["ipv6-t1-t2"]
    check(engine_bin, spec)


@pytest.mark.parametrize("kwargs,field", [
    ({"frame_size": 1500, "bidirectional": True}, "frame_size"),  # IPv4 → IPv6 grows past t1's MTU
    ({"frame_size": 2000}, "frame_size"),                          # fragmented at the source
    ({"icmp_echo": "far"}, "icmp_echo"),
])
def test_what_cannot_cross_the_translator_whole_is_refused(kwargs, field):
    args = {"frame_size": 128, "bidirectional": False, **kwargs}
    req = make_request("50/50", args.pop("frame_size"), "10kfps", 2, args.pop("bidirectional"), **args)
    lab = nat64_lab("stateless")
    with pytest.raises(UsageError) as e:
        engine_spec(lab, req, req.check_against(LabPath.of(lab)))
    assert e.value.field == (field,)
