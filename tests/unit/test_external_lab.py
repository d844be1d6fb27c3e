"""External lab files, SNMP readings and their arithmetic, and the rules a
campaign on an external lab obeys, without root (issue 19). The lab on a
router v6bench did not build is run in tests/netns/test_external.py."""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
from pathlib import Path

import pytest

from v6bench.campaign import spec as campaign_spec
from v6bench.core.errors import UsageError
from v6bench.core.rates import format_link_speed, parse_port_speed
from v6bench.engine import local
from v6bench.lab.external import lab_file as external_spec
from v6bench.lab.model.dut import DutConfig
from v6bench.lab.external import snmp
from v6bench.lab.external.snmp_observe import SnmpDut, SnmpObserver
from v6bench.lab.external.lab_file import SnmpSpec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "external-lab.toml"

MINIMAL = """\
[lab]
link_speed = "25G"
[port.t1]
interface = "eth1"
[port.t2]
interface = "eth2"
"""


def load(tmp_path: Path, text: str) -> external_spec.ExternalSpec:
    p = tmp_path / "lab.toml"
    p.write_text(text)
    return external_spec.load(p)


def test_the_documented_example_is_a_valid_lab_file_and_its_record_keeps_no_secret():
    s = external_spec.load(EXAMPLE)
    assert s.link_speed_bps == 10e9 and s.mtu == 1500 and s.netns is None
    assert [p.interface for p in s.ports] == ["enp1s0f0", "enp1s0f1"]
    assert s.dut.snmp.version == "3" and s.dut.snmp.security_level == "authPriv"
    record = json.dumps(s.to_json())
    assert "change-this" not in record and "v6bench" in record  # the user is named, its passwords are not


def test_a_minimal_file_takes_topology_a_addresses_from_the_benchmarking_blocks(tmp_path):
    s = load(tmp_path, MINIMAL)
    t1, t2 = s.ports
    assert (t1.ipv4, t1.gateway_ipv4, t1.ipv6, t1.gateway_ipv6) == ("198.18.0.2/24", "198.18.0.1", "2001:2::2/64", "2001:2::1")
    assert (t2.ipv4, t2.gateway_ipv6) == ("198.19.0.2/24", "2001:2:0:1::1")
    assert s.dut.snmp is None and s.dut.reset_soft is None


@pytest.mark.parametrize("text", ["10M", "100M", "1G", "2.5G", "25G", "40G", "100Gbps", "400G"])
def test_any_port_speed_from_10m_to_400g(text):
    bps = parse_port_speed(text)
    assert 10e6 <= bps <= 400e9 and parse_port_speed(format_link_speed(bps)) == bps


