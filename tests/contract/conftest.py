"""Backends for the vector contract suite: one ``Case`` per backend, each able to (re)open a collection.

Server cases: a Chroma server is started here on a free loopback port (skipped only when the
``chroma`` executable is absent); a Qdrant server is used when ``QDRANT_URL`` is set.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.tier3.backend import VectorBackend, make_backend

SERVER_START_TIMEOUT_S = 60.0  # "chroma run" listens in ~4 s on an idle machine; this one is shared


@dataclass
class Case:
    """How to open a collection on one backend; ``durable()`` gives a variant that survives re-open."""

    name: str
    backend: str
    opts: dict[str, Any]
    reopenable: bool = True
    durable_opts: dict[str, Any] | None = None
    opened: list[VectorBackend] = field(default_factory=list)

    def open(self, *, collection: str = "memory_chunks", dim: int = 8, **extra: Any) -> VectorBackend:
        backend = make_backend(self.backend, collection=collection, dim=dim, **{**self.opts, **extra})
        self.opened.append(backend)
        return backend

    def collections(self) -> set[str]:
        return {backend.collection for backend in self.opened}

    def durable(self) -> Case:
        if self.reopenable:
            return self
        assert self.durable_opts is not None
        twin = Case(self.name + "-durable", self.backend, self.durable_opts, True, None, self.opened)
        return twin

    def close_all(self) -> None:
        for backend in self.opened:
            backend.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _chroma_executable() -> str | None:
    beside_python = Path(sys.executable).with_name("chroma")
    if beside_python.exists():
        return str(beside_python)
    return shutil.which("chroma")


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chroma server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"chroma server did not listen on {port} in {SERVER_START_TIMEOUT_S}s")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``chroma run`` on a free loopback port for the session; yields its url."""
    exe = _chroma_executable()
    if exe is None:
        pytest.skip("the `chroma` executable is not installed (pip install 'hermes-memory-tiers[chroma]')")
    data = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    log = data / "server.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [exe, "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        _wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


Factory = Callable[[pytest.FixtureRequest, Path], Case]


def _local(backend: str) -> Factory:
    return lambda request, tmp_path: Case(backend, backend, {"path": tmp_path})


def _chroma_server(request: pytest.FixtureRequest, tmp_path: Path) -> Case:
    return Case("chroma-server", "chroma", {"url": request.getfixturevalue("chroma_server")})


def _qdrant_client_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Case:
    # ':memory:' cannot be re-opened; re-open tests use the client's on-disk local mode instead
    return Case("qdrant-client", "qdrant-client", {"location": ":memory:"}, False, {"path": tmp_path})


def _qdrant_server(request: pytest.FixtureRequest, tmp_path: Path) -> Case:
    url = os.environ.get("QDRANT_URL")
    if not url:
        pytest.skip("QDRANT_URL is not set: no Qdrant server to test against")
    return Case("qdrant-server", "qdrant-client", {"url": url, "api_key_env": "QDRANT_API_KEY"})


@dataclass(frozen=True)
class CaseSpec:
    """One contract case: the registered backend it runs, how to build it, and its pytest marks."""

    backend: str
    build: Factory
    marks: tuple[pytest.MarkDecorator, ...] = ()


# Every registered backend (``tier3.backend.BACKENDS``) needs at least one case here:
# test_every_registered_backend_has_a_contract_case fails otherwise.
CASE_SPECS: dict[str, CaseSpec] = {
    "memory": CaseSpec("memory", _local("memory")),
    "chroma": CaseSpec("chroma", _local("chroma")),
    "chroma-server": CaseSpec("chroma", _chroma_server, (pytest.mark.slow, pytest.mark.server)),
    "qdrant-edge": CaseSpec("qdrant", _local("qdrant")),
    "qdrant-client-memory": CaseSpec("qdrant-client", _qdrant_client_memory),
    "qdrant-server": CaseSpec("qdrant-client", _qdrant_server, (pytest.mark.server,)),
}
CASES = [pytest.param(case_id, id=case_id, marks=list(spec.marks)) for case_id, spec in CASE_SPECS.items()]


@pytest.fixture(scope="session")
def case_specs() -> dict[str, CaseSpec]:
    """Every contract case by id (for the test that each registered backend has one)."""
    return CASE_SPECS


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Case]:
    """One backend under test; every collection it opens is closed afterwards."""
    built = CASE_SPECS[request.param].build(request, tmp_path)
    yield built
    built.close_all()
    if built.name == "qdrant-server":
        _drop_server_collections(os.environ["QDRANT_URL"], built.collections())


def _drop_server_collections(url: str, names: set[str]) -> None:
    """A real server outlives the test: remove the collections it created."""
    from qdrant_client import QdrantClient

    client = QdrantClient(
        url=url, api_key=os.environ.get("QDRANT_API_KEY") or None, check_compatibility=False
    )
    try:
        for name in names:
            client.delete_collection(name)
    finally:
        client.close()


@pytest.fixture
def collection_name(case: Case) -> str:
    """A collection name unique to the test (servers keep collections across tests)."""
    if case.name in ("chroma-server", "qdrant-server"):
        return f"t_{uuid.uuid4().hex[:12]}"
    return "memory_chunks"


OpenFn = Callable[..., VectorBackend]


@pytest.fixture(scope="session")
def pg_server_running() -> Iterator[Any]:
    """One throw-away PostgreSQL cluster for the session (``pg_server``), with a database holding the
    migrated, empty schema that every test's database is copied from."""
    import tempfile

    import pg_server

    from hermes_memory.tier2 import Tier2

    with pg_server.running() as server:
        template = server.database()
        with tempfile.TemporaryDirectory() as local:
            Tier2.open(Path(local) / "tier2.db", url=template).close()
        server.template = template.rsplit("/", 1)[1]
        yield server


@pytest.fixture
def pg_url(pg_server_running: Any) -> Iterator[str]:
    """A new database on the session's PostgreSQL server, with the schema in it; dropped after."""
    url: str = pg_server_running.database(template=pg_server_running.template)
    yield url
    pg_server_running.drop(url)
