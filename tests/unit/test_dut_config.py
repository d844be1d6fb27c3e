"""The DUT's nftables rule sets (no root): ACL shapes per seed 000 §3 and
their checks. The rule sets are loaded by nft in tests/netns/test_dut_acl.py."""

from __future__ import annotations

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab.emulated.ruleset import ports, ruleset
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.model.topology import parse_topology
from v6bench.core.params import parse


def chain(text: str, name: str) -> list[str]:
    body = text.split(f"chain {name} {{\n", 1)[1].split("  }\n", 1)[0]
    return [line.strip() for line in body.splitlines()]


def test_plain_forwarding_needs_no_rules():
    assert ruleset(DutConfig(), parse_topology("a"), "r1") is None
    assert ruleset(DutConfig(acl=25), parse_topology("b"), "r2") is None  # R1 only


def test_one_rule_permits_the_test_destination_then_denies_all_else():
    text = ruleset(DutConfig(acl=1), parse_topology("a"), "r1")
    assert chain(text, "acl_v4") == ["ip daddr 198.19.0.2 counter return", "counter drop"]
    assert chain(text, "acl_v6") == ["ip6 daddr 2001:2:0:1::2 counter return", "counter drop"]
    fwd = chain(text, "forward")
    assert 'iifname "r1-t1" meta nfproto ipv4 jump acl_v4' in fwd and not any("oifname" in r for r in fwd)


def test_25_rules_make_the_test_frame_pass_24_denies_first():
    text = ruleset(DutConfig(acl=25, acl_udp_only=True), parse_topology("a"), "r1")
    v4, v6 = chain(text, "acl_v4"), chain(text, "acl_v6")
    assert len(v4) == len(v6) == 26  # 24 denies, the permit, the implicit deny
    assert v4[0] == "ip daddr 198.19.100.0/24 drop" and v4[23] == "ip daddr 198.19.123.0/24 drop"
    assert v6[0] == "ip6 daddr 2001:2:0:64::/64 drop" and v6[23] == "ip6 daddr 2001:2:0:7b::/64 drop"
    assert v6[24] == "ip6 daddr 2001:2:0:1::2 meta l4proto udp counter return"


def test_a_list_of_k_rules_and_one_family_walking_it():
    """K rules: K − 1 denies in the benchmarking blocks, then the permit;
    ``acl_family``: only that family's frames jump to their list, the
    other family is forwarded unfiltered (its control in the same trial)."""
    text = ruleset(DutConfig(acl=150, acl_family="ipv6", acl_at="both"), parse_topology("a"), "r1")
    v4, v6 = chain(text, "acl_v4"), chain(text, "acl_v6")
    assert len(v4) == len(v6) == 151
    assert v4[148] == "ip daddr 198.19.248.0/24 drop" and v6[148] == "ip6 daddr 2001:2:0:f8::/64 drop"
    fwd = [r for r in chain(text, "forward") if "jump" in r]
    assert fwd == ['iifname "r1-t1" meta nfproto ipv6 jump acl_v6', 'oifname "r1-t2" meta nfproto ipv6 jump acl_v6']
    only4 = [r for r in chain(ruleset(DutConfig(acl=10, acl_family="ipv4"), parse_topology("a"), "r1"), "forward")
             if "jump" in r]
    assert only4 == ['iifname "r1-t1" meta nfproto ipv4 jump acl_v4']
    assert DutConfig(acl=10, acl_family="ipv6").describe() == "ACL of 10 rules at in, IPv6 frames only"


@pytest.mark.parametrize("at,expect", [("in", ['iifname "r1-t1"']), ("out", ['oifname "r1-r2"']),
                                       ("both", ['iifname "r1-t1"', 'oifname "r1-r2"'])])
def test_acl_at_picks_the_input_or_output_port(at, expect):
    topo = parse_topology("b")
    assert ports(topo, "r1") == ("r1-t1", "r1-r2")
    fwd = chain(ruleset(DutConfig(acl=1, acl_at=at), topo, "r1"), "forward")
    jumps = [r for r in fwd if "jump" in r]
    assert [r.split(" meta")[0] for r in jumps] == [m for m in expect for _ in (4, 6)]


def test_limit_and_acl_together():
    fwd = chain(ruleset(DutConfig(acl=1, limit_fps=10_000), parse_topology("a"), "r1"), "forward")
    assert 'iifname "r1-t1" limit rate over 10000/second burst 250 packets drop' in fwd


