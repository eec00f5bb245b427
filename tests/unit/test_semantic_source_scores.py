"""SemanticMemory.source_scores (recall's Tier 3 path): the same sources and scores per view as ``search``,
from one query embedding, without loading payload text or Tier 2 chunk rows.

Fast: the hashing embedder and the in-process backend (plus the embedded Qdrant engine once).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.config import load_config
from hermes_memory.errors import ValidationError
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION
from hermes_memory.tier3.semantic import SemanticMemory

LIMITS = {"episode": 4, "episode_window": 3, "fact": 2}
QUERIES = ["Alice lives in Munich", "the orange cat sleeps on the sofa", "garden project with Lena", "x"]


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[list[Any]]:
    """Everything a test opens (SemanticMemory and Tier 2 objects), closed afterwards in reverse."""
    things: list[Any] = []
    yield things
    for thing in reversed(things):
        thing.close()


# These tests compare with and look into the engine: it answers at any size.
ENGINE = {"tier3.engine_min_vectors": 0}


def _open(
    tmp_path: Path,
    opened: list[Any],
    backend: str = "memory",
    view: ScopeView | None = None,
    *,
    engine: bool = True,
) -> Any:
    settings = {"tier3.embedding_model": "hashing", "tier3.backend": backend, **(ENGINE if engine else {})}
    cfg = load_config(hermes_home=tmp_path, **settings)
    t2 = Tier2.open(cfg.db_path, view=view)
    sem = SemanticMemory(cfg.tier3, cfg.tier3_path, t2)
    opened.extend([t2, sem])
    return sem, t2


def _by_search(sem: SemanticMemory, query: str, limits: dict[str, int]) -> dict[str, dict[str, float]]:
    """What recall computed before: one full ``search`` per view, best score per source."""
    out: dict[str, dict[str, float]] = {}
    for kind, limit in limits.items():
        found = out.setdefault(kind, {})
        for hit in sem.search(query, limit=limit, filters={"source_kind": kind}).hits:
            if hit.source_ids:
                found[hit.source_ids[0]] = max(found.get(hit.source_ids[0], 0.0), hit.score)
    return out


def _fill(sem: SemanticMemory, t2: Tier2) -> dict[str, str]:
    """Episodes (sentences and windows, some sharing a source), facts of every kind of belief, and a
    deleted episode whose vector delete is still queued. Returns the uuids of what must stay hidden."""
    for i, text in enumerate([
        "Alice lives in Munich now", "Alice moved from Berlin", "the orange cat sleeps on the sofa",
        "Lena started the garden project", "the cat sleeps all day", "we fixed the sofa",
    ]):  # fmt: skip
        sem.index_text(text, source_kind="episode", source_type="session", timestamp=1.0e9 + i,
                       source_uuid=f"ep-{i % 4}", session_id="s1")  # fmt: skip
        sem.index_text(f"{text}. And more.", source_kind="episode_window", source_type="session",
                       timestamp=1.0e9 + i, source_uuid=f"ep-{i % 4}", session_id="s1")  # fmt: skip
    sem.index_text("Alice lives in Munich with the orange cat", source_kind="episode", source_type="session",
                   timestamp=1.0e9, source_uuid="ep-deleted")  # fmt: skip
    old = t2.facts.store("Alice lives in Berlin", subject="alice", predicate="lives_in", object="Berlin").fact
    new = t2.facts.store("Alice lives in Munich", subject="alice", predicate="lives_in", object="Munich").fact
    expired = t2.facts.store("Alice lives in a tent", expires_at=time.time() - 60.0).fact
    archived = []
    for i in range(5):  # the closest matches of a query, all archived: the fact view must look further
        fact = t2.facts.store(f"the orange cat sleeps on the sofa {i}").fact
        archived.append(fact)
    kept = [t2.facts.store(text).fact for text in ("an orange cat", "a sofa by the window", "Lena gardens")]
    for fact in [old, new, expired, *archived, *kept]:
        sem.index_fact(fact)
    sem.drain()
    for fact in archived:
        t2.facts.delete(fact.uuid, soft=True)
    with t2.db.atomic():
        assert sem.unindex("episode", "ep-deleted") == 1  # its vector stays until the next drain
    archived_uuids = {f"archived{i}": f.uuid for i, f in enumerate(archived)}
    return {"old": old.uuid, "expired": expired.uuid, **archived_uuids}


@pytest.mark.parametrize("backend", ["memory", "qdrant"])
def test_source_scores_equal_the_per_view_searches(tmp_path: Path, opened: list[Any], backend: str) -> None:
    sem, t2 = _open(tmp_path, opened, backend)
    hidden = _fill(sem, t2)
    assert sem.backend(CHUNKS_COLLECTION).count(filters={"source_uuid": "ep-deleted"}) == 1
    for query in QUERIES:
        for limits in (LIMITS, {"episode": 50, "fact": 50}, {"fact": 1}):
            got = sem.source_scores(query, limits)
            assert got == _by_search(sem, query, limits), (query, limits)
            assert list(got) == list(limits)
            every = {source for found in got.values() for source in found}
            assert "ep-deleted" not in every and not every & set(hidden.values())
    # the fact view filled its limit past the archived top hits
    cat = sem.source_scores("the orange cat sleeps on the sofa", {"fact": 2})["fact"]
    assert len(cat) == 2 and not set(cat) & set(hidden.values())


def test_one_embedding_no_payload_text_no_chunk_rows(
    tmp_path: Path, opened: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sem, t2 = _open(tmp_path, opened)
    _fill(sem, t2)
    expected = _by_search(sem, "Alice lives in Munich", LIMITS)
    embedded: list[list[str]] = []
    real_embed = sem.embedder.embed_query

    def embed_query(texts: list[str]) -> Any:
        embedded.append(texts)
        return real_embed(texts)

    monkeypatch.setattr(sem.embedder, "embed_query", embed_query)
    backend = sem.backend(CHUNKS_COLLECTION)
    payload_keys: set[str] = set()
    real_search = backend.search

    def search(*args: Any, **kwargs: Any) -> Any:
        hits = real_search(*args, **kwargs)
        payload_keys.update(k for h in hits for k in h.payload)
        return hits

    monkeypatch.setattr(backend, "search", search)

    def no_rows(uuids: Any) -> Any:
        raise AssertionError("source_scores must not load chunk rows")

    monkeypatch.setattr(t2.chunks, "get_many", no_rows)
    assert sem.source_scores("Alice lives in Munich", LIMITS) == expected
    assert embedded == [["Alice lives in Munich"]]
    assert payload_keys == {"source_kind", "source_uuid"}


def test_bad_views_are_refused_before_embedding(tmp_path: Path, opened: list[Any]) -> None:
    sem, _ = _open(tmp_path, opened)
    assert sem.source_scores("anything", {}) == {}
    for limits in ({"episode": 0}, {"episode": 3, "fact": -1}, {"episode": True}, {"episode": 2.0}):
        with pytest.raises(ValidationError):
            sem.source_scores("anything", limits)
    assert sem._embedder is None  # nothing was embedded (the embedder was never even built)


def test_source_scores_see_only_the_views_scopes(tmp_path: Path, opened: list[Any]) -> None:
    sem_a, t2_a = _open(tmp_path, opened, view=ScopeView.of("agent-a"))
    t2_b = Tier2.open(t2_a.db.path, view=ScopeView.of("agent-b"))
    opened.append(t2_b)
    sem_b = sem_a.view(t2_b)
    for sem, owner in ((sem_a, "a"), (sem_b, "b")):
        sem.index_text("Zanzibar holiday with Quentin", source_kind="episode", source_type="session",
                       timestamp=1.0e9, source_uuid=f"ep-{owner}")  # fmt: skip
        fact = (t2_a if owner == "a" else t2_b).facts.store(f"Quentin flies to Zanzibar {owner}").fact
        sem.index_fact(fact)
    sem_a.drain()
    limits = {"episode": 10, "fact": 10}
    seen_a = sem_a.source_scores("Zanzibar Quentin", limits)
    seen_b = sem_b.source_scores("Zanzibar Quentin", limits)
    assert set(seen_a["episode"]) == {"ep-a"} and set(seen_b["episode"]) == {"ep-b"}
    assert len(seen_a["fact"]) == len(seen_b["fact"]) == 1 and seen_a["fact"] != seen_b["fact"]
    assert seen_a == _by_search(sem_a, "Zanzibar Quentin", limits)
    assert seen_b == _by_search(sem_b, "Zanzibar Quentin", limits)
    admin = sem_a.view(t2_a.admin()).source_scores("Zanzibar Quentin", limits)
    assert set(admin["episode"]) == {"ep-a", "ep-b"} and len(admin["fact"]) == 2


def test_below_the_threshold_one_exact_pass_answers_every_kind(
    tmp_path: Path, opened: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sem, t2 = _open(tmp_path, opened, "qdrant", engine=False)  # a small store: the exact index answers
    hidden = _fill(sem, t2)
    index = sem._exact_index()
    calls: list[tuple[str, int]] = []  # (method, views asked)
    for name in ("search", "search_many", "search_values"):
        real = getattr(index, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append((_name, 1 if _name == "search" else len(args[1])))
            return _real(*args, **kwargs)

        monkeypatch.setattr(index, name, counted)
    for query in QUERIES:
        for limits in (LIMITS, {"episode": 50, "fact": 50}, {"fact": 1}):
            calls.clear()
            got = sem.source_scores(query, limits)
            # one pass over every kind (their values, no hits built), then refills of one view each
            assert calls[0] == ("search_values", len(limits)), calls
            assert all(views == 1 for _, views in calls[1:]), calls
            assert got == _by_search(sem, query, limits), (query, limits)
            every = {source for found in got.values() for source in found}
            assert "ep-deleted" not in every and not every & set(hidden.values())
    cat = sem.source_scores("the orange cat sleeps on the sofa", {"fact": 2})["fact"]
    assert len(cat) == 2 and not set(cat) & set(hidden.values())
    assert sem.opened_backends() == [] and not list(tmp_path.rglob("qdrant"))  # the engine never opened



def test_the_fact_view_is_read_deep_enough_in_one_pass(
    tmp_path: Path, opened: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced and expired facts keep their vectors: the fact view reads FACT_DEPTH times deeper at
    once, so one of them nearest costs no second search."""
    sem, t2 = _open(tmp_path, opened, "qdrant", engine=False)
    hidden = _fill(sem, t2)
    index = sem._exact_index()
    query = "Alice lives in a tent in Berlin"
    vector = sem.embedder.embed_query([query])[0]
    nearest = index.search_values(vector, {"fact": (1, {"source_kind": "fact"})}, "source_uuid")["fact"]
    assert nearest is not None and nearest[0][0] in hidden.values()  # a hidden fact is the nearest
    passes: list[int] = []
    real = index.search_values

    def counted(*args: Any, **kwargs: Any) -> Any:
        passes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(index, "search_values", counted)
    got = sem.source_scores(query, {"fact": 1})
    assert passes == [1]
    assert got == _by_search(sem, query, {"fact": 1}) and not set(got["fact"]) & set(hidden.values())
