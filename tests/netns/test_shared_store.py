"""A results store shared over the network, as a team runs it (issue 64):
a PostgreSQL server in a namespace of its own, reached over TCP with
passwords (scram-sha-256) and TLS, set up with the roles of
``docs/examples/postgres-roles.sql`` and ``postgres-grants.sql``; two
writers in two other namespaces (two tester machines) store runs at
once and import one file at once; a wrong password and a server without
TLS are refused in one line, nothing written, no password printed.

    srv (198.19.250.1, .5) --veth-- wa (198.19.250.2)
                           --veth-- wb (198.19.250.6)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import v6bench
from postgres_server import PEERS, Server

pytestmark = pytest.mark.netns

TESTS = Path(__file__).parent.parent
EXAMPLES = TESTS.parent / "docs" / "examples"
WRITER = TESTS / "store_writer.py"
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(v6bench.__file__).parent.parent), str(TESTS)])}
#: The server's address toward each writer namespace.
SERVER = ("198.19.250.1", "198.19.250.5")
#: store_writer.py's campaign: 12 tests a run.
TESTS_PER_RUN = 12


def _statements(path: Path) -> list[str]:
    """The SQL statements of a file of docs/examples (comments left out)."""
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def sh(*args: str) -> None:
    subprocess.run(list(args), check=True, capture_output=True, timeout=30)


@pytest.fixture
def shared(ns_tag):
    """(server, {writer namespace: server address}); the server stopped after (the namespaces: ``ns_tag``)."""
    tag = ns_tag
    srv, wa, wb = f"{tag}s", f"{tag}a", f"{tag}b"
    server = None
    try:
        for ns in (srv, wa, wb):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for i, (ns, peer, here) in enumerate(((wa, PEERS[0], SERVER[0]), (wb, PEERS[1], SERVER[1]))):
            sh("ip", "link", "add", f"{tag}s{i}", "netns", srv, "type", "veth", "peer", "name", f"{tag}w{i}", "netns", ns)
            sh("ip", "-n", srv, "addr", "add", f"{here}/30", "dev", f"{tag}s{i}")
            sh("ip", "-n", ns, "addr", "add", f"{peer}/30", "dev", f"{tag}w{i}")
            sh("ip", "-n", srv, "link", "set", f"{tag}s{i}", "up")
            sh("ip", "-n", ns, "link", "set", f"{tag}w{i}", "up")
        server = Server(netns=srv).start(tcp=SERVER)
        yield server, {wa: SERVER[0], wb: SERVER[1]}
    finally:
        if server is not None:
            server.stop()


def _in(ns: str, *argv: str) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=CHILD_ENV)


def _done(p: subprocess.Popen) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=180)
    return p.returncode, out, err


def _count(server: Server, sql: str) -> int:
    import psycopg

    with psycopg.connect(server.url("v6bench")) as c:
        return c.execute(sql).fetchone()[0]


def test_two_tester_machines_share_a_store_over_tls_with_passwords(shared, tmp_path):
    server, writers = shared
    (wa, a_at), (wb, b_at) = writers.items()
    server.sql(*_statements(EXAMPLES / "postgres-roles.sql"), "ALTER ROLE v6bench_owner PASSWORD 'owner-pw'",
               "CREATE ROLE tester_a LOGIN IN ROLE v6bench_tester PASSWORD 'pw-of-a'",
               "CREATE ROLE tester_b LOGIN IN ROLE v6bench_tester PASSWORD 'pw-of-b'")
    # The owner makes the schema (its first `results list`), then the grants.
    rc, out, err = _done(_in(wa, "-m", "v6bench.cli", "results", "list", "--db",
                             f"postgresql://v6bench_owner:owner-pw@{a_at}/v6bench?sslmode=require"))
    assert rc == 0, err
    server.sql(*_statements(EXAMPLES / "postgres-grants.sql"), dbname="v6bench")
    url_a = f"postgresql://tester_a:pw-of-a@{a_at}:5432/v6bench?sslmode=verify-full&sslrootcert={server.ca}"
    url_b = f"postgresql://tester_b:pw-of-b@{b_at}:5432/v6bench?sslmode=require"

    # Two machines store runs at once, and import one file at once: nothing lost or doubled.
    src = tmp_path / "elsewhere.db"
    rc, out, err = _done(subprocess.Popen([sys.executable, str(WRITER), str(src), "elsewhere"], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, env=CHILD_ENV))
    assert rc == 0, err
    ps = [_in(wa, str(WRITER), url_a, "machine-a", "--pause-s", "0.002"),
          _in(wb, str(WRITER), url_b, "machine-b", "--pause-s", "0.002"),
          _in(wa, "-m", "v6bench.cli", "results", "import", str(src), "--db", url_a),
          _in(wb, "-m", "v6bench.cli", "results", "import", str(src), "--db", url_b)]
    results = [_done(p) for p in ps]
    assert [r[0] for r in results] == [0] * 4, [r[2] for r in results]
    imports = [r[1] for r in results[2:]]
    assert sorted("1 run(s) imported" in o for o in imports) == [False, True], imports
    assert sorted("1 already here" in o for o in imports) == [False, True], imports
    names = {r[0]: r[1] for r in _rows(server, "SELECT name, COUNT(*) FROM runs GROUP BY name")}
    assert names == {"machine-a": 1, "machine-b": 1, "elsewhere": 1}
    assert _count(server, "SELECT COUNT(*) FROM tests") == 3 * TESTS_PER_RUN
    assert _count(server, "SELECT COUNT(*) FROM (SELECT run_id, point_key FROM tests GROUP BY run_id, point_key) x") == 36
    assert _count(server, "SELECT COUNT(*) FROM (SELECT test_id, seq FROM trials GROUP BY test_id, seq HAVING COUNT(*) > 1) x") == 0
    assert _count(server, "SELECT COUNT(*) FROM trials x JOIN tests t ON x.test_id = t.id"
                          " WHERE x.seq >= (SELECT COUNT(*) FROM trials y WHERE y.test_id = t.id)") == 0  # seq 0..n-1
    trials = _count(server, "SELECT COUNT(*) FROM trials")
    runs = 3

    # A tester may not do more than the grants say; a connection without TLS is refused.
    probe = ("import psycopg, sys\n"
             "try:\n    psycopg.connect(sys.argv[1], autocommit=True).execute(sys.argv[2])\n"
             "except psycopg.Error as e:\n    print(type(e).__name__)\n")
    for sql in ("DELETE FROM runs", "DROP TABLE trials", "UPDATE meta SET value = '9'"):
        assert _done(_in(wa, "-c", probe, url_a, sql))[1].strip() == "InsufficientPrivilege", sql
    plain = url_b.replace("sslmode=require", "sslmode=disable")
    assert "OperationalError" in _done(_in(wb, "-c", probe, plain, "SELECT 1"))[1]

    # A wrong password, then a server without TLS: one line, exit 2, nothing written, no password printed.
    wrong = url_a.replace("pw-of-a", "not-the-pw-of-a")
    for url, words, secret in ((wrong, "password authentication failed", "not-the-pw-of-a"), (None, "SSL", "pw-of-b")):
        if url is None:
            server.set_tls(False)
            url = url_b
        rc, out, err = _done(_in(wa if url is wrong else wb, "-m", "v6bench.cli", "results", "import", str(src), "--db", url))
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and words in lines[0] and out == "", err
        assert secret not in err and ":***@" in lines[0]
        assert _count(server, "SELECT COUNT(*) FROM runs") == runs and _count(server, "SELECT COUNT(*) FROM trials") == trials


def _rows(server: Server, sql: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(server.url("v6bench")) as c:
        return c.execute(sql).fetchall()