@pytest.mark.parametrize("change, field, words", [
    (("link_speed = \"25G\"", ""), "lab.link_speed", "required"),
    (("25G", "5M"), "lab.link_speed", "outside 10M..400G"),
    (("25G", "800G"), "lab.link_speed", "outside"),
    (("interface = \"eth2\"", "interface = \"eth1\""), "port.t2.interface", "same interface"),
    (("interface = \"eth1\"", "interface = \"eth1\"\nipv4 = \"10.0.0.2/24\"\ngateway_ipv4 = \"10.0.0.1\""),
     "port.t1.ipv4", "outside the benchmarking blocks"),
    (("interface = \"eth1\"", "interface = \"eth1\"\ngateway_ipv4 = \"198.18.1.1\""), "port.t1.gateway_ipv4",
     "not another address"),
    (("interface = \"eth1\"", "interface = \"eth1\"\nipv6 = \"2001:2::2\""), "port.t1.ipv6", "prefix length"),
    (("interface = \"eth1\"", "interface = \"eth1\"\nipv4 = \"198.19.0.2/24\"\ngateway_ipv4 = \"198.19.0.1\""),
     "port.t2.ipv4", "overlap"),
    (("interface = \"eth1\"", "interface = \"eth1\"\nnetns = \"tester\""), "port.t2.netns", "one namespace"),
    (("interface = \"eth1\"", "interface = \"eth1\"\ncolour = 1"), "port.t1.colour", "unknown key"),
    (("interface = \"eth1\"", "interface = \"eth1\"\ndut_interface = 0"), "port.t1.dut_interface", "ifIndex"),
    (("[lab]", "[lab]\nshared_machine = true"), "lab.dut_cpus", "dut_cpus"),
    (("[lab]", "[lab]\nshared_machine = true\ndut_cpus = [1]\ntester_cpus = [0, 1]"), "lab.dut_cpus", "apart"),
    (("[lab]", "[lab]\ndut_cpus = [1]"), "lab.dut_cpus", "shared_machine"),
    (("[lab]", "[table]\nlocal_as = 65000\n[lab]"), "table.allow_full_table", "allow_full_table = true"),
    (("[lab]", "[table]\nallow_full_table = true\nlocal_as = 65000\npeer_as = 65000\n[lab]"), "table.local_as",
     "eBGP"),
    (("[lab]", "[table]\nallow_full_table = true\nspeaker_ipv4 = \"198.19.0.1/24\"\n[lab]"), "table.speaker_ipv4",
     "gateway"),
    (("[lab]", "[table]\nallow_full_table = true\nspeaker_ipv6 = \"2001:2::9/64\"\n[lab]"), "table.speaker_ipv6",
     "not on t2's network"),
    (("[lab]", "[table]\nallow_full_table = true\nspeaker_ipv4 = \"198.19.0.9\"\n[lab]"), "table.speaker_ipv4",
     "prefix length"),
    (("[lab]", "[table]\nallow_full_table = true\npeer_ipv4 = \"198.18.0.1\"\n[lab]"), "table.peer_ipv4",
     "not another address of t2's network"),
    (("[lab]", "[table]\nallow_full_table = true\nhold_time_s = 1\n[lab]"), "table.hold_time_s", "3..65535"),
])
def test_a_bad_lab_file_is_refused_naming_its_field(tmp_path, change, field, words):
    with pytest.raises(UsageError) as e:
        load(tmp_path, MINIMAL.replace(*change, 1))
    assert f"lab.toml: {field}: " in str(e.value) and words in str(e.value), str(e.value)


@pytest.mark.parametrize("snmp_text, field, words", [
    ('version = "3"', "dut.snmp.user", "needs a user"),
    ('version = "3"\nuser = "u"\ncommunity = "c"', "dut.snmp.community", "v3 takes a user"),
    ('version = "3"\nuser = "u"\nauth_password = "short"', "dut.snmp.auth_password", "8 characters"),
    ('version = "3"\nuser = "u"\npriv_password = "longenough"', "dut.snmp.priv_password", "needs authentication"),
    ('version = "3"\nuser = "u"\nauth_protocol = "CRC"\nauth_password = "longenough"', "dut.snmp.auth_protocol",
     "not one of"),
    ('user = "u"', "dut.snmp.user", "set version"),
    ('version = "1"', "dut.snmp.version", "not one of 2c, 3"),
    ('cpu = "fortigate"', "dut.snmp.cpu", "not one of"),
    ('poll_interval_s = 0', "dut.snmp.poll_interval_s", "0.2..60"),
])
def test_bad_snmp_settings_are_refused(tmp_path, snmp_text, field, words):
    with pytest.raises(UsageError) as e:
        load(tmp_path, MINIMAL + f'[dut.snmp]\nhost = "192.0.2.1"\n{snmp_text}\n')
    assert f"{field}: " in str(e.value) and words in str(e.value), str(e.value)


