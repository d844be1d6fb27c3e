"""Bad input (issue 18), by property: any campaign document and any
command line of ``v6bench test KIND`` / ``trial`` / ``lab up`` / ``run FILE`` is either
refused with one line naming the field and exit 2, before any lab is
built, or accepted; and an accepted campaign runs to its end on the
simulated tester (``methods/simulated.py``), so that nothing a check
could have found fails it later.

The documents are a valid campaign with one to four random changes: a key
of any table set to a random value (a plausible one or any TOML scalar,
list or table) or removed, or an unknown key added. The command lines are
a kind's own options with random values, and options of other kinds.
"""

from __future__ import annotations

import copy
import json
import math
import re

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st
from properties import cases, property_test

from v6bench import cli
from v6bench.campaign import plan, runner, spec
from v6bench.core.errors import UsageError
from v6bench.core.rates import line_rate_fps
from v6bench.methods import registry
from v6bench.methods.simulated import SimulatedTester
from v6bench.store.db import Store

BASE = {
    "name": "t",
    "lab": {"topology": "a", "link_speed": "1G"},
    "matrix": {"mixes": ["100/0", "0/100"], "frame_sizes": [128], "repeat": 1, "drain_s": 0},
    "test": [{"kind": "throughput", "trial_duration_s": 1.0, "resolution": 0.05},
             {"kind": "latency", "loads": ["50%"], "trial_duration_s": 1.0, "repeat": 1}],
}

#: Where a change goes, and the keys that are there (known to the campaign's rules) besides random ones.
TABLES = {
    (): ("name", "description", "lab", "dut", "selftest", "matrix", "test", "scenario", "design"),
    ("lab",): ("topology", "link_speed", "mtu", "cpu_arrangement"),
    ("dut",): ("limit_fps", "acl", "acl_at", "acl_udp_only", "nat44", "tunnel", "shape"),
    ("matrix",): spec.MATRIX_KEYS,
    ("design",): ("order", "seed"),
    ("test", 0): ("kind", *spec.MATRIX_KEYS, *spec.TEST_KEYS, "trial_duration_s", "resolution", "loads", "frames"),
    ("test", 1): ("kind", *spec.MATRIX_KEYS, *spec.TEST_KEYS, "trial_duration_s", "loads", "payload_sizes", "pattern"),
}
PLAUSIBLE = ["a", "b", "p2p", "mesh:4", "chain:3", "chain:9", "100/0", "0/100", "50/50", "90/10", "1G", "100M", "10G",
             *registry.KINDS, "uni", "bi", "far", "dut", "dst20", "srh", "hbh8", "4in6", "6in4", "in", "out", "both",
             "soft", "hard", "throughput", "50%", "110%", "1000", "all=1280", "r1-r2=500", "split", "inline",
             "random", "file", 84, 128, 1518, 9000, 9217, 64, 0, 1, 5, 1000, 0.5, 2.0, True, False,
             ["100/0"], ["0/100"], ["uni", "bi"], [128, 1518], [84], [4000], ["throughput"], ["x"], [], {}]
SCALARS = st.one_of(st.integers(-2, 2 ** 63 - 1), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    st.text(max_size=6))
VALUES = st.one_of(st.sampled_from(PLAUSIBLE), SCALARS, st.lists(SCALARS, max_size=3),
                   st.dictionaries(st.sampled_from(["kind", "x", "mixes", "name"]), SCALARS, max_size=2))
DELETE = object()
#: What the simulated tester measures (no mesh, no hosts' own stacks).
SIMULATED_KINDS = {"throughput", "loss", "latency", "back-to-back", "recovery", "reset"}


@st.composite
def CHANGE(draw) -> tuple:
    """A change: mostly a key the table knows set to a plausible value."""
    where = draw(st.sampled_from(sorted(TABLES, key=str)))
    key = draw(st.sampled_from(TABLES[where]) if draw(st.integers(0, 4)) else st.text(min_size=1, max_size=5))
    pick = draw(st.integers(0, 2))
    if pick == 0 and key in FITTING:
        value = draw(st.sampled_from(FITTING[key]))
    else:
        value = draw(st.sampled_from(PLAUSIBLE) if pick < 2 else st.one_of(VALUES, st.just(DELETE)))
    return where, key, value


