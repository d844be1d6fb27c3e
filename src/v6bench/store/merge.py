"""Runs moved between stores: ``v6bench results import FILE.db`` and
``v6bench results upgrade``.

An import copies another store's finished runs (an SQLite file of schema
version 1 or 2, opened read-only and never written) into this one: each run
with its self-test, tests and trials, under its unique id (``uid``; a
version-1 run's is :func:`.db.derived_uid`). It is idempotent: a run whose
uid the store already holds is skipped, so importing a file twice, or two
files that share a run, stores nothing twice. Each run is copied in one
transaction and checked before it commits: the source passes its own
integrity check first, and the copy's content digest (:func:`digest`:
every test's and trial's stored values) must equal the source's, or
nothing of that run is kept. Runs that did not finish are not imported
(they may still change where they are); they are counted.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import UsageError
from .connection import BUSY_TIMEOUT_S, Duplicate
from .db import TEST_COLUMNS, TRIAL_COLUMNS, SCHEMA_VERSION, Store, _dumps, derived_uid

#: The columns whose values a run's digest covers (ids, which differ between stores, and the
#: run's ``origin``, which an import writes, left out; the ``uid`` is checked on its own).
_RUN_FIELDS = ("name", "campaign_path", "campaign_sha256", "campaign_toml", "command", "status", "started_at_unix_s",
               "finished_at_unix_s", "environment_json", "error")
_SELFTEST_FIELDS = ("created_at_unix_s", "environment_json", "result_json")
_TEST_FIELDS = tuple(c for c in TEST_COLUMNS if c != "run_id")
_TRIAL_FIELDS = tuple(c for c in TRIAL_COLUMNS if c != "test_id")


@dataclass
class Imported:
    """What an import did, run by run (ids in the source → ids here)."""

    source: str
    added: dict[int, int] = field(default_factory=dict)
    already: dict[int, int] = field(default_factory=dict)
    unfinished: list[int] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.added)} run(s) imported" + (" as " + ", ".join(f"{s}→{d}" for s, d in self.added.items())
                                                          if self.added else "")]
        if self.already:
            parts.append(f"{len(self.already)} already here (" + ", ".join(f"{s} is {d}" for s, d in self.already.items())
                         + "), not stored again")
        if self.unfinished:
            parts.append(f"{len(self.unfinished)} unfinished left out ({', '.join(map(str, self.unfinished))})")
        return f"{self.source}: " + "; ".join(parts)


def uid_of(store: Store, run: dict) -> str:
    return run.get("uid") or derived_uid(run)


def digest(store: Store, run_id: int) -> str:
    """A hash of everything a run stored: its row (with the environment
    ``compare`` reads the machine from), its self-test, its tests and
    trials (in their order), which a faithful copy reproduces in any store."""
    h = hashlib.sha256()
    run = store.execute(f"SELECT selftest_id, {', '.join(_RUN_FIELDS)} FROM runs WHERE id=?", (run_id,))[0]
    h.update(_dumps([run[c] for c in _RUN_FIELDS]).encode())
    st = _selftest_row(store, run["selftest_id"])
    h.update(_dumps(st and [st[c] for c in _SELFTEST_FIELDS]).encode())
    for t in store.execute(f"SELECT id, {', '.join(_TEST_FIELDS)} FROM tests WHERE run_id=? ORDER BY id", (run_id,)):
        h.update(_dumps([t[c] for c in _TEST_FIELDS]).encode())
        for x in store.execute(f"SELECT {', '.join(_TRIAL_FIELDS)} FROM trials WHERE test_id=? ORDER BY seq, id", (t["id"],)):
            h.update(_dumps([x[c] for c in _TRIAL_FIELDS]).encode())
    return h.hexdigest()


def _selftest_row(source: Store, selftest_id: int | None) -> dict | None:
    if not selftest_id:
        return None
    rows = source.execute(f"SELECT {', '.join(_SELFTEST_FIELDS)} FROM selftests WHERE id=?", (selftest_id,))
    return dict(rows[0]) if rows else None


def _copy(source: Store, target: Store, run_id: int, uid: str, origin: str) -> int:
    r = source.execute("SELECT * FROM runs WHERE id=?", (run_id,))[0]
    st = _selftest_row(source, r["selftest_id"])
    selftest_id = None
    if st:
        selftest_id = target.conn.insert("INSERT INTO selftests (created_at_unix_s, environment_json, result_json) VALUES (?, ?, ?)",
                                         (st["created_at_unix_s"], st["environment_json"], st["result_json"]))
    new_id = target.conn.insert(
        "INSERT INTO runs (name, campaign_path, campaign_sha256, campaign_toml, command, status, started_at_unix_s,"
        " finished_at_unix_s, environment_json, selftest_id, error, uid, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (r["name"], r["campaign_path"], r["campaign_sha256"], r["campaign_toml"], r["command"], r["status"],
         r["started_at_unix_s"], r["finished_at_unix_s"], r["environment_json"], selftest_id, r["error"], uid, origin))
    test_cols = ", ".join(TEST_COLUMNS)
    trial_cols = ", ".join(TRIAL_COLUMNS)
    for t in source.execute(f"SELECT id, {', '.join(_TEST_FIELDS)} FROM tests WHERE run_id=? ORDER BY id", (run_id,)):
        test_id = target.conn.insert(f"INSERT INTO tests ({test_cols}) VALUES ({', '.join('?' * len(TEST_COLUMNS))})",
                                     (new_id, *(t[c] for c in _TEST_FIELDS)))
        for x in source.execute(f"SELECT {', '.join(_TRIAL_FIELDS)} FROM trials WHERE test_id=? ORDER BY seq, id", (t["id"],)):
            target.conn.insert(f"INSERT INTO trials ({trial_cols}) VALUES ({', '.join('?' * len(TRIAL_COLUMNS))})",
                               (test_id, *(x[c] for c in _TRIAL_FIELDS)))
    return new_id


def import_file(target: Store, path: Path) -> Imported:
    """Imports the finished runs of the SQLite store at ``path`` into ``target`` (module docstring)."""
    if target.path is not None and path.resolve() == target.path.resolve():
        raise UsageError(f"{path} is the store being imported into", "file")
    with Store(path, read_only=True) as source:
        problems = source.conn.integrity()
        if problems:
            raise UsageError(f"{path} fails its integrity check, nothing imported: {'; '.join(problems[:3])}", "file")
        done = Imported(str(path))
        origin = f"imported from {path.resolve()} on {time.strftime('%Y-%m-%d %H:%M:%S %Z')}"
        for r in source.execute("SELECT * FROM runs ORDER BY id"):
            if r["status"] != "finished":
                done.unfinished.append(r["id"])
                continue
            uid = uid_of(source, dict(r))
            here = target.run_by_uid(uid)
            if here is not None:
                done.already[r["id"]] = here
                continue
            want = digest(source, r["id"])
            try:
                with target.transaction():
                    new_id = _copy(source, target, r["id"], uid, f"{origin} (run {r['id']} there)")
                    got = digest(target, new_id)
                    if got != want or target.run(new_id)["uid"] != uid:
                        raise UsageError(f"{path}: run {r['id']} was not copied faithfully (content digest {got[:12]} "
                                         f"against {want[:12]}); nothing of it was kept", "file")
            except Duplicate:  # another import stored it since the look above
                here = target.run_by_uid(uid)
                if here is None:
                    raise
                done.already[r["id"]] = here
                continue
            done.added[r["id"]] = new_id
    return done


def upgrade(path: Path) -> str:
    """Upgrades the SQLite store at ``path`` from schema version 1 to
    :data:`.db.SCHEMA_VERSION` in place, in one transaction: each run gets
    its unique id (:func:`.db.derived_uid`) and the ``origin`` column;
    a file that cannot take it is left as it was."""
    if not path.is_file():
        raise UsageError(f"{path} does not exist", "db")
    with Store(path, read_only=True) as probe:
        if probe.version == SCHEMA_VERSION:
            return f"{path} is already at schema version {SCHEMA_VERSION}"
    try:
        return _upgrade(path)
    except sqlite3.Error as e:
        raise UsageError(f"{path} cannot be upgraded: {e} (nothing was changed)", "db") from None


def _upgrade(path: Path) -> str:
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        db.row_factory = sqlite3.Row
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("ALTER TABLE runs ADD COLUMN uid TEXT")
            db.execute("ALTER TABLE runs ADD COLUMN origin TEXT")
            runs = db.execute("SELECT id, name, command, campaign_sha256, started_at_unix_s FROM runs").fetchall()
            for r in runs:
                db.execute("UPDATE runs SET uid=? WHERE id=?", (derived_uid(dict(r)), r["id"]))
            db.execute("CREATE UNIQUE INDEX runs_by_uid ON runs(uid)")
            db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        db.close()
    return f"{path}: upgraded to schema version {SCHEMA_VERSION} ({len(runs)} run(s) given their unique ids)"