def test_snmp_v3_defaults_sha_and_aes_and_the_client_file_holds_the_secrets(tmp_path):
    s = load(tmp_path, MINIMAL + '[dut.snmp]\nhost = "192.0.2.1"\nversion = "3"\nuser = "u"\n'
                                 'auth_password = "authauth"\npriv_password = "privpriv"\n').dut.snmp
    assert (s.auth_protocol, s.priv_protocol, s.security_level) == ("SHA", "AES", "authPriv")
    conf = snmp._client_conf(s)
    assert "defAuthType SHA" in conf and "defPrivPassphrase privpriv" in conf and "defSecurityLevel authPriv" in conf
    with snmp.Agent(s) as agent:  # the file the tools read is the owner's alone
        mode = (Path(agent._dir.name) / "snmp.conf").stat().st_mode & 0o777
    assert mode == 0o600


def test_snmp_output_is_parsed_with_missing_objects_and_quoted_strings():
    out = snmp._parse('.1.3.6.1.2.1.1.1.0 "Linux r1 6.1.0"\n'
                      ".1.3.6.1.2.1.31.1.1.1.7.2 123456789012\n"
                      ".1.3.6.1.4.1.2021.11.53.0 No Such Object available on this agent at this OID\n"
                      '.1.3.6.1.2.1.1.4.0 "two\nlines"\n')
    assert out == [("1.3.6.1.2.1.1.1.0", "Linux r1 6.1.0"), ("1.3.6.1.2.1.31.1.1.1.7.2", "123456789012"),
                   ("1.3.6.1.4.1.2021.11.53.0", None), ("1.3.6.1.2.1.1.4.0", "two\nlines")]


def test_counter_deltas_cross_one_wrap_of_their_width():
    before = {k: 0 for k in snmp.IF_COUNTERS} | {"in_discards": 2 ** 32 - 5, "in_ucast_pkts": 2 ** 64 - 1}
    after = {k: 7 for k in snmp.IF_COUNTERS} | {"in_discards": 3, "in_ucast_pkts": 9}
    d = snmp.counter_delta(before, after)
    assert d["in_discards"] == 8 and d["in_ucast_pkts"] == 10 and d["out_errors"] == 7
    assert snmp.counter_delta({**before, "in_errors": None}, after)["in_errors"] is None


def _ucd(busy: int, idle: int) -> dict:
    return {"ticks": {"user": busy, "nice": 0, "system": 0, "idle": idle, "wait": 0, "steal": 0}}


def test_cpu_from_tick_counters_is_taken_between_agent_updates_inside_the_traffic():
    """Polls every 0.5 s; the agent updates every 5 s (at 3.2, 8.2, 13.2, 18.2);
    busy 60 % during the traffic (5 to 17), 10 % outside. Only the updates at
    8.2 and 13.2 lie wholly inside: 60 % over 5 s."""
    samples, busy, idle, last = [], 0, 0, _ucd(0, 0)
    for k in range(0, 41):
        t = k * 0.5
        for u in (3.2, 8.2, 13.2, 18.2):
            if t - 0.5 < u <= t:  # the agent took its counters at u
                share = 0.6 if 5 <= u - 2.5 and u <= 17 else 0.1
                busy, idle = busy + round(500 * share), idle + round(500 * (1 - share))
                last = _ucd(busy, idle)
        samples.append((1000 + t, last))
    cpu = snmp.cpu_over_window(snmp.CPU_SOURCES["ucd"], samples, 1005.0, 1017.0)
    assert cpu["pct"] == 60.0 and cpu["over_s"] == 5.0 and cpu["why"] is None
    assert cpu["between_unix_s"] == [[1008.0, 1008.5], [1013.0, 1013.5]]  # the polls around 8.2 and 13.2
    short = snmp.cpu_over_window(snmp.CPU_SOURCES["ucd"], samples, 1005.0, 1010.0)
    assert short["pct"] is None and "updated its CPU counters 1 time" in short["why"]


