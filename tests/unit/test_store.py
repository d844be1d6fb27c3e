"""The results store's guarantees on both databases it lives in: an SQLite
file and a PostgreSQL server the tests start themselves
(tests/postgres_server.py): the schema, each trial stored once, kill -9
then resume, two tester machines writing at once, and ``results import``
(idempotent by a run's unique id, integrity checked) and ``results
upgrade`` of a version-1 file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import v6bench
from v6bench.cli import main as cli_main
from v6bench.core.errors import UsageError
from v6bench.store import merge
from v6bench.store.db import SCHEMA_VERSION, Store

WRITER = Path(__file__).parent.parent / "store_writer.py"
#: store_writer.py's campaign: 2 mixes × 3 sizes × 2 repetitions of a throughput search.
TESTS_PER_RUN = 12


#: The child processes import the v6bench this test imported, and the tests' helpers.
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(v6bench.__file__).parent.parent), str(WRITER.parent)])}


def _writer(location: str, name: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WRITER), location, name, *extra], stdout=subprocess.PIPE, text=True,
                            env=CHILD_ENV)


def _finish(p: subprocess.Popen) -> int:
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    return int(out.split("finished ")[1].split()[0])


def _each_trial_once(store: Store, run_id: int) -> None:
    tests = store.tests(run_id)
    assert len(tests) == TESTS_PER_RUN and all(t["status"] == "done" for t in tests)
    assert len({t["point_key"] for t in tests}) == TESTS_PER_RUN  # one row a test
    for t in tests:
        assert [x["seq"] for x in store.trials(t["id"])] == list(range(len(store.trials(t["id"]))))
    assert store.conn.integrity() == []


def test_a_new_store_has_the_schema_and_a_unique_id_per_run(store_location):
    with Store(store_location) as s:
        assert s.execute("SELECT value FROM meta WHERE key='schema_version'")[0][0] == str(SCHEMA_VERSION)
        a = s.start_run("x", "test", {"kernel": "k"}, None)
        b = s.start_run("x", "test", {"kernel": "k"}, None)
        assert s.run(a)["uid"] != s.run(b)["uid"] and len(s.run(a)["uid"]) == 32
        assert s.run_by_uid(s.run(b)["uid"]) == b
        # A value as large as a long trial's frame count, and a float's full precision, come back as written.
        tid = s.start_test(a, "k", "throughput", "100/0", 64, False, 0, {"p": 1})
        s.insert_trial({"test_id": tid, "seq": 0, "call": "measure", "call_args": {}, "recorded_at_unix_s": 1795855512.2209876,
                        "duration_s": 0.1, "intended_fps": 1.0 / 3, "offered_fps": 1.0, "tx_frames": 3 * 2 ** 40,
                        "rx_frames": 1, "lost_frames": 0, "loss_ratio": 0.0, "tester_limited": 0, "streams": [],
                        "extra": {}, "result": None})
        x = s.trials(tid)[0]
        assert x["tx_frames"] == 3 * 2 ** 40 and x["intended_fps"] == 1.0 / 3 and x["recorded_at_unix_s"] == 1795855512.2209876
    with Store(store_location) as s:  # opened again: the same store, nothing re-created
        assert len(s.runs()) == 2


def test_a_run_killed_with_sigkill_resumes_and_stores_each_trial_once(store_location):
    p = _writer(store_location, "killed", "--pause-s", "0.01")
    run_id = int(p.stdout.readline().split()[1])
    deadline = time.monotonic() + 60
    with Store(store_location) as s:
        while time.monotonic() < deadline and s.execute("SELECT COUNT(*) FROM trials")[0][0] < 20:
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        done_before = len(s.done_points(run_id))
        assert s.run(run_id)["status"] == "running" and done_before < TESTS_PER_RUN
    assert _finish(_writer(store_location, "killed", "--resume", str(run_id))) == run_id
    with Store(store_location) as s:
        assert s.run(run_id)["status"] == "finished"
        _each_trial_once(s, run_id)


def test_two_tester_machines_write_one_store_at_once(store_location):
    # Both first writers of an empty store: one makes the schema, the other waits on its lock and finds it.
    a, b = _writer(store_location, "machine-a", "--pause-s", "0.002"), _writer(store_location, "machine-b", "--pause-s", "0.002")
    ra, rb = _finish(a), _finish(b)
    with Store(store_location) as s:
        assert {r["name"] for r in s.runs()} == {"machine-a", "machine-b"} and ra != rb
        for r in (ra, rb):
            _each_trial_once(s, r)


def _cli(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "v6bench.cli", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=CHILD_ENV)


def test_first_writers_of_an_empty_store_at_the_same_moment_all_open_it(store_location):
    """Six processes open one empty store together (each its own ``results list``): every one succeeds and
    the schema is made once. Without the schema's lock this fails with "already exists" on either database."""
    ps = [_cli("results", "list", "--db", store_location) for _ in range(6)]
    outs = [p.communicate(timeout=120) for p in ps]
    assert [p.returncode for p in ps] == [0] * 6, [e for _, e in outs]
    with Store(store_location) as s:
        assert s.execute("SELECT COUNT(*) FROM meta")[0][0] == 1


