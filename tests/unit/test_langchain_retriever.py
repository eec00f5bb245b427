"""The LangChain retriever (issue 17, Engram): recall's hits as Documents, sync and async, over a real
MemoryAPI (hashing embedder). langchain-core is in the dev extra: this runs in CI, never skipped."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda

from hermes_memory import AsyncMemoryAPI, MemoryAPI
from hermes_memory.errors import DependencyMissingError, ValidationError
from hermes_memory.integrations.langchain import HermesMemoryRetriever

FACTS = ["Maya adopted a beagle called Rex", "Maya works at a bakery in Porto", "Rex chews Maya's shoes"]


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    settings: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    opened = MemoryAPI(hermes_home=tmp_path, **settings)
    for text in FACTS:
        _ok(opened.fact_store(text, category="user"))
    _ok(opened.curated_add("User prefers metric units", store="user"))
    _ok(opened.embed_pending())
    yield opened
    opened.close()


def test_it_is_a_langchain_retriever_returning_recall_hits_as_documents(api: MemoryAPI) -> None:
    retriever = HermesMemoryRetriever(memory=api, limit=5)
    assert isinstance(retriever, BaseRetriever)
    hits = _ok(api.recall("beagle", limit=5))["hits"]
    docs = retriever.invoke("beagle")
    assert docs and all(isinstance(doc, Document) for doc in docs)
    assert {doc.id for doc in docs} == {hit["id"] for hit in hits}
    first = docs[0]
    assert first.page_content == FACTS[0]
    meta = first.metadata
    assert meta["kind"] == "fact" and meta["tier"] == "tier2" and meta["source"] == "fact"
    assert meta["id"] == first.id and first.id is not None and first.id.startswith("fact:")
    assert 0.0 < meta["score"] <= 1.0
    assert isinstance(meta["timestamp"], float)
    assert isinstance(meta["source_ids"], list)
    assert meta["category"] == "user"  # the hit's own metadata comes along


def test_async_retrieval_goes_through_the_async_api_and_matches_sync(api: MemoryAPI) -> None:
    over_sync = HermesMemoryRetriever(memory=api, limit=5)
    expected = {doc.id for doc in over_sync.invoke("Where does Maya work?")}

    async def main() -> tuple[list[Document], list[Document], AsyncMemoryAPI | None]:
        from_sync = await over_sync.ainvoke("Where does Maya work?")
        over_async = HermesMemoryRetriever(memory=AsyncMemoryAPI(api), limit=5)
        return from_sync, await over_async.ainvoke("Where does Maya work?"), over_sync._async_memory

    from_sync, from_async, made = asyncio.run(main())
    assert from_sync[0].page_content == from_async[0].page_content == FACTS[1]
    assert {doc.id for doc in from_sync} == {doc.id for doc in from_async} == expected
    assert isinstance(made, AsyncMemoryAPI) and made.api is api  # ainvoke used the async twin


def test_an_async_api_also_serves_sync_invoke(api: MemoryAPI) -> None:
    docs = HermesMemoryRetriever(memory=AsyncMemoryAPI(api), limit=2).invoke("beagle")
    assert len(docs) == 2 and docs[0].page_content == FACTS[0]


def test_recall_arguments_pass_through(api: MemoryAPI) -> None:
    assert len(HermesMemoryRetriever(memory=api, limit=1).invoke("Maya")) == 1
    curated = HermesMemoryRetriever(memory=api, tiers=["tier1"]).invoke("metric units")
    assert [(d.page_content, d.metadata["kind"], d.metadata["source"]) for d in curated] == [
        ("User prefers metric units", "curated", "curated user")
    ]
    per_tier = HermesMemoryRetriever(memory=api, limit_per_tier=1).invoke("Maya beagle metric")
    tiers = [doc.metadata["tier"] for doc in per_tier]
    assert len(tiers) == len(set(tiers))


def test_bad_input_raises_the_error_recall_names(api: MemoryAPI) -> None:
    with pytest.raises(ValidationError, match="limit"):
        HermesMemoryRetriever(memory=api, limit=0).invoke("beagle")
    with pytest.raises(ValidationError, match="tier"):
        asyncio.run(HermesMemoryRetriever(memory=api, tiers=["tier9"]).ainvoke("beagle"))
    with pytest.raises(ValidationError, match="limit_per_tier"):
        HermesMemoryRetriever(memory=api, limit=3, limit_per_tier=1).invoke("beagle")


def test_it_composes_in_a_chain(api: MemoryAPI) -> None:
    chain = HermesMemoryRetriever(memory=api, limit=3) | RunnableLambda(
        lambda docs: "\n".join(doc.page_content for doc in docs)
    )
    assert chain.invoke("beagle").splitlines()[0] == FACTS[0]


def test_without_langchain_core_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "hermes_memory.integrations.langchain")
    monkeypatch.setitem(sys.modules, "langchain_core.retrievers", None)  # what an absent package gives
    with pytest.raises(DependencyMissingError, match=r"hermes-memory-tiers\[langchain\]"):
        importlib.import_module("hermes_memory.integrations.langchain")