def test_busy_ticks_count_the_kernels_interrupt_time_once_whatever_the_agents_os():
    """Net-SNMP on Linux: ssCpuRawSystem is /proc/stat's system alone, irq and
    softirq apart, ssCpuRawKernel 0 (seen on Debian 12's snmpd); on the BSDs
    ssCpuRawSystem = kernel + interrupt. Both describe 30 busy ticks in 100."""
    linux = {"user": 10, "nice": 0, "system": 5, "idle": 60, "wait": 10, "kernel": 0, "interrupt": 3,
             "softirq": 12, "steal": 0}
    bsd = {"user": 10, "nice": 0, "system": 20, "idle": 70, "wait": None, "kernel": 5, "interrupt": 15,
           "softirq": None, "steal": None}
    assert snmp.busy_ticks(linux) == (30, 100)
    assert snmp.busy_ticks(bsd) == (30, 100)
    assert snmp.busy_ticks({"user": 1, "idle": 3}) == (1, 4)  # an agent with the basic objects only


def test_cpu_from_a_gauge_averages_the_polls_after_its_own_averaging_time():
    src = snmp.CPU_SOURCES["cisco"]  # a 5-s average
    samples = [(float(t), {"pct": 5 if t < 5 else 40}) for t in range(0, 30)]
    cpu = snmp.cpu_over_window(src, samples, 3.0, 20.0)
    assert cpu["pct"] == 40.0 and cpu["over_s"] == 12.0  # polls from 8 s on: the average holds only traffic
    assert cpu["between_unix_s"] == [[8.0, 8.0], [20.0, 20.0]]
    hr = snmp.cpu_over_window(snmp.CPU_SOURCES["host-resources"], samples, 3.0, 20.0)
    assert hr["pct"] is None and "60-s averaging" in hr["why"]


def test_each_cpu_source_is_readable_from_its_own_shortest_traffic():
    """Two updates of ucd's 5-s counters; a gauge's averaging time and one poll."""
    src = snmp.CPU_SOURCES
    assert src["ucd"].readable_s(0.5) == snmp.NET_SNMP_READABLE_S == 12.0
    assert src["cisco"].readable_s(0.5) == 5.5
    assert src["juniper"].readable_s(1.0) == 1.0
    assert src["host-resources"].readable_s(1.0) == 61.0


def _observer(cpu_source: str) -> SnmpObserver:
    dut = SnmpDut("dut", SnmpSpec(host="192.0.2.1", poll_interval_s=0.5, counter_refresh_s=0.0), ("t1",))
    return SnmpObserver(dut, {"if_index": {"t1": 1}, "cpu_source": cpu_source})


@pytest.mark.parametrize("cpu_source,traffic_s,polled", [
    ("ucd", 2.0, False), ("ucd", 11.9, False), ("ucd", None, False), ("ucd", 12.0, True),
    ("cisco", 5.0, False), ("cisco", 6.0, True), ("juniper", 0.4, False), ("juniper", 2.0, True)])
def test_the_agent_is_polled_only_in_traffic_its_cpu_source_can_be_read_from(cpu_source, traffic_s, polled):
    """A poll starts Net-SNMP's tools beside the tester's senders: where it
    cannot give the CPU load (a burst, traffic too short) none is made."""
    during = _observer(cpu_source).during(30.0, traffic_s)
    assert isinstance(during, snmp.Poller) is polled


def test_a_trial_too_short_to_poll_says_why_it_has_no_cpu_load(monkeypatch):
    watch = _observer("ucd")
    monkeypatch.setattr(snmp, "read_counters", lambda agent, indexes: {"t1": {"in_ucast_pkts": 5}})
    out = watch.after(watch.before(), None, {"started_at_unix_ns": 0, "traffic_s": 2.0})
    router = out["routers"][0]
    assert router["busy_ratio"] is None and router["cpu_source"] == "ucd"
    assert router["cpu_why"].startswith("not polled in 2.0 s of traffic") and "12 s or more" in router["cpu_why"]


CAMPAIGN = """\
[lab]
file = "lab.toml"
[[test]]
kind = "{kind}"
"""