def test_a_writer_that_finds_the_store_empty_then_made_opens_it(store_location, monkeypatch):
    """The window the lock closes: a writer saw no table, another made the schema, then the first takes
    the lock; it makes nothing and checks the store it finds."""
    from v6bench.store import connection
    Store(store_location).close()
    seen = []
    for kind in (connection.SqliteConnection, connection.PostgresConnection):
        monkeypatch.setattr(kind, "tables", lambda self, real=kind.tables: set() if len(seen) == 0 and not seen.append(1)
                            else real(self))
    with Store(store_location) as s:
        assert s.version == SCHEMA_VERSION and s.execute("SELECT COUNT(*) FROM meta")[0][0] == 1


def test_an_import_that_meets_the_same_run_stored_meanwhile_counts_it_already_there(store_location, tmp_path, monkeypatch):
    """The window between an import's look for the run's uid and its insert: another import stored the run.
    The insert meets the unique id, rolls back all it wrote (the self-test too) and says the run is there."""
    src = tmp_path / "src.db"
    _finish(_writer(str(src), "src"))
    with Store(store_location) as target:
        first = merge.import_file(target, src)
        monkeypatch.setattr(Store, "run_by_uid", lambda self, uid, real=Store.run_by_uid, seen=[]:
                            None if not seen and not seen.append(1) else real(self, uid))
        again = merge.import_file(target, src)
        assert not again.added and again.already == first.added and "1 already here (1 is" in again.summary()
        assert len(target.runs()) == 1 and target.execute("SELECT COUNT(*) FROM selftests")[0][0] == 0


def test_two_imports_of_one_run_at_the_same_moment_leave_one_copy(store_location, tmp_path):
    src = tmp_path / "src.db"
    for name in ("a", "b"):
        _finish(_writer(str(src), name))
    Store(store_location).close()
    ps = [_cli("results", "import", str(src), "--db", store_location) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in ps]
    assert [p.returncode for p in ps] == [0, 0], outs
    assert all("already here" in o or "2 run(s) imported" in o for o, _ in outs), outs
    with Store(store_location) as s, Store(src, read_only=True) as source:
        assert sorted(r["uid"] for r in s.runs()) == sorted(r["uid"] for r in source.runs())
        for r in s.runs():
            _each_trial_once(s, r["id"])
            assert merge.digest(s, r["id"]) == merge.digest(source, source.run_by_uid(r["uid"]))


def test_the_import_digest_covers_the_run_row_and_its_environment(tmp_path):
    src = tmp_path / "src.db"
    _finish(_writer(str(src), "src"))
    with Store(src) as s:
        before = merge.digest(s, 1)
        env = s.run(1)["environment"]
        s.set_environment(1, {**env, "cpu_model": "another"})
        assert merge.digest(s, 1) != before
        s.set_environment(1, env)
        assert merge.digest(s, 1) == before
        s.execute("UPDATE runs SET command='x' WHERE id=1")
        assert merge.digest(s, 1) != before


def _v1_file(path: Path) -> None:
    """Turns an SQLite store into one of schema version 1 (as v6bench wrote before runs had a unique id)."""
    db = sqlite3.connect(path)
    db.executescript("DROP INDEX runs_by_uid; ALTER TABLE runs DROP COLUMN uid; ALTER TABLE runs DROP COLUMN origin;"
                     "UPDATE meta SET value='1' WHERE key='schema_version';")
    db.commit()
    db.close()