#: Values that fit a key (so that more changed documents are accepted and run).
FITTING = {"topology": ["a", "b", "p2p", "chain:2", "mesh:3"], "link_speed": ["1G", "100M", "10G"],
           "mtu": [1500, 9000, 1280, "r1-r2=1280"], "cpu_arrangement": ["split", "inline"], "limit_fps": [10_000, 40_000],
           "acl": [1, 25], "acl_at": ["in", "out", "both"], "acl_udp_only": [True, False], "nat44": [True, False],
           "tunnel": ["4in6", "6in4"], "shape": [True, False], "mixes": [["100/0"], ["0/100"], ["90/10", "10/90"]],
           "frame_sizes": [[84], [128, 1518], [1280]], "directions": [["uni"], ["bi"], ["uni", "bi"]], "repeat": [1, 2],
           "drain_s": [0, 0.5], "kind": sorted(SIMULATED_KINDS), "trial_duration_s": [0.5, 1.0], "resolution": [0.01, 0.1],
           "loads": [["50%"], ["throughput"], ["10%", "90%"]], "frames": [[100], [1000]], "ext_headers": ["dst20", "srh"],
           "icmp_echo": ["far", "dut"], "order": ["random", "file"], "seed": [0, 7], "blocks": [1, 2]}


def changed(changes: list) -> dict:
    """BASE with ``changes`` made, in order; a change under a table a
    previous change replaced by a non-table is dropped."""
    d = json.loads(json.dumps(BASE))
    for where, key, value in changes:
        table = d
        for part in where:
            if isinstance(table, dict):
                table = table.setdefault(part, {}) if isinstance(part, str) else table
            elif isinstance(table, list) and isinstance(part, int) and part < len(table):
                table = table[part]
            else:
                table = None
        if not isinstance(table, dict):
            continue
        if value is DELETE:
            table.pop(key, None)
        else:
            table[key] = copy.deepcopy(value)  # a fresh copy: PLAUSIBLE's tables and lists are shared by every example
    return d


def toml(d: dict) -> str:
    """``d`` as TOML: one line per key, tables inline (TOML 1.0)."""
    def v(x) -> str:
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, float):
            return repr(x) if math.isfinite(x) and "e" not in repr(x) else json.dumps(x).replace("e+", "e")
        if isinstance(x, (int, str)):
            return json.dumps(x)
        if isinstance(x, list):
            return "[" + ", ".join(v(y) for y in x) + "]"
        return "{" + ", ".join(f"{json.dumps(k)} = {v(y)}" for k, y in x.items()) + "}"
    return "".join(f"{json.dumps(k)} = {v(x)}\n" for k, x in d.items())


def run_on_simulation(c: spec.Campaign, tmp_path) -> None:
    """Runs every test of ``c`` on the simulated tester: no error may come."""
    with Store(tmp_path / "sim.db") as store:
        run_id = store.start_run(c.name, "test", {}, None, c.path, c.sha256, c.text)

        def make(p: plan.ScheduledTest) -> SimulatedTester:
            link_bps = next(sc.lab.link_speed_bps for sc in c.scenarios if sc.name == p.scenario)
            return SimulatedTester(50_000, line_fps=line_rate_fps(link_bps, p.frame_size), seed=1)

        runner.run_points(c, store, run_id, make, lambda s: None)
    (tmp_path / "sim.db").unlink()





def runnable(c: spec.Campaign) -> bool:
    return all(t.kind in SIMULATED_KINDS for t in c.tests) and len(plan.expand(c)) <= 24