@pytest.fixture
def lab_dir(tmp_path):
    (tmp_path / "lab.toml").write_text(MINIMAL + '[dut]\nreset_soft = "true"\n')
    return tmp_path


def parse(lab_dir: Path, text: str) -> campaign_spec.Campaign:
    p = lab_dir / "c.toml"
    p.write_text(text)
    return campaign_spec.load(str(p))


def test_a_campaign_finds_its_lab_file_beside_it_and_runs_frame_tests_on_it(lab_dir):
    c = parse(lab_dir, CAMPAIGN.format(kind="throughput"))
    assert isinstance(c.lab.lab_file, external_spec.ExternalSpec) and c.lab.lab_file.link_speed_bps == 25e9
    assert c.lab.topology == "a" and c.lab.lab_kind == "external"
    assert parse(lab_dir, CAMPAIGN.format(kind="reset") + 'kinds = ["soft"]\n').tests[0].kind == "reset"


@pytest.mark.parametrize("text, words", [
    (CAMPAIGN.format(kind="stack-throughput"), "test[0].kind: stack-throughput runs the tester hosts' own kernels"),
    (CAMPAIGN.format(kind="reset"), "test[0].kinds: a hard reset needs the lab file's dut.reset_hard command"),
    (CAMPAIGN.format(kind="throughput").replace("[lab]", "[lab]\ntopology = \"b\""), "lab.topology: an external lab"),
    (CAMPAIGN.format(kind="throughput") + "[dut]\nacl = 1\n", "dut.acl: the DUT of external lab"),
    (CAMPAIGN.format(kind="throughput").replace("lab.toml", "nowhere.toml"), "lab.file: cannot read"),
    (CAMPAIGN.format(kind="throughput").replace('"lab.toml"', "3"), "lab.file: expected a lab file's path"),
])
def test_what_an_external_lab_cannot_do_is_refused_before_anything_runs(lab_dir, text, words):
    with pytest.raises(UsageError) as e:
        parse(lab_dir, text)
    assert words in str(e.value), str(e.value)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "v6bench.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "V6BENCH_RUN_DIR": str(cwd / "run")})


@pytest.mark.parametrize("args, words", [
    (("test", "throughput", "--lab", "missing.toml"), "v6bench: error: --lab: cannot read missing.toml"),
    (("trial", "--lab", "lab.toml", "--topology", "b"), "v6bench: error: --topology: an external lab takes"),
    (("test", "latency", "--lab", "lab.toml", "--acl", "1"), "v6bench: error: --acl: the DUT of external lab"),
    (("lab", "check"), "v6bench: error: --lab: give the external lab file to check"),
    (("lab", "up", "--lab", "lab.toml"), "--lab: v6bench lab takes no such option"),
])
def test_the_command_line_refuses_in_one_line_naming_the_option(lab_dir, args, words):
    r = cli(*args, cwd=lab_dir)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and words in r.stderr, r.stderr


