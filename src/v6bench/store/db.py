"""The results database: SQLite, one file (default ``results/v6bench.db``).

Schema version 1 (``docs/results-format.md``): ``runs`` ← ``tests`` ←
``trials``, and ``selftests``. Every trial is written in its own
transaction the moment it ends (WAL journal), so a kill at any moment
loses at most the trial in flight; a test's result and a run's status are
written the same way. Opening a database of another schema version is an
error, never a silent migration.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from ..core.errors import UsageError

SCHEMA_VERSION = 1
DEFAULT_PATH = Path("results/v6bench.db")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE selftests (
  id INTEGER PRIMARY KEY,
  created_at_unix_s REAL NOT NULL,
  environment_json TEXT NOT NULL,
  result_json TEXT NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  campaign_path TEXT,
  campaign_sha256 TEXT,
  campaign_toml TEXT,
  command TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
  started_at_unix_s REAL NOT NULL,
  finished_at_unix_s REAL,
  environment_json TEXT NOT NULL,
  selftest_id INTEGER REFERENCES selftests(id),
  error TEXT
);
CREATE TABLE tests (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  point_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  mix TEXT NOT NULL,
  frame_size INTEGER NOT NULL,
  bidirectional INTEGER NOT NULL,
  repetition INTEGER NOT NULL,
  params_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
  started_at_unix_s REAL NOT NULL,
  finished_at_unix_s REAL,
  result_json TEXT,
  error TEXT
);
CREATE INDEX tests_by_run ON tests(run_id, point_key);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  test_id INTEGER NOT NULL REFERENCES tests(id),
  seq INTEGER NOT NULL,
  call TEXT NOT NULL,
  call_args_json TEXT NOT NULL,
  recorded_at_unix_s REAL NOT NULL,
  duration_s REAL NOT NULL,
  intended_fps REAL NOT NULL,
  offered_fps REAL NOT NULL,
  tx_frames INTEGER NOT NULL,
  rx_frames INTEGER NOT NULL,
  lost_frames INTEGER NOT NULL,
  loss_ratio REAL NOT NULL,
  tester_limited INTEGER NOT NULL,
  streams_json TEXT NOT NULL,
  extra_json TEXT NOT NULL,
  result_json TEXT
);
CREATE INDEX trials_by_test ON trials(test_id, seq);
"""


def _dumps(x) -> str:
    return json.dumps(x, separators=(",", ":"), default=str)


#: The columns a test and a trial are written with; ``X_json`` columns take
#: the object under ``X`` (None stays NULL).
TEST_COLUMNS = ("run_id", "point_key", "kind", "mix", "frame_size", "bidirectional", "repetition", "params_json", "status",
                "started_at_unix_s", "finished_at_unix_s", "result_json", "error")
TRIAL_COLUMNS = ("test_id", "seq", "call", "call_args_json", "recorded_at_unix_s", "duration_s", "intended_fps", "offered_fps",
                 "tx_frames", "rx_frames", "lost_frames", "loss_ratio", "tester_limited", "streams_json", "extra_json",
                 "result_json")


def _cell(row: dict, column: str):
    if column.endswith("_json"):
        obj = row.get(column.removesuffix("_json"))
        return None if obj is None else _dumps(obj)
    return row.get(column)