@property_test
@cases(300)
@given(changes=st.lists(CHANGE(), min_size=1, max_size=4))
# Cases that once failed, kept: `kind = []` (a TypeError), a key holding a newline (a two-line error).
@example(changes=[(("test", 0), "kind", [])])
@example(changes=[((), "a\nb", 1)])
@example(changes=[(("lab",), "x\u001e", True)])
# make fuzz found: a table from PLAUSIBLE put in the document, then changed by a later change, was PLAUSIBLE's own
# object, so examples changed each other's values until one held itself (a RecursionError in toml()).
@example(changes=[((), "design", {}), (("design",), "x", 1), (("design",), "y", {})])
def test_any_campaign_document_is_refused_naming_a_field_or_runs_to_its_end(tmp_path, changes):
    d = changed(changes)
    text = toml(d)
    try:
        c = spec.parse_campaign(text, "t.toml")
    except UsageError as e:
        line = str(e)
        assert line.startswith("t.toml: ") and "\n" not in line, line
        assert e.exit_status == 2
        # The field, as the rules named it, is the document's (not an option's, not a Python name).
        try:
            spec.from_dict(d, text, "t.toml")
        except UsageError as inner:
            assert inner.field, f"no field named: {inner}"
            assert not str(inner).startswith("--"), str(inner)
        event("refused")
        return
    event("accepted, run on the simulation" if runnable(c) else "accepted (not simulated)")
    if runnable(c):
        run_on_simulation(c, tmp_path)