def test_the_engine_spec_of_an_external_lab_opens_only_its_declared_ports(tmp_path):
    """Ports on this machine's own interfaces: the engine is told it may open
    the root namespace (it refuses it otherwise); in a namespace, only that
    one; other addresses only where the file allows them."""
    from v6bench.lab.external.external import ExternalLab, tester_plan
    from v6bench.trial.request import make_request
    from v6bench.trial.spec import engine_spec

    req = make_request("50/50", 256, "1000fps", 1.0, True)
    s = load(tmp_path, MINIMAL)
    spec = engine_spec(ExternalLab(s, tester_plan(s)), req, 1000.0).to_json()
    assert spec["allow_root_netns"] is True and "allow_non_benchmarking_addresses" not in spec
    assert [(p["interface"], p.get("netns"), p["gateway_ipv4"]) for p in spec["ports"]] == [
        ("eth1", None, "198.18.0.1"), ("eth2", None, "198.19.0.1")]
    other = MINIMAL.replace("[lab]", "[lab]\nallow_other_addresses = true").replace(
        'interface = "eth1"', 'interface = "eth1"\nnetns = "tester"\nipv4 = "10.1.0.2/24"\ngateway_ipv4 = "10.1.0.1"'
    ).replace('interface = "eth2"', 'interface = "eth2"\nnetns = "tester"')
    s = load(tmp_path, other)
    spec = engine_spec(ExternalLab(s, tester_plan(s)), req, 1000.0).to_json()
    assert "allow_root_netns" not in spec and spec["netns_prefix"] == "tester"
    assert spec["allow_non_benchmarking_addresses"] is True
    r = subprocess.run([str(local.binary()), "check"], input=json.dumps(spec),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_a_translator_declared_by_its_lab_file_is_sent_to_at_its_own_prefix(tmp_path):
    """``[translation]`` (an external NAT64, RFC 8219 §4): its mode becomes
    the lab's DUT configuration, and translated streams go to t2's IPv4
    address embedded in the file's prefix; IPv4 toward t1 is translated
    only where the file maps an address to t1's; addresses outside the
    benchmarking blocks only where the file allows them."""
    from v6bench.lab.external.external import ExternalLab, tester_plan
    from v6bench.trial.request import make_request
    from v6bench.trial.spec import engine_spec

    text = MINIMAL + '[translation]\nmode = "stateless"\nprefix = "2001:2:0:64::/64"\nmapped_ipv4 = "198.18.9.9"\n'
    s = load(tmp_path, text)
    assert s.translation.to_json() == {"mode": "stateless", "prefix": "2001:2:0:64::/64", "mapped_ipv4": "198.18.9.9"}
    lab = ExternalLab(s, tester_plan(s), dut_config=DutConfig(nat64="stateless"))
    assert lab.translator_addresses.mapped_ipv4 == ipaddress.IPv4Address("198.18.9.9")
    spec = engine_spec(lab, make_request("50/50", 256, "1000fps", 1.0, True), 1000.0)
    by = {(st.tx_port, st.ip_version): st for st in spec.streams}
    # t2's 198.19.0.2 after a /64 prefix: bits 64-71 (the u octet) stay zero (RFC 6052 §2.2).
    assert (by[("t1", 6)].dst_ip, by[("t1", 6)].rx_ip_version) == ("2001:2:0:64:c6:1300:200:0", 4)
    assert (by[("t2", 4)].dst_ip, by[("t2", 4)].rx_ip_version) == ("198.18.9.9", 6)
    unmapped = load(tmp_path, MINIMAL + '[translation]\nmode = "stateless"\n')
    spec = engine_spec(ExternalLab(unmapped, tester_plan(unmapped), dut_config=DutConfig(nat64="stateless")),
                       make_request("50/50", 256, "1000fps", 1.0, True), 1000.0)
    by = {(st.tx_port, st.ip_version): st for st in spec.streams}
    assert by[("t1", 6)].dst_ip == "2001:2:0:6464::c613:2" and by[("t2", 4)].rx_ip_version is None
    for bad, field, words in (('mode = "nat46"', "mode", "not one of stateless, stateful"),
                              ('mode = "stateless"\nprefix = "64:ff9b::/96"', "prefix", "RFC 6052 §3.1"),
                              ('mode = "stateless"\nprefix = "2001:2::/80"', "prefix", "RFC 6052 prefix"),
                              ('mode = "stateful"\nmapped_ipv4 = "198.18.9.9"', "mapped_ipv4", "only a stateless")):
        with pytest.raises(UsageError) as e:
            load(tmp_path, MINIMAL + "[translation]\n" + bad + "\n")
        assert f"translation.{field}: " in str(e.value) and words in str(e.value), str(e.value)
    ok = load(tmp_path, MINIMAL.replace("[lab]", "[lab]\nallow_other_addresses = true") +
              '[translation]\nmode = "stateful"\nprefix = "64:ff9b::/96"\n')
    assert str(ok.translation.addresses.prefix) == "64:ff9b::/96"