class Store:
    """One open database. All writes commit before returning."""

    def __init__(self, path: Path | str = DEFAULT_PATH) -> None:
        """Opens (or creates) the database at ``path``. A path that cannot
        hold one (a directory, a file of another kind, an unwritable place)
        or a database of another schema version is a :class:`UsageError`
        about the field ``db``; nothing is written to a file that is not a
        v6bench database."""
        self.path = Path(path)
        if self.path.is_dir():
            raise UsageError(f"{self.path} is a directory; give a database file (e.g. {DEFAULT_PATH})", "db")
        above = next((a for a in self.path.parents if a.exists()), None)
        if above is not None and not above.is_dir():
            raise UsageError(f"cannot create {self.path}: {above} is not a directory", "db")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise UsageError(f"cannot open {self.path}: {getattr(e, 'strerror', None) or e}", "db") from None
        try:
            self._open()
        except sqlite3.Error as e:
            self.db.close()
            what = "is not an SQLite database" if isinstance(e, sqlite3.DatabaseError) and "not a database" in str(e) else f"cannot be used: {e}"
            raise UsageError(f"{self.path} {what}", "db") from None
        except UsageError:
            self.db.close()
            raise

    def _open(self) -> None:
        """Checks what the file holds before anything is written to it."""
        self.db.row_factory = sqlite3.Row
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise UsageError(f"{self.path} is an SQLite database but not a v6bench results database", "db")
        if tables:
            version = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if version is None or version[0] != str(SCHEMA_VERSION):
                raise UsageError(f"{self.path} has results schema version {version[0] if version else '?'}; "
                                 f"this v6bench reads version {SCHEMA_VERSION}", "db")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA synchronous=FULL")
        if not tables:
            self.db.executescript("BEGIN;" + SCHEMA + f"INSERT INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _insert(self, sql: str, args: tuple) -> int:
        with self.db:
            return int(self.db.execute(sql, args).lastrowid)

    def _insert_row(self, table: str, columns: tuple[str, ...], row: dict) -> int:
        return self._insert(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                            tuple(_cell(row, c) for c in columns))

    def insert_test(self, row: dict) -> int:
        """A test row as given (:data:`TEST_COLUMNS`; ``params``, ``result`` as objects)."""
        return self._insert_row("tests", TEST_COLUMNS, row)

    def insert_trial(self, row: dict) -> int:
        """A trial row as given (:data:`TRIAL_COLUMNS`; ``call_args``, ``streams``, ``extra``, ``result`` as objects)."""
        return self._insert_row("trials", TRIAL_COLUMNS, row)

    def _update(self, sql: str, args: tuple) -> None:
        with self.db:
            self.db.execute(sql, args)

    # Self-tests.
    def add_selftest(self, environment: dict, result: dict) -> int:
        return self._insert("INSERT INTO selftests (created_at_unix_s, environment_json, result_json) VALUES (?, ?, ?)",
                            (time.time(), _dumps(environment), _dumps(result)))

    def selftest(self, selftest_id: int | None) -> dict | None:
        """A stored self-test's result (None for no id or an unknown one)."""
        row = self.db.execute("SELECT result_json FROM selftests WHERE id=?", (selftest_id,)).fetchone() if selftest_id else None
        return json.loads(row[0]) if row else None

    def latest_selftest(self) -> tuple[int, dict] | None:
        return next(iter(self.recent_selftests(1)), None)

    def recent_selftests(self, limit: int) -> list[tuple[int, dict]]:
        """The ``limit`` newest self-tests, newest first."""
        rows = self.db.execute("SELECT id, result_json FROM selftests ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [(r["id"], json.loads(r["result_json"])) for r in rows]

    # Runs.
    def start_run(self, name: str, command: str, environment: dict, selftest_id: int | None,
                  campaign_path: str | None = None, campaign_sha256: str | None = None, campaign_toml: str | None = None) -> int:
        return self._insert(
            "INSERT INTO runs (name, campaign_path, campaign_sha256, campaign_toml, command, status, started_at_unix_s,"
            " environment_json, selftest_id) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
            (name, campaign_path, campaign_sha256, campaign_toml, command, time.time(), _dumps(environment), selftest_id))

    def resume_run(self, run_id: int, environment: dict, selftest_id: int | None) -> None:
        """Marks an interrupted run running again; the environment of this session is recorded beside the first."""
        row = self.run(run_id)
        env = dict(row["environment"])
        env.setdefault("resumed", []).append(environment)
        self._update("UPDATE runs SET status='running', finished_at_unix_s=NULL, environment_json=?, selftest_id=COALESCE(?, selftest_id),"
                     " error=NULL WHERE id=?", (_dumps(env), selftest_id, run_id))
        self._update("UPDATE tests SET status='interrupted' WHERE run_id=? AND status='running'", (run_id,))

    def set_environment(self, run_id: int, environment: dict) -> None:
        """Replaces the run's environment (a campaign with scenarios adds each scenario's as its lab comes up)."""
        self._update("UPDATE runs SET environment_json=? WHERE id=?", (_dumps(environment), run_id))

    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        self._update("UPDATE runs SET status=?, finished_at_unix_s=?, error=? WHERE id=?", (status, time.time(), error, run_id))

    def resumable_run(self, campaign_sha256: str) -> int | None:
        """The newest run of the campaign of this hash that did not finish, if any."""
        return self._newest_run(campaign_sha256, finished=False)

    def finished_run(self, campaign_sha256: str) -> int | None:
        """The newest run of the campaign of this hash that finished, if any."""
        return self._newest_run(campaign_sha256, finished=True)

    def _newest_run(self, campaign_sha256: str, finished: bool) -> int | None:
        row = self.db.execute("SELECT id FROM runs WHERE campaign_sha256=? AND (status = 'finished') = ?"
                              " ORDER BY id DESC LIMIT 1", (campaign_sha256, finished)).fetchone()
        return int(row[0]) if row else None

    def run(self, run_id: int) -> dict:
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise UsageError(f"there is no run {run_id} in {self.path} (see `v6bench results list`)", "run")
        d = dict(row)
        d["environment"] = json.loads(d.pop("environment_json"))
        return d

    def runs(self) -> list[dict]:
        rows = self.db.execute(
            "SELECT r.id, r.name, r.status, r.started_at_unix_s, r.finished_at_unix_s,"
            " (SELECT COUNT(*) FROM tests t WHERE t.run_id=r.id AND t.status='done') AS tests_done,"
            " (SELECT COUNT(*) FROM trials x JOIN tests t ON x.test_id=t.id WHERE t.run_id=r.id) AS trials"
            " FROM runs r ORDER BY r.id").fetchall()
        return [dict(r) for r in rows]

    def latest_run_id(self) -> int | None:
        row = self.db.execute("SELECT MAX(id) FROM runs").fetchone()
        return row[0]

    # Tests.
    def start_test(self, run_id: int, point_key: str, kind: str, mix: str, frame_size: int, bidirectional: bool,
                   repetition: int, params: dict) -> int:
        return self.insert_test({"run_id": run_id, "point_key": point_key, "kind": kind, "mix": mix, "frame_size": frame_size,
                                 "bidirectional": int(bidirectional), "repetition": repetition, "params": params,
                                 "status": "running", "started_at_unix_s": time.time()})

    def finish_test(self, test_id: int, status: str, result: dict | None = None, error: str | None = None) -> None:
        self._update("UPDATE tests SET status=?, finished_at_unix_s=?, result_json=?, error=? WHERE id=?",
                     (status, time.time(), _dumps(result) if result is not None else None, error, test_id))

    def restart_test(self, test_id: int) -> None:
        """An interrupted or failed attempt of a test runs again in its own
        row: status ``running``, its end, result and error cleared."""
        self._update("UPDATE tests SET status='running', finished_at_unix_s=NULL, result_json=NULL, error=NULL WHERE id=?",
                     (test_id,))

    def done_points(self, run_id: int) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT point_key FROM tests WHERE run_id=? AND status='done'", (run_id,))}

    def tests(self, run_id: int) -> list[dict]:
        out = []
        for r in self.db.execute("SELECT * FROM tests WHERE run_id=? ORDER BY id", (run_id,)):
            d = dict(r)
            d["params"] = json.loads(d.pop("params_json"))
            d["result"] = json.loads(d.pop("result_json")) if d["result_json"] else None
            out.append(d)
        return out

    def test_result(self, run_id: int, kind: str, mix: str, frame_size: int, bidirectional: bool,
                    traffic: dict | None = None) -> dict | None:
        """The latest finished result of such a test in the run, with the
        same traffic (``params.ext_headers``, ``params.icmp_echo``; a
        missing key is None, as is a missing ``traffic``)."""
        rows = self.db.execute(
            "SELECT result_json, params_json FROM tests WHERE run_id=? AND kind=? AND mix=? AND frame_size=? AND bidirectional=?"
            " AND status='done' ORDER BY id DESC", (run_id, kind, mix, frame_size, int(bidirectional))).fetchall()
        for result, params in rows:
            stored = json.loads(params)
            if all(stored.get(k) == v for k, v in (traffic or {"ext_headers": None}).items()):
                return json.loads(result)
        return None

    def unfinished_attempt(self, run_id: int, point_key: str) -> int | None:
        row = self.db.execute("SELECT id FROM tests WHERE run_id=? AND point_key=? AND status IN ('interrupted', 'running', 'failed')"
                              " ORDER BY id DESC LIMIT 1", (run_id, point_key)).fetchone()
        return int(row[0]) if row else None

    # Trials.
    def add_trial(self, test_id: int, seq: int, call: str, call_args: dict, m) -> int:
        """Records one :class:`~v6bench.core.tester.Measurement` of ``test_id``."""
        return self.insert_trial({"test_id": test_id, "seq": seq, "call": call, "call_args": call_args,
                                  "recorded_at_unix_s": time.time(), "duration_s": m.duration_s,
                                  "intended_fps": m.intended_load_fps, "offered_fps": m.offered_load_fps,
                                  "tx_frames": m.tx_frames, "rx_frames": m.rx_frames, "lost_frames": m.lost_frames,
                                  "loss_ratio": m.loss_ratio, "tester_limited": int(m.tester_limited),
                                  "streams": list(m.streams), "extra": m.extra, "result": m.detail})

    def delete_trials(self, test_id: int, from_seq: int) -> None:
        """Removes test ``test_id``'s trials from ``from_seq`` on."""
        self._update("DELETE FROM trials WHERE test_id=? AND seq>=?", (test_id, from_seq))

    def trials(self, test_id: int) -> list[dict]:
        out = []
        for r in self.db.execute("SELECT * FROM trials WHERE test_id=? ORDER BY seq", (test_id,)):
            d = dict(r)
            for k in ("call_args", "streams", "extra", "result"):
                raw = d.pop(k + "_json")
                d[k] = json.loads(raw) if raw else None
            out.append(d)
        return out

    def run_trials(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT t.run_id, t.id AS test_id, t.kind, t.mix, t.frame_size, t.bidirectional, t.repetition, t.status AS test_status,"
            " t.params_json,"
            " x.seq, x.call, x.call_args_json, x.recorded_at_unix_s, x.duration_s, x.intended_fps, x.offered_fps, x.tx_frames,"
            " x.rx_frames, x.lost_frames, x.loss_ratio, x.tester_limited, x.streams_json"
            " FROM trials x JOIN tests t ON x.test_id=t.id WHERE t.run_id=? ORDER BY t.id, x.seq", (run_id,)).fetchall()