@pytest.fixture
def no_lab(monkeypatch, tmp_path):
    """A command line that is accepted stops where the lab would be used,
    with the campaign it made; nothing is built."""
    monkeypatch.setenv("V6BENCH_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("V6BENCH_SELFTEST", "never")
    monkeypatch.chdir(tmp_path)  # a drawn `--db NAME` makes its file here, not in the checkout (make fuzz left two)
    seen: list = []

    class Reached(Exception):
        pass

    def reached(site, c, *a, **k):
        seen.append(c)
        raise Reached()

    def trial_reached(site, spec, dut, apply=True):
        seen.append(None)  # a trial is checked again on the lab it gets (trial/fit.py); not simulated here
        raise Reached()

    def up_reached(*a, **k):
        seen.append(None)
        raise Reached()

    from v6bench.cli import test
    from v6bench.lab import interface
    monkeypatch.setattr(interface, "for_trial", trial_reached)
    monkeypatch.setattr(interface, "status", lambda site: (None, False))
    monkeypatch.setattr(interface, "up", up_reached)
    monkeypatch.setattr(test.runner, "run", reached)
    return seen, Reached


def main(argv: list[str], capsys, reached) -> tuple[int | str, list[str]]:
    """``v6bench ARGV``: its status (``"accepted"`` if it reached the run) and stderr's lines."""
    try:
        status = cli.main(argv)
    except SystemExit as e:
        status = e.code
    except reached:
        status = "accepted"
    return status, capsys.readouterr().err.strip().splitlines()


def _parsers() -> dict[str, object]:
    """The parser of ``test KIND`` per kind, ``trial``'s and ``lab up``'s (as "trial", "lab up")."""
    top = cli._subparsers(cli.parser())
    return {**cli._subparsers(top["test"]), "trial": top["trial"], "lab up": cli._subparsers(top["lab"])["up"]}


PARSERS = _parsers()


def _flags() -> dict[str, list[str]]:
    return {name: sorted(f for f in kp._option_string_actions if f.startswith("--") and f not in ("--help", "--json"))
            for name, kp in PARSERS.items()}


FLAGS = _flags()
ALL_FLAGS = sorted({f for fs in FLAGS.values() for f in fs})
TOKENS = st.one_of(st.sampled_from([str(x) for x in PLAUSIBLE if not isinstance(x, (list, dict))] +
                                   ["128,1518", "100/0,0/100", "8,mtu", "mtu", "4000", "", ",", "-1", "1e9", "nan", "inf",
                                    "banana", "50%,throughput", "0.001", "3601"]),
                   st.text(alphabet="0123456789,./%:=abcx-", max_size=8))


#: Values an option is likely to be given (half of the values drawn come from here, where the option is).
GOOD = {"--mix": ["100/0", "0/100", "90/10", "100/0,0/100"], "--frame-size": ["84", "128", "1518", "128,256", "9000"],
        "--duration": ["1", "0.5", "2"], "--loads": ["50%", "throughput", "10%,90%", "20kpps"],
        "--topology": ["a", "b", "p2p", "chain:2", "mesh:3"], "--mtu": ["1500", "9000", "r1-r2=1280", "1280"],
        "--repeat": ["1", "2"], "--link-speed": ["1G", "100M"], "--rate": ["50%", "1000"], "--drain": ["0", "1"],
        "--payload-size": ["8,64", "mtu", "1480", "1460"], "--pattern": ["full", "pairs"], "--dut-limit": ["10000"],
        "--resolution": ["0.01", "0.1"], "--hold-s": ["1"], "--overload-s": ["1"], "--reset-at-s": ["1", "2"],
        "--message-size": ["128", "1400"], "--protocol": ["udp", "tcp"], "--kinds": ["soft", "hard", "soft,hard"]}


@st.composite
def command_lines(draw) -> list[str]:
    kind = draw(st.sampled_from(sorted(FLAGS)))
    argv = kind.split() if kind in ("trial", "lab up") else ["test", kind]
    parser = PARSERS[kind]
    for _ in range(draw(st.integers(0, 3))):
        flag = draw(st.sampled_from(FLAGS[kind]) if draw(st.integers(0, 9)) else st.sampled_from(ALL_FLAGS))
        argv.append(flag)
        action = parser._option_string_actions.get(flag)
        good = list(action.choices or []) if action is not None else []
        good += GOOD.get(flag, [])
        if action is not None and action.nargs == 0 and draw(st.integers(0, 9)):
            continue  # a switch, mostly alone
        argv.append(draw(st.sampled_from(good)) if good and draw(st.booleans()) else draw(TOKENS))
    return argv


@property_test
@cases(300)
@given(argv=command_lines())
# Cases that once failed, kept (docs/robustness.md): an option with punctuation named unreadably ('-b:: …', a fresh
# clone's make test), a value after a switch read as an unknown option, mesh off a mesh topology said "not a".
@example(argv=["test", "rr-latency", "--shape", "-b:"])
@example(argv=["test", "throughput", "--nat44", "a"])
@example(argv=["test", "mesh", "--mix", "100/0"])
@example(argv=["test", "latency", "--loads", "banana"])
@example(argv=["test", "latency", "--resolution", "0.01", "--loads", "50%"])  # the options of one field: --search/--resolution/…
def test_any_test_command_line_is_refused_in_one_line_or_runs_to_its_end(no_lab, capsys, tmp_path, argv):
    seen, reached = no_lab
    db = ["--db", str(tmp_path / "r.db")] if argv[0] == "test" else []  # trial and lab up keep no results
    status, err = main([*argv, *db], capsys, reached)
    if status == "accepted":
        c = seen.pop()
        event("accepted, run on the simulation" if c and runnable(c) else "accepted (not simulated)")
        if c and runnable(c):
            run_on_simulation(c, tmp_path)
        return
    event("refused")
    assert status == 2 and len(err) == 1, (argv, status, err)
    assert err[0].startswith(("v6bench: error: ", "v6bench test: error: ", f"v6bench {' '.join(argv[:2])}: error: ",
                              "v6bench trial: error: ", "v6bench lab: error: ")), err
    # A refusal names what is at fault: an option (or KIND), or the value argparse could not read.
    # An option is named bare (several that set one field joined by "/"), anything else (a value, an option-like word
    # with punctuation) quoted as typed.
    assert re.match(r"""v6bench: error: (--?[A-Za-z0-9-]+(/--?[A-Za-z0-9-]+)*|KIND|'[^']*'|"[^"]*"): """, err[0]) \
        or "argument" in err[0], err


@property_test
@cases(150)
@given(changes=st.lists(CHANGE(), min_size=1, max_size=4))
@example(changes=[(("test", 0), "kind", [])])
def test_any_campaign_file_is_refused_by_run_in_one_line_before_any_lab(no_lab, capsys, tmp_path, changes):
    seen, reached = no_lab
    f = tmp_path / "c.toml"
    f.write_text(toml(changed(changes)))
    status, err = main(["run", str(f), "--db", str(tmp_path / "r.db")], capsys, reached)
    if status == "accepted":
        seen.pop()
        return
    assert status == 2 and len(err) == 1 and err[0].startswith("v6bench: error: c.toml: "), err


@pytest.mark.parametrize("text, message", [
    ('name = "x"\ntest = [1]\n', "c.toml: test[0]: expected a [[test]] table"),
    ('name = "x"\nscenario = [1]\n[[test]]\nkind = "throughput"\n', "c.toml: scenario[0]: expected a [[scenario]] table"),
    ('[[test]]\nkind = "latency"\nloads = ["banana"]\n', "c.toml: test[0].loads: 'banana' is not a rate"),
    ('[[test]]\nkind = "rr-latency"\npayload_sizes = [4000]\n',
     "c.toml: test[0].payload_sizes: 4000 bytes do not fit the path: IPv4 carries at most 1480 bytes"),
])
def test_the_examples_of_issue_18_are_one_line(no_lab, capsys, tmp_path, text, message):
    seen, reached = no_lab
    f = tmp_path / "c.toml"
    f.write_text(text)
    status, err = main(["run", str(f), "--db", str(tmp_path / "r.db")], capsys, reached)
    assert status == 2 and len(err) == 1 and err[0].startswith(f"v6bench: error: {message}"), err


def test_a_database_path_that_cannot_hold_one_is_one_line(no_lab, capsys, tmp_path):
    seen, reached = no_lab
    (tmp_path / "text").write_text("hello\n")
    import sqlite3
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE a (x)").connection.commit()
    for db, why in [(tmp_path / "text", "is not an SQLite database"), (tmp_path, "is a directory"),
                    ("/dev/null/x.db", "/dev/null is not a directory"),
                    (tmp_path / "other.db", "is an SQLite database but not a v6bench results database")]:
        for argv in (["results", "list", "--db", str(db)], ["test", "loss", "--db", str(db)]):
            status, err = main(argv, capsys, reached)
            assert status == 2 and len(err) == 1 and err[0].startswith("v6bench: error: --db: ") and why in err[0], err
    assert (tmp_path / "text").read_text() == "hello\n", "a file that is not a database is left as it was"
    with sqlite3.connect(tmp_path / "other.db") as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete", "another application's database: untouched"


def test_the_lab_lock_is_held_once_per_process_and_refuses_another(tmp_path, monkeypatch):
    """A run holds the lab lock from start to end and takes it again for
    each lab and self-test (nested: it just runs); another process is
    refused naming the holder; an unusable lock directory is one line."""
    import subprocess
    import sys
    from v6bench.core.errors import LabError
    from v6bench.lab.machine import lock
    from v6bench.lab.model.site import Site
    monkeypatch.setenv("V6BENCH_RUN_DIR", str(tmp_path / "run"))
    site = Site.from_env()
    other = ("import sys; from v6bench.lab.machine import lock; from v6bench.lab.model.site import Site\n"
             "try:\n    with lock.locked(Site.from_env(), 'other'): print('took it')\n"
             "except Exception as e: print(type(e).__name__, e)")
    with lock.locked(site, "run x"):
        with lock.locked(site, "trial"):
            assert lock.is_locked(site)
        out = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=60).stdout
        assert out.startswith("LabError the lab is busy: pid") and "(run x)" in out, out
    out = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "took it"
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("V6BENCH_RUN_DIR", str(tmp_path / "file" / "run"))
    with pytest.raises(LabError, match="cannot take the lab lock"):
        with lock.locked(Site.from_env(), "x"):
            pass


@pytest.mark.parametrize("argv, line", [
    (["test", "rr-latency", "--shape", "-b:"], "v6bench: error: '-b:': v6bench test rr-latency takes no such option"),
    (["test", "throughput", "--frobnicate"], "v6bench: error: --frobnicate: v6bench test throughput takes no such option"),
    (["test", "throughput", "--hold-s=1"],
     "v6bench: error: '--hold-s=1': v6bench test throughput takes no such option (it is an option of recovery)"),
    (["trial", "-x,"], "v6bench: error: '-x,': v6bench trial takes no such option"),
])
def test_an_unknown_option_is_named_bare_or_quoted_as_typed(no_lab, capsys, argv, line):
    """An option name is named bare; a word with punctuation quoted as
    typed, so the ``: `` after it reads as the message's (a fresh clone's
    ``-b:: …``)."""
    seen, reached = no_lab
    assert main(argv, capsys, reached) == (2, [line])
