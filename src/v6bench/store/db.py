"""The results store: an SQLite file (default ``results/v6bench.db``) or
a PostgreSQL database shared by many tester machines (``--db
postgresql://…`` or ``$V6BENCH_DB``; :mod:`.connection`).

Schema version 2 (``docs/results-format.md``): ``runs`` ← ``tests`` ←
``trials``, and ``selftests``; each run has a unique id (``uid``) that
stays with it when it is imported into another store (:mod:`.merge`).
Every trial is written in its own transaction the moment it ends (SQLite:
WAL journal; PostgreSQL: autocommit), so a kill at any moment loses at
most the trial in flight; a test's result and a run's status are written
the same way. Opening a store of another schema version is an error, never
a silent migration: ``v6bench results upgrade`` upgrades a version-1 file
in place, and ``v6bench results import`` reads version 1 and 2 files.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path

from ..core.errors import UsageError
from .connection import DEFAULT_PATH, Connection, Row, connect  # noqa: F401 (DEFAULT_PATH: callers take it from here)

SCHEMA_VERSION = 2
#: The versions :mod:`.merge` reads (a version-1 run's uid is made from what it stored: :func:`derived_uid`).
READABLE_VERSIONS = (1, 2)

#: Written once for both databases: ``ID``, ``INT`` and ``REAL`` are each
#: dialect's (:meth:`.connection.Connection.schema`).
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE selftests (
  id ID,
  created_at_unix_s REAL NOT NULL,
  environment_json TEXT NOT NULL,
  result_json TEXT NOT NULL
);
CREATE TABLE runs (
  id ID,
  name TEXT NOT NULL,
  campaign_path TEXT,
  campaign_sha256 TEXT,
  campaign_toml TEXT,
  command TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
  started_at_unix_s REAL NOT NULL,
  finished_at_unix_s REAL,
  environment_json TEXT NOT NULL,
  selftest_id INT REFERENCES selftests(id),
  error TEXT,
  uid TEXT,
  origin TEXT
);
CREATE UNIQUE INDEX runs_by_uid ON runs(uid);
CREATE TABLE tests (
  id ID,
  run_id INT NOT NULL REFERENCES runs(id),
  point_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  mix TEXT NOT NULL,
  frame_size INT NOT NULL,
  bidirectional INT NOT NULL,
  repetition INT NOT NULL,
  params_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
  started_at_unix_s REAL NOT NULL,
  finished_at_unix_s REAL,
  result_json TEXT,
  error TEXT
);
CREATE INDEX tests_by_run ON tests(run_id, point_key);
CREATE TABLE trials (
  id ID,
  test_id INT NOT NULL REFERENCES tests(id),
  seq INT NOT NULL,
  call TEXT NOT NULL,
  call_args_json TEXT NOT NULL,
  recorded_at_unix_s REAL NOT NULL,
  duration_s REAL NOT NULL,
  intended_fps REAL NOT NULL,
  offered_fps REAL NOT NULL,
  tx_frames INT NOT NULL,
  rx_frames INT NOT NULL,
  lost_frames INT NOT NULL,
  loss_ratio REAL NOT NULL,
  tester_limited INT NOT NULL,
  streams_json TEXT NOT NULL,
  extra_json TEXT NOT NULL,
  result_json TEXT
);
CREATE INDEX trials_by_test ON trials(test_id, seq);
"""


def _dumps(x) -> str:
    return json.dumps(x, separators=(",", ":"), default=str)


