"""The ``fields`` option of ``VectorBackend.search``: the same hits, each with only the payload keys asked
for (every backend of conftest.CASES)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.tier3.chunks import chunk_payload

if TYPE_CHECKING:
    from conftest import Case

DIM = 8


def _seed(case: Case, collection_name: str) -> Any:
    backend = case.open(collection=collection_name, dim=DIM)
    rows = np.random.default_rng(3).normal(size=(10, DIM))
    ids = [f"chunk:{i}" for i in range(10)]
    payloads = [
        chunk_payload(
            chunk_id=ids[i], text=f"turn {i}", source_type="session", timestamp=100.0 + i,
            session_id=f"s{i % 2}", category="event" if i % 3 == 0 else None, scope="agent-a",
            extra={"source_kind": "episode", "source_uuid": f"ep-{i}"},
        )
        for i in range(10)
    ]  # fmt: skip
    backend.upsert(ids, rows, payloads)
    return backend, rows[0], dict(zip(ids, payloads, strict=True))


def test_fields_select_payload_keys_and_keep_the_hits(case: Case, collection_name: str) -> None:
    backend, query, stored = _seed(case, collection_name)
    full = backend.search(query, limit=10, filters={"session_id": "s0"})
    assert len(full) == 5
    assert all(h.payload == stored[h.id] for h in full)  # None: the whole payload, as before
    for fields in (("source_uuid",), ("category", "source_uuid", "category"), ()):
        some = backend.search(query, limit=10, filters={"session_id": "s0"}, fields=fields)
        assert [(h.id, round(h.score, 5)) for h in some] == [(h.id, round(h.score, 5)) for h in full]
        for hit in some:
            # only the asked keys, and of those only the ones the point has (category is absent on some)
            assert hit.payload == {k: v for k, v in stored[hit.id].items() if k in fields}
    assert {h.payload.get("category") for h in backend.search(query, limit=10, fields=["category"])} == {
        "event",
        None,
    }


@pytest.mark.parametrize("fields", ["source_uuid", ["_hm_id"], ["bad name"], [3]])
def test_bad_fields_are_validation_errors(case: Case, collection_name: str, fields: Any) -> None:
    backend, query, _ = _seed(case, collection_name)
    with pytest.raises(ValidationError):
        backend.search(query, limit=3, fields=fields)
