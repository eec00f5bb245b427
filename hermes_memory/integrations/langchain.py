"""A LangChain retriever over ``MemoryAPI.recall``: ``pip install 'hermes-memory-tiers[langchain]'``.

``HermesMemoryRetriever(memory=api)`` turns each recall hit into a ``Document``: ``page_content`` is the
hit's text, ``metadata`` its ``id``, ``kind``, ``tier``, ``source`` (in words), ``score`` (in [0, 1],
higher is closer), ``source_ids`` and ``timestamp`` (epoch seconds, UTC), next to the hit's own metadata
(``session_id``, ``category``, ``superseded_at``, ...). ``invoke`` calls ``MemoryAPI.recall`` on the
caller's thread; ``ainvoke`` calls it through ``AsyncMemoryAPI`` (never on the event loop). A failed
recall raises the error it names (``ValidationError`` for a bad query or limit, ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_memory.api.async_api import AsyncMemoryAPI
from hermes_memory.api.envelope import Envelope
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import DependencyMissingError, HermesMemoryError

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import PrivateAttr
except ImportError as exc:
    raise DependencyMissingError(
        f"the LangChain retriever needs langchain-core ({exc}); pip install 'hermes-memory-tiers[langchain]'"
    ) from exc


class HermesMemoryRetriever(BaseRetriever):
    """Documents for a query from every tier of a hermes-memory store, in recall's fused order.

    ``memory`` is a MemoryAPI or an AsyncMemoryAPI (the retriever never closes it); ``tiers``, ``limit``
    (hits in all, default 10), ``limit_per_tier``, ``as_of`` and ``session_id`` are passed to
    ``recall`` as they are, and checked there.
    """

    memory: MemoryAPI | AsyncMemoryAPI
    tiers: list[str] | None = None
    limit: int | None = None
    limit_per_tier: int | None = None
    as_of: float | None = None
    session_id: str | None = None

    _async_memory: AsyncMemoryAPI | None = PrivateAttr(default=None)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        api = self.memory.api if isinstance(self.memory, AsyncMemoryAPI) else self.memory
        found = api.recall(
            query, self.tiers, self.limit, self.as_of,
            session_id=self.session_id, limit_per_tier=self.limit_per_tier,
        )  # fmt: skip
        return documents(found)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = await self._async().call(
            MemoryAPI.recall, query, self.tiers, self.limit, self.as_of,
            session_id=self.session_id, limit_per_tier=self.limit_per_tier,
        )  # fmt: skip
        return documents(found)

    def _async(self) -> AsyncMemoryAPI:
        if isinstance(self.memory, AsyncMemoryAPI):
            return self.memory
        if self._async_memory is None:
            # Its worker thread is this retriever's; it ends when the retriever is dropped.
            self._async_memory = AsyncMemoryAPI(self.memory)
        return self._async_memory


def documents(envelope: Envelope) -> list[Document]:
    """A ``recall`` envelope's hits as LangChain documents. Raises the error a failed envelope names
    (a HermesMemoryError subclass, by ``meta.error_type``)."""
    if not envelope["success"]:
        raise _error(envelope)
    out = []
    for hit in envelope["data"]["hits"]:
        metadata: dict[str, Any] = {
            **hit["metadata"],
            **{key: hit[key] for key in ("id", "kind", "tier", "source", "score", "timestamp")},
            "source_ids": list(hit["source_ids"]),
        }
        out.append(Document(page_content=hit["text"], metadata=metadata, id=hit["id"]))
    return out


def _error(envelope: Envelope) -> HermesMemoryError:
    code = envelope["meta"].get("error_type")
    for cls in _error_classes(HermesMemoryError):  # the base before its subclasses: codes may be shared
        if cls.code == code:
            return cls(envelope["error"])
    return HermesMemoryError(envelope["error"])


def _error_classes(base: type[HermesMemoryError]) -> Iterator[type[HermesMemoryError]]:
    queue = [base]
    while queue:
        cls = queue.pop(0)
        yield cls
        queue.extend(cls.__subclasses__())


__all__ = ["HermesMemoryRetriever", "documents"]
