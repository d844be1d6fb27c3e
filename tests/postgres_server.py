"""A PostgreSQL server for the store's tests: Debian's ``postgresql``
binaries, a new cluster in a temporary directory (initdb, then pg_ctl),
run as an unprivileged user (``postgres`` when the tests run as root),
stopped and removed when its test or session ends, whatever happened.

By default it listens on a Unix socket in that directory only (no TCP
port). :meth:`Server.start` with ``tcp`` addresses also listens there
over TCP (inside the network namespace ``netns``, if given), taking
clients only by password (scram-sha-256) over TLS, with a certificate
made for the test (:func:`make_certificate`) that names those addresses."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: The server's port number (on the Unix socket, and on TCP when asked for).
PORT = 5432
#: The client addresses a TCP server takes (pg_hba.conf), one per writer namespace.
PEERS = ("198.19.250.2", "198.19.250.6")


def make_certificate(where: Path, addresses: tuple[str, ...]) -> None:
    """A self-signed certificate and key (``server.crt``, ``server.key``, mode 600) naming ``addresses``
    (subjectAltName IP entries, so a client may check it with ``sslmode=verify-full``)."""
    san = ",".join(f"IP:{a}" for a in addresses)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=v6bench-test-store", "-addext", f"subjectAltName={san}",
                    "-keyout", str(where / "server.key"), "-out", str(where / "server.crt")],
                   check=True, capture_output=True, timeout=60)
    os.chmod(where / "server.key", 0o600)


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: PATH's, else the newest of /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    return Path(dirs[-1]) if dirs else None


class Server:
    """One cluster: :meth:`start`, :meth:`url`, :meth:`stop`."""

    def __init__(self, netns: str | None = None) -> None:
        self.netns = netns
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
        if self.netns:
            cmd = ["ip", "netns", "exec", self.netns, *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise RuntimeError(f"{argv[0]} failed: {r.stdout[-500:]}{r.stderr[-500:]}")

    def start(self, tcp: tuple[str, ...] = ()) -> "Server":
        """Starts the cluster; with ``tcp`` addresses, also on those, TLS and scram-sha-256 only
        (the Unix socket stays trusted: the tests' own superuser ``v6bench``)."""
        if self.user:
            shutil.chown(self.dir, self.user)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "v6bench", "-E", "UTF8", "--no-sync")
        conf = [f"unix_socket_directories = '{self.dir}'", f"port = {PORT}", "fsync = off",
                f"listen_addresses = '{','.join(tcp)}'"]
        if tcp:
            make_certificate(self.dir, tcp)
            for f in ("server.crt", "server.key"):
                if self.user:
                    shutil.chown(self.dir / f, self.user)
            conf += ["ssl = on", f"ssl_cert_file = '{self.dir / 'server.crt'}'", f"ssl_key_file = '{self.dir / 'server.key'}'",
                     "password_encryption = 'scram-sha-256'"]
            (self.data / "pg_hba.conf").write_text("local all all trust\n" + "".join(
                f"hostssl all all {a}/32 scram-sha-256\n" for a in PEERS))
        with open(self.data / "postgresql.conf", "a") as f:
            f.write("\n".join(conf) + "\n")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60", "start")
        return self

    def set_tls(self, on: bool) -> None:
        """TLS on or off, by a reload (the clients' connections made after it see it)."""
        with open(self.data / "postgresql.conf", "a") as f:
            f.write(f"ssl = {'on' if on else 'off'}\n")
        self._run("pg_ctl", "-D", str(self.data), "-w", "reload")

    def sql(self, *statements: str, dbname: str = "postgres") -> None:
        """Statements run as the superuser over the Unix socket."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as c:
            for s in statements:
                c.execute(s)

    @property
    def ca(self) -> Path:
        """The certificate clients check the server's against (it signs itself)."""
        return self.dir / "server.crt"

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
