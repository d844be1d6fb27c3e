"""One route for test definitions (issue 17): ``v6bench trial``, ``v6bench
test`` and campaign files refuse the same inputs with the same rule, each
naming the field its own way (``--mix`` / ``test[0].mixes[1]``), before
any lab is built; an option that does not apply to a test kind does not
exist for it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from v6bench import cli
from v6bench.campaign import spec
from v6bench.cli import options
from v6bench.core.errors import UsageError
from v6bench.methods import registry

SRC = Path(__file__).resolve().parents[2] / "src" / "v6bench"


@pytest.fixture(autouse=True)
def no_lab(monkeypatch, tmp_path):
    """Nothing here may build a lab or run a campaign: bad input stops first."""
    monkeypatch.setenv("V6BENCH_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("V6BENCH_SELFTEST", "never")

    def refuse(*a, **k):
        raise AssertionError("bad input reached the lab")

    from v6bench.cli import test
    from v6bench.lab import interface
    monkeypatch.setattr(interface, "for_trial", refuse)
    monkeypatch.setattr(interface, "up", refuse)
    monkeypatch.setattr(test.runner, "run", refuse)


def cli_error(capsys, *argv: str) -> str:
    """The one line ``v6bench ARGV`` prints, exiting 2."""
    try:
        status = cli.main(list(argv))
    except SystemExit as e:
        status = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    return err[0]


FILE = """name = "t"
[lab]
topology = "{topology}"
[dut]
{dut}
[[test]]
kind = "{kind}"
mixes = [{mixes}]
frame_sizes = [{size}]
directions = ["{direction}"]
{extra}
"""


def file_error(topology="a", dut="", kind="latency", mixes='"100/0", "0/100"', size=128, direction="uni", extra="") -> str:
    text = FILE.format(topology=topology, dut=dut, kind=kind, mixes=mixes, size=size, direction=direction, extra=extra)
    with pytest.raises(UsageError) as e:
        spec.parse_campaign(text, "t.toml")
    return str(e.value)


# (trial options, test options, file keys, the rule's message): each rule refused by all three front ends.
RULES = [
    (["--mix", "0/100", "--frame-size", "80"], ["latency", "--mix", "0/100", "--frame-size", "80"], {"size": 80, "mixes": '"0/100"'},
     "--frame-size", "test[0].frame_sizes[0]", "80 bytes is outside 84..9216 for IPv6"),
    (["--icmp-echo", "far", "--bidirectional"], ["latency", "--icmp-echo", "far", "--bidirectional"],
     {"direction": "bi", "extra": 'icmp_echo = "far"'}, "--icmp-echo", "test[0].icmp_echo", "already two-way"),
    (["--icmp-echo", "dut", "--topology", "p2p"], ["latency", "--icmp-echo", "dut", "--topology", "p2p"],
     {"topology": "p2p", "extra": 'icmp_echo = "dut"'}, "--icmp-echo", "test[0].icmp_echo", "p2p has no router"),
    (["--ext-headers", "srh", "--mix", "0/100", "--topology", "p2p"], ["latency", "--ext-headers", "srh", "--mix", "0/100",
     "--topology", "p2p"], {"topology": "p2p", "mixes": '"0/100"', "extra": 'ext_headers = "srh"'}, "--ext-headers",
     "test[0].ext_headers", "srh: needs a router"),
    (["--ext-headers", "dst20", "--mix", "0/100", "--frame-size", "128"], ["latency", "--ext-headers", "dst20", "--mix",
     "0/100"], {"mixes": '"0/100"', "extra": 'ext_headers = "dst20"'}, "--ext-headers", "test[0].ext_headers", "needs frames of at least 244"),
    (["--tunnel", "6in4"], ["throughput", "--tunnel", "6in4"], {"dut": 'tunnel = "6in4"', "kind": "throughput"},
     "--tunnel", "dut.tunnel", "6in4 runs between R1 and R2: it needs topology b"),
    (["--acl-at", "out"], ["throughput", "--acl-at", "out"], {"dut": 'acl_at = "out"', "kind": "throughput"},
     "--acl-at", "dut.acl_at", "needs an ACL"),
    (["--mix", "90/20"], ["throughput", "--mix", "100/0,90/20"], {"mixes": '"100/0", "90/20"', "kind": "throughput"},
     "--mix", "test[0].mixes[1]", "the shares sum to 110"),
    (["--frame-size", "2000", "--icmp-echo", "far"], ["latency", "--frame-size", "2000", "--icmp-echo", "far"],
     {"size": 2000, "extra": 'icmp_echo = "far"'}, "--icmp-echo", "test[0].icmp_echo", "echo frames are sent whole"),
]


@pytest.mark.parametrize("trial_args,test_args,file_keys,flag,path,message", RULES)
def test_each_rule_is_enforced_once_for_every_front_end(capsys, trial_args, test_args, file_keys, flag, path, message):
    line = cli_error(capsys, "trial", *trial_args)
    assert line.startswith(f"v6bench: error: {flag}: ") and message in line, line
    line = cli_error(capsys, "test", *test_args)
    assert line.startswith(f"v6bench: error: {flag}: ") and message in line, line
    error = file_error(**file_keys)
    assert error.startswith(f"t.toml: {path}: ") and message in error, error


def test_lab_up_takes_the_same_lab_and_dut_rules(capsys):
    assert "--tunnel: 4in6 runs between R1 and R2" in cli_error(capsys, "lab", "up", "--tunnel", "4in6")
    assert "--acl: not with the 4in6 tunnel" in cli_error(capsys, "lab", "up", "--topology", "b", "--tunnel", "4in6",
                                                          "--acl", "1")
    assert "--mtu: this topology has no link r1-r2" in cli_error(capsys, "lab", "up", "--mtu", "r1-r2=500")


@pytest.mark.parametrize("kind,option", [("mesh", "--search"), ("throughput", "--loads"), ("loss", "--search"),
                                         ("mesh", "--bidirectional"), ("stack-throughput", "--drain"),
                                         ("rr-latency", "--frame-size"), ("reset", "--pattern"),
                                         ("stack-throughput", "--selftest")])
def test_an_option_a_kind_does_not_take_is_refused_before_anything_runs(capsys, kind, option):
    line = cli_error(capsys, "test", kind, option, "1")
    assert line.startswith(f"v6bench: error: {option}: v6bench test {kind} takes no such option"), line


def test_a_search_where_none_runs_is_refused_in_a_file_and_on_the_command_line(capsys):
    line = cli_error(capsys, "test", "latency", "--loads", "50%", "--search", "mlr")
    assert "latency with these parameters runs no throughput search" in line and line.startswith("v6bench: error: --search")
    for kind, extra in (("throughput", ""), ("latency", 'loads = ["50%"]')):
        error = file_error(kind=kind, extra=f'{extra}\n[test.throughput_search]\nsearch = "mlr"')
        assert error.startswith("t.toml: test[0].throughput_search: ") and "runs no throughput search" in error
    # Where the test does start from a search, the search's options are taken.
    assert spec.parse_campaign(FILE.format(topology="a", dut="", kind="latency", mixes='"0/100"', size=128,
                                           direction="uni", extra='[test.throughput_search]\nsearch = "mlr"'),
                               "t.toml").tests[0].throughput_search.search == "mlr"


def test_host_stack_tests_refuse_frame_keys_in_a_file():
    text = 'name = "t"\n[[test]]\nkind = "rr-latency"\nmixes = ["100/0"]\ndrain_s = 1\n'
    with pytest.raises(UsageError, match=r"t\.toml: test\[0\]\.drain_s: rr-latency sends no test frames"):
        spec.parse_campaign(text, "t.toml")


def test_latency_loads_are_rates_or_throughput(capsys):
    assert "--loads: 'banana' is not a rate" in cli_error(capsys, "test", "latency", "--loads", "50%,banana")
    assert file_error(extra='loads = ["banana"]').startswith("t.toml: test[0].loads: 'banana' is not a rate")


def test_every_kind_takes_an_option_for_each_of_its_parameters_and_no_other():
    parsers = cli._subparsers(cli._subparsers(cli.parser())["test"])
    every = {options.param_option(k.name, f.name).flag for k in registry.KINDS.values()
             for f in dataclasses.fields(k.params) if f.name not in options.NO_OPTION}
    for k in registry.KINDS.values():
        flags = set(parsers[k.name]._option_string_actions)
        own = {options.param_option(k.name, f.name).flag for f in dataclasses.fields(k.params) if f.name not in options.NO_OPTION}
        search = {options.PARAMS[n].flag for n in options.SEARCH} if isinstance(k, registry.Kind) and k.searches else set()
        assert own <= flags, (k.name, own - flags)
        assert not (every - own - search) & flags - {"--rate"}, (k.name, (every - own - search) & flags)


def test_library_errors_name_fields_not_command_line_options():
    """Options are the command line's (cli/options.py); the library names fields."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if "cli" in path.relative_to(SRC).parts:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"Error\(f?\"--", line) or "removeprefix('--" in line or 'removeprefix("--' in line:
                offenders.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    assert not offenders, offenders
