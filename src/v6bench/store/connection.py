"""The two databases a results store can live in, behind one connection.

- SQLite (the default): one file, the WAL journal, ``synchronous=FULL``;
  a writer waits up to 30 s for another
  (:data:`BUSY_TIMEOUT_S`).
- PostgreSQL (a shared store for many tester machines): named by URL
  (``postgresql://user:password@host/dbname?sslmode=require``), psycopg 3,
  autocommit; concurrent writers from several machines are PostgreSQL's
  own business (identity columns, MVCC).

Two races a shared store meets are settled here, the same way in both:
two first writers of an empty store (:meth:`Connection.create_schema`
makes the schema under a lock, once; the other finds it made), and two
inserts of one unique key (:meth:`Connection.insert` raises
:class:`Duplicate`, its transaction rolled back).

Both take the store's SQL written once, with ``?`` placeholders and the
schema's type words ``ID``, ``INT`` and ``REAL`` (:func:`Connection.sql`
and :meth:`Connection.schema` turn them into each dialect's), return rows
as :class:`Row` (by name and by position) and commit every statement as it
runs, unless inside :meth:`Connection.transaction`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

from ..core.errors import UsageError

#: The environment variable that names the store when ``--db`` is not given.
ENV = "V6BENCH_DB"
DEFAULT_PATH = Path("results/v6bench.db")
URL_SCHEMES = ("postgresql", "postgres")
#: How long an SQLite writer waits for another [s].
BUSY_TIMEOUT_S = 30.0


def default_location() -> str:
    """``$V6BENCH_DB`` if set, else :data:`DEFAULT_PATH`."""
    return os.environ.get(ENV) or str(DEFAULT_PATH)


def is_url(location: str | Path) -> bool:
    return isinstance(location, str) and urlsplit(location).scheme in URL_SCHEMES


def shown(location: str | Path) -> str:
    """The location as messages show it: a URL without its password."""
    if not is_url(location):
        return str(location)
    u = urlsplit(str(location))
    if u.password is None:
        return str(location)
    netloc = u.netloc.replace(f":{u.password}@", ":***@")
    return urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))


class Duplicate(Exception):
    """An insert that would repeat a unique key (a run's ``uid`` another
    writer stored first); the transaction it ran in is rolled back."""


#: The advisory lock key the schema is made under (any constant of the store's own).
SCHEMA_LOCK = 0x76366265  # "v6be"


def _statements(text: str) -> list[str]:
    """The statements of ``text`` (``;``-separated; none has ``;`` in a literal), BEGIN/COMMIT left out."""
    return [s for s in (x.strip() for x in text.split(";")) if s and s.upper() not in ("BEGIN", "COMMIT")]


class Row(dict):
    """A row by column name, and by position as a tuple is."""

    def __getitem__(self, k):
        if isinstance(k, int):
            return list(self.values())[k]
        return super().__getitem__(k)


def _sqlite_row(cursor, values) -> Row:
    return Row(zip((c[0] for c in cursor.description), values))


class Connection:
    """One open database of either system (``database``: sqlite or postgresql)."""

    database: str
    where: str

    def sql(self, text: str) -> str:
        return text

    def schema(self, text: str) -> str:
        raise NotImplementedError

    def execute(self, sql: str, args: tuple = ()) -> list[Row]:
        raise NotImplementedError

    def insert(self, sql: str, args: tuple) -> int:
        """Runs an INSERT into a table with an ``id`` column; returns the new
        id, or raises :class:`Duplicate` for a repeated unique key."""
        raise NotImplementedError

    def create_schema(self, statements: str) -> bool:
        """Runs ``statements`` (the schema, ``;``-separated) in one
        transaction if the database holds no table, holding a lock that a
        second first writer waits on; False if another writer made them
        first (nothing run)."""
        raise NotImplementedError

    def transaction(self):
        raise NotImplementedError

    def tables(self) -> set[str]:
        raise NotImplementedError

    def integrity(self) -> list[str]:
        """What the database itself finds wrong ([] when nothing)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteConnection(Connection):
    database = "sqlite"

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.where = str(path)
        self.read_only = read_only
        if read_only:  # immutable: a file in a read-only place (no -wal/-shm can be made beside it)
            if not path.is_file():
                raise UsageError(f"{path} does not exist", "db")
            self.db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None)
        else:
            if path.is_dir():
                raise UsageError(f"{path} is a directory; give a database file (e.g. {DEFAULT_PATH})", "db")
            above = next((a for a in path.parents if a.exists()), None)
            if above is not None and not above.is_dir():
                raise UsageError(f"cannot create {path}: {above} is not a directory", "db")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            except (OSError, sqlite3.Error) as e:
                raise UsageError(f"cannot open {path}: {getattr(e, 'strerror', None) or e}", "db") from None
        self.db.row_factory = _sqlite_row

    def prepare(self) -> None:
        """The journal and durability every writer uses (after the file was found to be a store).
        Turning a new file to WAL takes a lock SQLite does not wait for (two first writers of one
        file: the second is refused at once), so the turn is retried for as long as a writer waits."""
        if not self.read_only:
            deadline = time.monotonic() + BUSY_TIMEOUT_S
            while self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                try:
                    self.db.execute("PRAGMA journal_mode=WAL")
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)
            self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")

    def schema(self, text: str) -> str:
        return re.sub(r"\bINT\b", "INTEGER", re.sub(r"\bID\b", "INTEGER PRIMARY KEY", text))

    def execute(self, sql: str, args: tuple = ()) -> list[Row]:
        return self.db.execute(sql, args).fetchall()

    def insert(self, sql: str, args: tuple) -> int:
        try:
            return int(self.db.execute(sql, args).lastrowid)
        except sqlite3.IntegrityError as e:
            if "UNIQUE" in str(e):
                raise Duplicate(str(e)) from None
            raise

    def create_schema(self, statements: str) -> bool:
        with self.transaction():  # BEGIN IMMEDIATE: the write lock, so a second first writer waits here
            if self.tables():
                return False
            for s in _statements(statements):
                self.db.execute(s)
        return True

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def integrity(self) -> list[str]:
        problems = [r[0] for r in self.db.execute("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"{r[0]} row {r[1]} refers to a missing {r[2]} row" for r in self.db.execute("PRAGMA foreign_key_check")]
        return problems

    def close(self) -> None:
        self.db.close()


class PostgresConnection(Connection):
    database = "postgresql"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:  # pragma: no cover (a dependency of the package)
            raise UsageError("a PostgreSQL store needs psycopg (pip install 'psycopg[binary]')", "db") from None
        self.where = shown(url)
        self._errors = psycopg.Error
        try:
            self.db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            raise UsageError(f"cannot connect to {self.where}: {str(e).strip().splitlines()[-1]}", "db") from None

    def prepare(self) -> None:
        pass

    def sql(self, text: str) -> str:
        # ? -> %s (the store's SQL has no ? or % inside string literals)
        return text.replace("%", "%%").replace("?", "%s")

    def schema(self, text: str) -> str:
        text = re.sub(r"\bID\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", text)
        return re.sub(r"\bREAL\b", "DOUBLE PRECISION", re.sub(r"\bINT\b", "BIGINT", text))

    def _cursor(self, sql: str, args: tuple):
        cur = self.db.cursor()
        cur.execute(self.sql(sql), args)
        return cur

    def execute(self, sql: str, args: tuple = ()) -> list[Row]:
        with self._cursor(sql, args) as cur:
            if cur.description is None:
                return []
            names = [c.name for c in cur.description]
            return [Row(zip(names, r)) for r in cur.fetchall()]

    def insert(self, sql: str, args: tuple) -> int:
        from psycopg.errors import UniqueViolation

        try:
            with self._cursor(sql + " RETURNING id", args) as cur:
                return int(cur.fetchone()[0])
        except UniqueViolation as e:
            raise Duplicate(str(e).strip().splitlines()[0]) from None

    def create_schema(self, statements: str) -> bool:
        with self.transaction():
            # A lock of the database's own, held to the transaction's end: the second first writer
            # waits here, then finds the tables (DDL is transactional: none is seen half made).
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            if self.tables():
                return False
            for s in _statements(statements):
                self.db.execute(s)
        return True

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.transaction():
            yield

    def tables(self) -> set[str]:
        return {r[0] for r in self.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}

    def integrity(self) -> list[str]:
        return []  # PostgreSQL enforces the foreign keys and checks its pages itself

    def close(self) -> None:
        self.db.close()


def connect(location: str | Path, read_only: bool = False) -> Connection:
    """The database at ``location``: a PostgreSQL URL or an SQLite file path."""
    if is_url(location):
        if read_only:
            raise UsageError("only an SQLite file is opened read-only", "db")
        return PostgresConnection(str(location))
    return SqliteConnection(Path(location), read_only)
