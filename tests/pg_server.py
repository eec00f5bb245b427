"""A throw-away PostgreSQL cluster on loopback for the tests that need the real server: ``initdb`` into a
temporary directory, a free port, ``pg_ctl start``; every test gets a database of its own.

The binaries come from Debian's packages (``apt-get install -y postgresql``; ``.ci/run`` installs them
when absent). As root the cluster runs as the ``postgres`` user, since PostgreSQL refuses to run as
root. Without the binaries the tests that need the server fail with the install command, never skip.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

_INSTALL = "apt-get update && apt-get install -y postgresql"
_USER = "hm"


def _binary(name: str) -> str:
    """The path of PostgreSQL's ``name`` program: on PATH, else the newest under Debian's versioned
    directory. Raises RuntimeError with the install command when it is not installed."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]), reverse=True
    )
    if versions:
        return str(versions[0])
    raise RuntimeError(f"PostgreSQL's {name} is not installed; install it with: {_INSTALL}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PgServer:
    """One running throw-away cluster; ``database()`` creates an empty database and returns its URL."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hm-pg-"))
        self.port = _free_port()
        self._names = itertools.count(1)
        self._as: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, user="postgres")
        data = self.root / "data"
        self._run(
            _binary("initdb"), "-D", str(data), "-A", "trust", "-U", _USER, "-E", "UTF8",
            "--locale=C.UTF-8", "--no-sync",
        )
        # wal_level=minimal (no WAL senders): the server writes no WAL record of its own every 15 s (a
        # standby snapshot), so the WAL position (``PgDatabase.data_version``) moves only with the
        # tests' writes; checkpoints are as rare.
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
            "-c wal_level=minimal -c max_wal_senders=0 -c checkpoint_timeout=1d"
        )
        self._log = str(self.root / "log")  # the server's output goes there, never to our pipes
        self._run(_binary("pg_ctl"), "-D", str(data), "-o", options, "-l", self._log, "-w", "start")
        self._data = data

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, text=True, cwd=self.root, check=False)
        if done.returncode != 0:
            why = done.stderr or done.stdout
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({done.returncode}): {why}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{_USER}@127.0.0.1:{self.port}/{database}"

    def database(self, template: str | None = None) -> str:
        """A new database's URL: empty, or a copy of the database ``template`` (no one may be connected
        to it)."""
        name = f"t{os.getpid()}_{next(self._names)}"
        copy = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        self._admin(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def drop(self, url: str) -> None:
        """Drop the database of ``url``, closing whatever is still connected to it."""
        self._admin(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.encode())

    def restart(self) -> None:
        """Stop the server (every connection cut, as by a restart or a network cut) and start it again."""
        pg_ctl = _binary("pg_ctl")
        self._run(pg_ctl, "-D", str(self._data), "-l", self._log, "-m", "fast", "-w", "restart")

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already stopped: the directory goes all the same
            self._run(_binary("pg_ctl"), "-D", str(self._data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running() -> Iterator[PgServer]:
    server = PgServer()
    try:
        yield server
    finally:
        server.stop()


__all__ = ["PgServer", "running"]