@pytest.mark.parametrize("d,message", [
    ({"acl": 151}, "dut.acl: 151 is not 0 (none) or a number of rules from 1 to 150"),
    ({"acl": -1}, "dut.acl: -1 is not 0 (none)"),
    ({"acl_family": "ipv6"}, "dut.acl_family: needs an ACL"),
    ({"acl": 10, "acl_family": "v6"}, "dut.acl_family: 'v6' is not both, ipv4 or ipv6"),
    ({"acl": 1, "acl_at": "sideways"}, "dut.acl_at: 'sideways' is not in, out or both"),
    ({"acl_udp_only": True}, "dut.acl_udp_only: needs an ACL"),
    ({"acl": "25"}, "dut.acl"),
])
def test_bad_dut_keys_name_the_field(d, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(DutConfig, d, ("dut",))


def test_nat44_translates_the_test_direction_in_an_ipv4_only_table():
    text = ruleset(DutConfig(nat44=True), parse_topology("b"), "r1")
    assert text.startswith("table ip v6bench_nat {")  # conntrack for IPv4 only
    assert 'oifname "r1-r2" ip saddr 198.18.0.0/24 counter snat to 198.18.11.1' in text
    assert "inet" not in text


def test_shaping_counts_layer_1_and_queues_20_ms():
    from v6bench.lab.emulated.shape import tbf_args

    args = tbf_args("r1-t2", 100e6, 1500)
    assert args[args.index("overhead") + 1] == "24" and args[args.index("rate") + 1] == "100000000bit"
    assert args[args.index("limit") + 1] == "250000"  # 20 ms at 100 Mb/s
    assert args[args.index("burst") + 1] == "25000"  # 2 ms at 100 Mb/s
    assert tbf_args("x", 1e6, 1500)[tbf_args("x", 1e6, 1500).index("burst") + 1] == str(1500 + 14 + 24 + 1)


def test_tunnel_overhead_counts_in_the_paths_line_rate():
    from v6bench.lab.model.mtu import Mtus
    from v6bench.lab.model.tunnel import TUNNELS, check_frame
    from v6bench.trial.path import LabPath

    def path_line_fps(speed, size, ipv4_pct, tunnel):
        return LabPath.build("b", speed, Mtus(), TUNNELS[tunnel] if tunnel else None).line_fps(size, ipv4_pct)

    line = 100e6 / ((128 + 20) * 8)
    assert path_line_fps(100e6, 128, 50, None) == pytest.approx(line)
    # 4in6: IPv4 frames take 40 bytes more on the R1–R2 link; half the frames are IPv4.
    assert path_line_fps(100e6, 128, 50, "4in6") == pytest.approx(100e6 / ((128 + 20 + 20) * 8))
    assert path_line_fps(100e6, 128, 0, "4in6") == pytest.approx(line)  # nothing carried
    assert path_line_fps(100e6, 1518, 0, "6in4") == pytest.approx(100e6 / ((1518 + 20 + 50) * 8))
    check_frame(TUNNELS["4in6"], 1478, {4, 6}, 1500)  # 1460-byte IPv4 packet + 40 = 1500
    with pytest.raises(UsageError, match="needs an MTU of 1501"):
        check_frame(TUNNELS["4in6"], 1479, {4}, 1500)
    check_frame(TUNNELS["6in4"], 1518, {4}, 1500)  # IPv4 is not carried by 6in4


def test_a_tunnel_needs_topology_b():
    from v6bench.campaign import spec

    text = 'name = "t"\n[lab]\ntopology = "a"\n[dut]\ntunnel = "4in6"\n[matrix]\nframe_sizes = [128]\n[[test]]\nkind = "throughput"\n'
    with pytest.raises(UsageError, match='dut.tunnel: 4in6 runs between R1 and R2: it needs topology b'):
        spec.parse_campaign(text, "t.toml")
    assert spec.parse_campaign(text.replace('"a"', '"b"'), "t.toml").dut.tunnel == "4in6"


def test_a_scenario_scoped_to_flow_2_matches_its_source_port():
    """``scope = "flow2"``: the list's jumps and the NAT match the second
    flow's UDP source ports (core/frames.FLOW2_SRC_PORTS: its fixed port
    and its share of RFC 4814's range); the NAT leaves
    every other frame from t1's subnet untracked, so its control is not
    connection-tracked either; what flow 2 meets is said per IP version."""
    a = parse_topology("a")
    fwd = [r for r in chain(ruleset(DutConfig(acl=100, acl_family="ipv6", scope="flow2"), a, "r1"), "forward")
           if "jump" in r]
    assert fwd == ['iifname "r1-t1" meta nfproto ipv6 udp sport 49185-65534 jump acl_v6']
    nat = ruleset(DutConfig(nat44=True, scope="flow2"), a, "r1")
    assert 'ip saddr 198.18.0.0/24 udp sport != 49185-65534 notrack' in chain(nat, "prerouting")
    assert 'oifname "r1-t2" ip saddr 198.18.0.0/24 udp sport 49185-65534 counter snat to 198.19.0.1' in chain(nat, "postrouting")
    assert "notrack" not in ruleset(DutConfig(nat44=True), a, "r1")
    assert DutConfig(nat44=True, scope="flow2").on_flow2() == {4: "IPv4 source NAT"}
    assert DutConfig(acl=10, scope="flow2").on_flow2() == {4: "ACL of 10 rules at in", 6: "ACL of 10 rules at in"}
    assert DutConfig(tunnel="4in6", scope="flow2").on_flow2() == {4: "4in6 tunnel"}
    assert DutConfig(tunnel="gre6in4", scope="flow2").on_flow2() == {6: "gre6in4 tunnel"}
    assert DutConfig(acl=10).on_flow2() == {}
    assert "on each family's flow 2 only" in DutConfig(acl=10, scope="flow2").describe()
    # Stored as before where unscoped (old results and lab states stay equal).
    assert "scope" not in DutConfig(acl=10).to_json() and DutConfig(nat44=True, scope="flow2").to_json()["scope"] == "flow2"


def test_the_second_flows_scenarios_join_the_duts_and_the_traffics():
    from v6bench.core.frames import Traffic
    from v6bench.lab.model.dut import flow2_scenarios

    both = flow2_scenarios(DutConfig(acl=1, acl_udp_only=True, acl_family="ipv6", scope="flow2"),
                           Traffic("hbh", None, 2, "flow2"))
    assert both == {"6": "ACL of 1 rule at in, UDP only, +hbh"}
    assert flow2_scenarios(DutConfig(acl=1, acl_udp_only=True), Traffic("hbh", None, 2, "flow2")) == {"6": "+hbh"}
    assert flow2_scenarios(DutConfig(), Traffic(flows=2)) == {}


@pytest.mark.parametrize("d,message", [
    ({"scope": "flow3"}, "dut.scope: 'flow3' is not one of all, flow2"),
    ({"scope": "flow2"}, "dut.scope: flow2 pairs one scenario with its control: give exactly one of acl, nat44 (and nat64) and "
                         "tunnel (given: 0)"),
    ({"scope": "flow2", "acl": 5, "nat44": True}, "(given: 2)"),
])
def test_a_scope_needs_exactly_one_scenario(d, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(DutConfig, d, ("dut",))


def test_a_scoped_lab_takes_trials_of_two_flows_only():
    from v6bench.core.frames import Traffic
    from v6bench.trial import fit

    fit.check_on_dut(Traffic(flows=2), DutConfig(acl=1, scope="flow2"))
    fit.check_on_dut(Traffic(), DutConfig())
    with pytest.raises(UsageError, match="send two flows") as e:
        fit.check_on_dut(Traffic(), DutConfig(acl=1, scope="flow2"))
    assert e.value.field == ("flows",)


def test_a_dut_of_known_connection_capacity_and_rate_counts_and_limits_new_connections():
    """``max_connections`` and ``max_new_fps`` (RFC 9693's known answers): a
    ``ct count`` over a dynamic set of destinations and a limit on new
    connections, in R1's forward chain; either makes R1 keep state."""
    a = parse_topology("a")
    text = ruleset(DutConfig(max_connections=1000, max_new_fps=2000), a, "r1")
    fwd = chain(text, "forward")
    assert "ct state new add @connections { ip daddr ct count over 1000 } counter drop" in fwd
    assert "meta nfproto ipv4 ct state new limit rate over 2000/second burst 40 packets counter drop" in fwd
    assert "set connections" in text and DutConfig(max_connections=1).keeps_state
    assert not DutConfig(nat64="stateless").keeps_state and DutConfig(nat64="stateful").keeps_state
    with pytest.raises(UsageError, match="max_new_fps"):
        parse(DutConfig, {"max_new_fps": -1}, ("dut",))
