"""Vectors for a store on PostgreSQL shared by two hosts (two Hermes homes, one server): each combination
the documentation names is proven here — recall by meaning from the other host, and a forget issued on
one host leaving the forgotten text in no vector search and no file of the other.

* the Tier 2 ``vectors`` table with each host's exact index: ``tests/integration/test_multi_host_pg.py``
  (four writers, two workers, kills) and ``test_a_forget_reaches_the_vectors_of_every_host`` below;
* a vector server by URL shared by the hosts (a real ``chroma run`` on loopback);
* an embedded engine on each host (``qdrant``, its files in each home), filled from the shared table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI

pytestmark = pytest.mark.server

NAME = "Quillon"
FACT = f"{NAME} fixes bicycles in the old harbour workshop every Saturday."
QUERY = f"{NAME} bicycles harbour workshop"


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _vector_texts(api: MemoryAPI) -> list[str]:
    return [h["text"] for h in _ok(api.recall(QUERY, tiers=["tier3"]))["hits"]]


def _files_naming(home: Path) -> list[str]:
    needle = NAME.lower().encode()
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


def _forget_reaches_host_b(tmp_path: Path, settings: dict[str, Any]) -> None:
    """Host A stores a fact; host B recalls it by meaning; A forgets the name; B recalls it no more and no
    file of B's home holds it."""
    a = MemoryAPI(hermes_home=tmp_path / "a", **settings)
    b = MemoryAPI(hermes_home=tmp_path / "b", **settings)
    try:
        _ok(a.fact_store(FACT))
        _ok(a.flush(timeout=60))
        _ok(b.flush(timeout=60))  # b's own engine (if any) catches up from the shared table
        assert any(NAME in t for t in _vector_texts(b)), _vector_texts(b)
        _ok(a.forget_entity(NAME, confirm=True))
        assert not any(NAME in t for t in _vector_texts(b))  # b follows the forget on this recall
        assert not any(NAME in t for t in _vector_texts(a))
        b.close()
        assert _files_naming(tmp_path / "b") == []
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param({"tier3.backend": "memory"}, id="exact-index"),
        pytest.param({"tier3.backend": "qdrant", "tier3.engine_min_vectors": 0}, id="embedded-qdrant"),
    ],
)
def test_a_forget_reaches_the_vectors_of_every_host(
    pg_url: str, tmp_path: Path, backend: dict[str, Any]
) -> None:
    _forget_reaches_host_b(tmp_path, {"tier2.url": pg_url, "tier3.embedding_model": "hashing", **backend})


@pytest.mark.slow
def test_two_hosts_share_a_vector_server(pg_url: str, chroma_server: str, tmp_path: Path) -> None:
    settings = {
        "tier2.url": pg_url, "tier3.embedding_model": "hashing", "tier3.backend": "chroma",
        "tier3.url": chroma_server, "tier3.engine_min_vectors": 0,
    }  # fmt: skip
    _forget_reaches_host_b(tmp_path, settings)
