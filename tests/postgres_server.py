"""A PostgreSQL server for the store's tests: Debian's ``postgresql``
binaries, a new cluster in a temporary directory (initdb, then pg_ctl),
listening on a Unix socket in that directory only (no TCP port), run as an
unprivileged user (``postgres`` when the tests run as root), stopped and
removed when the session ends, whatever happened."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: The socket's port number (no TCP port is opened: listen_addresses is empty).
PORT = 5432


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: PATH's, else the newest of /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    return Path(dirs[-1]) if dirs else None


class Server:
    """One cluster: :meth:`start`, :meth:`url`, :meth:`stop`."""

    def __init__(self) -> None:
        self.bin = bindir()
        if self.bin is None:
            raise RuntimeError("PostgreSQL's initdb was not found: `make test` installs Debian's postgresql")
        self.dir = Path(tempfile.mkdtemp(prefix="v6b-pg-"))
        self.data = self.dir / "data"
        self.user = "postgres" if os.geteuid() == 0 else None
        self._n = 0

    def _run(self, *argv: str) -> None:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise RuntimeError(f"{argv[0]} failed: {r.stdout[-500:]}{r.stderr[-500:]}")

    def start(self) -> "Server":
        if self.user:
            shutil.chown(self.dir, self.user)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "v6bench", "-E", "UTF8", "--no-sync")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60", "-o",
                  f"-k {self.dir} -c listen_addresses='' -p {PORT} -F", "start")
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://v6bench@/{dbname}?host={self.dir}&port={PORT}"

    def new_database(self) -> str:
        """A new, empty database on the server; its URL."""
        import psycopg

        self._n += 1
        name = f"t{self._n}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