def test_import_merges_runs_once_checks_integrity_and_reads_version_1(store_location, tmp_path):
    src = tmp_path / "other-machine.db"
    _finish(_writer(str(src), "elsewhere"))
    _finish(_writer(str(src), "elsewhere-2"))
    with Store(src) as s:
        uids = [r["uid"] for r in s.runs()]
        s.execute("UPDATE runs SET status='interrupted' WHERE id=2")
    old = tmp_path / "old.db"
    _finish(_writer(str(old), "old"))
    _v1_file(old)
    os.chmod(old, 0o444)  # read, never written (as a file in shared/)
    with Store(store_location) as target:
        got = merge.import_file(target, src)
        assert list(got.added) == [1] and got.unfinished == [2]
        again = merge.import_file(target, src)
        assert not again.added and list(again.already) == [1]  # idempotent by the run's uid
        new_id = got.added[1]
        assert target.run(new_id)["uid"] == uids[0] and "imported from" in target.run(new_id)["origin"]
        _each_trial_once(target, new_id)
        with Store(src, read_only=True) as source:
            assert merge.digest(source, 1) == merge.digest(target, new_id)
        v1 = merge.import_file(target, old)
        v1_id = v1.added[1]
        assert target.run(v1_id)["uid"].startswith("v1-")
        assert not merge.import_file(target, old).added
        assert len(target.runs()) == 2
    # The version-1 file upgraded in place gives its run the same uid: importing it after the upgrade stores nothing new.
    os.chmod(old, 0o644)
    with pytest.raises(UsageError, match="schema version 1.*results upgrade"):
        Store(old)
    half = tmp_path / "half.db"  # a version-1 file that has a uid column already (edited by hand): left as it was
    half.write_bytes(old.read_bytes())
    db = sqlite3.connect(half)
    db.execute("ALTER TABLE runs ADD COLUMN uid TEXT")
    db.commit()
    db.close()
    with pytest.raises(UsageError, match="cannot be upgraded: duplicate column name: uid .nothing was changed"):
        merge.upgrade(half)
    assert sqlite3.connect(half).execute("SELECT value FROM meta").fetchone()[0] == "1"
    assert "upgraded to schema version 2" in merge.upgrade(old)
    assert "already at schema version 2" in merge.upgrade(old)
    with Store(old) as s, Store(store_location) as target:
        assert s.runs()[0]["uid"] == target.run(v1_id)["uid"]
        assert not merge.import_file(target, old).added


def test_an_import_that_would_not_copy_faithfully_keeps_nothing(store_location, tmp_path, monkeypatch):
    src = tmp_path / "src.db"
    _finish(_writer(str(src), "src"))
    real = merge.digest
    monkeypatch.setattr(merge, "digest", lambda store, run_id: real(store, run_id) + ("x" if store.path != src else ""))
    with Store(store_location) as target:
        with pytest.raises(UsageError, match="not copied faithfully"):
            merge.import_file(target, src)
        assert target.runs() == [] and target.execute("SELECT COUNT(*) FROM trials")[0][0] == 0


def test_the_command_line_names_a_store_by_url_or_environment(store_location, tmp_path, capsys, monkeypatch):
    src = tmp_path / "src.db"
    _finish(_writer(str(src), "src"))
    monkeypatch.setenv("V6BENCH_DB", store_location)
    from v6bench.cli import parser
    assert parser().parse_args(["results", "list"]).db == store_location
    assert cli_main(["results", "import", str(src), "--db", store_location]) == 0
    assert "1 run(s) imported" in capsys.readouterr().out
    assert cli_main(["results", "list", "--db", store_location, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in listed] == ["src"] and listed[0]["uid"] and "environment" not in listed[0]
    assert listed[0]["machine"] == "CPU not recorded, ? CPUs"  # the writer's environment records none


def test_a_server_that_cannot_be_reached_is_one_line_without_the_password(capsys):
    status = cli_main(["results", "list", "--db", "postgresql://u:secret@/nodb?host=/nonexistent-v6b&port=1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "cannot connect to postgresql://u:***@" in err[0] and "secret" not in err[0]


def test_results_list_shows_the_time_a_run_ran_its_sessions_summed():
    """gamess-forwarding's run 9 ran in three sessions from 11:29 to 14:26; it ran 90.9 min, which its record
    holds (``time_s.wall``) and ``results list`` shows, where finished − started says 177."""
    from v6bench.cli import render
    from v6bench.report import results as results_text
    row = {"id": 9, "name": "gamess-forwarding", "status": "finished", "started_at_unix_s": 0.0,
           "finished_at_unix_s": 177 * 60.0, "origin": None, "tests_done": 252, "trials": 530,
           "environment": {"time_s": {"wall": 5455.8}}}
    old = {**row, "id": 1, "environment": {}}
    lines = results_text.runs_table([row, old]).splitlines()
    assert lines[0].endswith("wall [min]") and lines[1].endswith(" 90.9") and lines[2].endswith(" -")
    assert [r["wall_s"] for r in render.runs_json([row, old])] == [5455.8, None]