def derived_uid(run: dict) -> str:
    """The unique id of a run stored before runs had one (schema version
    1): made from what the run stored when it started and never changes
    (its name, command, campaign hash and start time to the microsecond),
    so a file upgraded in place and the same file imported give the run
    one id."""
    ident = _dumps([run["name"], run["command"], run.get("campaign_sha256"), repr(float(run["started_at_unix_s"]))])
    return "v1-" + hashlib.sha256(ident.encode()).hexdigest()[:32]


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
    """One open store. All writes commit before returning."""

    def __init__(self, path: Path | str | None = None, read_only: bool = False) -> None:
        """Opens (or creates) the store at ``path``: an SQLite file path or
        a PostgreSQL URL (None: ``$V6BENCH_DB`` or :data:`DEFAULT_PATH`).
        A path that cannot hold one (a directory, a file of another kind,
        an unwritable place), a server that cannot be reached or a store of
        another schema version is a :class:`UsageError` about the field
        ``db``; nothing is written to a database that is not a v6bench
        store. ``read_only`` (SQLite files only): opened as it is, never
        written, any readable version (:data:`READABLE_VERSIONS`), for
        :mod:`.merge`."""
        from .connection import default_location, is_url

        location = default_location() if path is None else path
        self.path = None if is_url(location) else Path(location)
        self.conn: Connection = connect(location, read_only)
        self.where = self.conn.where
        self.version = SCHEMA_VERSION
        try:
            self._open(read_only)
        except UsageError:
            self.conn.close()
            raise
        except Exception as e:  # the database's own error: not a store, or not usable
            self.conn.close()
            text = str(e)
            what = "is not an SQLite database" if "not a database" in text else f"cannot be used: {text.strip()}"
            raise UsageError(f"{self.where} {what}", "db") from None

    @property
    def db(self):
        """The database connection itself (sqlite3 or psycopg), for tests and :mod:`.merge`'s checks."""
        return self.conn.db

    @property
    def reports_dir(self) -> Path:
        """Where reports go by default: ``reports/`` beside an SQLite file; ``results/reports`` for a server."""
        return (self.path.parent if self.path is not None else Path("results")) / "reports"

    def _open(self, read_only: bool) -> None:
        """Checks what the database holds before anything is written to it;
        an empty one gets the schema (once, if two writers come first at
        the same moment: :meth:`.connection.Connection.create_schema`)."""
        tables = self.conn.tables()
        self._check(tables, read_only)
        if read_only and not tables:
            raise UsageError(f"{self.where} holds no v6bench results", "db")
        self.conn.prepare()
        if not tables and not self.conn.create_schema(
                self.conn.schema(SCHEMA) + f"INSERT INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');"):
            self._check(self.conn.tables(), read_only)  # another writer made it first: checked as any store found

    def _check(self, tables: set[str], read_only: bool) -> None:
        """A database with tables must be a v6bench store of a version this one reads."""
        if tables and "meta" not in tables:
            noun = "an SQLite" if self.conn.database == "sqlite" else "a PostgreSQL"
            raise UsageError(f"{self.where} is {noun} database but not a v6bench results database", "db")
        if tables:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'")
            version = row[0][0] if row else "?"
            readable = READABLE_VERSIONS if read_only else (SCHEMA_VERSION,)
            if version not in {str(v) for v in readable}:
                hint = (f" (`v6bench results upgrade --db {self.where}` upgrades it in place; `v6bench results import "
                        f"{self.where}` copies its runs into another store)" if version == "1" else "")
                raise UsageError(f"{self.where} has results schema version {version}; "
                                 f"this v6bench reads version {SCHEMA_VERSION}{hint}", "db")
            self.version = int(version)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def execute(self, sql: str, args: tuple = ()) -> list[Row]:
        """One statement in the store's SQL (``?`` placeholders)."""
        return self.conn.execute(sql, args)

    def transaction(self):
        """Everything inside commits together or not at all."""
        return self.conn.transaction()

    def _insert(self, sql: str, args: tuple) -> int:
        return self.conn.insert(sql, args)

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
        self.conn.execute(sql, args)

    # Self-tests.
    def add_selftest(self, environment: dict, result: dict) -> int:
        return self._insert("INSERT INTO selftests (created_at_unix_s, environment_json, result_json) VALUES (?, ?, ?)",
                            (time.time(), _dumps(environment), _dumps(result)))

    def selftest(self, selftest_id: int | None) -> dict | None:
        """A stored self-test's result (None for no id or an unknown one)."""
        rows = self.conn.execute("SELECT result_json FROM selftests WHERE id=?", (selftest_id,)) if selftest_id else []
        return json.loads(rows[0][0]) if rows else None

    def latest_selftest(self) -> tuple[int, dict] | None:
        return next(iter(self.recent_selftests(1)), None)

    def recent_selftests(self, limit: int) -> list[tuple[int, dict]]:
        """The ``limit`` newest self-tests, newest first."""
        rows = self.conn.execute("SELECT id, result_json FROM selftests ORDER BY id DESC LIMIT ?", (limit,))
        return [(r["id"], json.loads(r["result_json"])) for r in rows]

    # Runs.
    def start_run(self, name: str, command: str, environment: dict, selftest_id: int | None,
                  campaign_path: str | None = None, campaign_sha256: str | None = None, campaign_toml: str | None = None,
                  uid: str | None = None, origin: str | None = None) -> int:
        """A new run, ``running``; its unique id a new UUID unless given (an imported run keeps its own)."""
        return self._insert(
            "INSERT INTO runs (name, campaign_path, campaign_sha256, campaign_toml, command, status, started_at_unix_s,"
            " environment_json, selftest_id, uid, origin) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
            (name, campaign_path, campaign_sha256, campaign_toml, command, time.time(), _dumps(environment), selftest_id,
             uid or uuid.uuid4().hex, origin))

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
        """The run's end. A run that did not finish marks any test of it still ``running`` (a Ctrl-C
        between a test's row and its own handler, or during its last write) ``interrupted``, as --resume
        replays it; all in one transaction."""
        now = time.time()
        with self.transaction():
            if status != "finished":
                self._update("UPDATE tests SET status='interrupted', finished_at_unix_s=? WHERE run_id=? AND status='running'",
                             (now, run_id))
            self._update("UPDATE runs SET status=?, finished_at_unix_s=?, error=? WHERE id=?", (status, now, error, run_id))

    def resumable_run(self, campaign_sha256: str) -> int | None:
        """The newest run of the campaign of this hash that did not finish, if any."""
        return self._newest_run(campaign_sha256, finished=False)

    def finished_run(self, campaign_sha256: str) -> int | None:
        """The newest run of the campaign of this hash that finished, if any."""
        return self._newest_run(campaign_sha256, finished=True)

    def _newest_run(self, campaign_sha256: str, finished: bool) -> int | None:
        row = self.conn.execute("SELECT id FROM runs WHERE campaign_sha256=? AND (status = 'finished') = ?"
                              " ORDER BY id DESC LIMIT 1", (campaign_sha256, finished))
        return int(row[0][0]) if row else None

    def run(self, run_id: int) -> dict:
        rows = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,))
        if not rows:
            raise UsageError(f"there is no run {run_id} in {self.where} (see `v6bench results list`)", "run")
        d = dict(rows[0])
        d["environment"] = json.loads(d.pop("environment_json"))
        return d

    def runs(self) -> list[dict]:
        rows = self.conn.execute(
            "SELECT r.id, r.uid, r.name, r.status, r.started_at_unix_s, r.finished_at_unix_s, r.campaign_sha256, r.origin,"
            " r.environment_json,"
            " (SELECT COUNT(*) FROM tests t WHERE t.run_id=r.id AND t.status='done') AS tests_done,"
            " (SELECT COUNT(*) FROM trials x JOIN tests t ON x.test_id=t.id WHERE t.run_id=r.id) AS trials"
            " FROM runs r ORDER BY r.id")
        out = []
        for r in rows:
            d = dict(r)
            d["environment"] = json.loads(d.pop("environment_json"))
            out.append(d)
        return out

    def run_by_uid(self, uid: str) -> int | None:
        """The id of the run with this unique id here, if any."""
        rows = self.conn.execute("SELECT id FROM runs WHERE uid=?", (uid,))
        return int(rows[0][0]) if rows else None

    def latest_run_id(self) -> int | None:
        return self.conn.execute("SELECT MAX(id) FROM runs")[0][0]

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
        return {r[0] for r in self.conn.execute("SELECT point_key FROM tests WHERE run_id=? AND status='done'", (run_id,))}

    def tests(self, run_id: int) -> list[dict]:
        out = []
        for r in self.conn.execute("SELECT * FROM tests WHERE run_id=? ORDER BY id", (run_id,)):
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
        return next((r for _, r in self.test_results(run_id, kind, mix, bidirectional, traffic, frame_size)), None)

    def test_results(self, run_id: int, kind: str, mix: str, bidirectional: bool,
                     traffic: dict | None = None, frame_size: int | None = None) -> list[tuple[int, dict]]:
        """The finished results of such tests in the run, at ``frame_size`` or every size, newest first, as
        ``(frame_size, result)``; the traffic matched as by :meth:`test_result`."""
        size = "" if frame_size is None else " AND frame_size=?"
        rows = self.conn.execute(
            "SELECT frame_size, result_json, params_json FROM tests WHERE run_id=? AND kind=? AND mix=?"
            f" AND bidirectional=?{size} AND status='done' ORDER BY id DESC",
            (run_id, kind, mix, int(bidirectional), *(() if frame_size is None else (frame_size,))))
        want = (traffic or {"ext_headers": None}).items()
        return [(int(r["frame_size"]), json.loads(r["result_json"])) for r in rows
                if all(json.loads(r["params_json"]).get(k) == v for k, v in want)]

    def unfinished_attempt(self, run_id: int, point_key: str) -> int | None:
        row = self.conn.execute("SELECT id FROM tests WHERE run_id=? AND point_key=? AND status IN ('interrupted', 'running', 'failed')"
                              " ORDER BY id DESC LIMIT 1", (run_id, point_key))
        return int(row[0][0]) if row else None

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
        for r in self.conn.execute("SELECT * FROM trials WHERE test_id=? ORDER BY seq", (test_id,)):
            d = dict(r)
            for k in ("call_args", "streams", "extra", "result"):
                raw = d.pop(k + "_json")
                d[k] = json.loads(raw) if raw else None
            out.append(d)
        return out

    def trial_durations(self, run_id: int) -> dict[int, list[float]]:
        """Each test's trials' durations [s] in the run, by test id (no JSON read)."""
        out: dict[int, list[float]] = {}
        for r in self.conn.execute("SELECT x.test_id, x.duration_s FROM trials x JOIN tests t ON x.test_id=t.id "
                                   "WHERE t.run_id=? ORDER BY x.test_id, x.seq", (run_id,)):
            out.setdefault(int(r[0]), []).append(float(r[1] or 0.0))
        return out

    def run_trials(self, run_id: int) -> list[Row]:
        return self.conn.execute(
            "SELECT t.run_id, t.id AS test_id, t.kind, t.mix, t.frame_size, t.bidirectional, t.repetition, t.status AS test_status,"
            " t.params_json,"
            " x.seq, x.call, x.call_args_json, x.recorded_at_unix_s, x.duration_s, x.intended_fps, x.offered_fps, x.tx_frames,"
            " x.rx_frames, x.lost_frames, x.loss_ratio, x.tester_limited, x.streams_json"
            " FROM trials x JOIN tests t ON x.test_id=t.id WHERE t.run_id=? ORDER BY t.id, x.seq", (run_id,))
