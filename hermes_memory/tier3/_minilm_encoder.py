"""What the encoders of all-MiniLM-L6-v2 share (``local-fp32`` in ``minilm_embedder``, ``local`` in
``int8_embedder``): texts run once, sorted by word pieces, in forward passes of near-equal length."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hermes_memory.tier3.embedder import (
    _LRU,
    BaseEmbedder,
    FloatArray,
    Kind,
    PieceTable,
    check_texts,
)
from hermes_memory.tier3.local_embedder import MINILM_DIM

if TYPE_CHECKING:
    from hermes_memory.tier3.minilm_embedder import MiniLMModel


class MiniLMEncoder(BaseEmbedder):
    """What the encoders of all-MiniLM-L6-v2 (fp32 here, int8 in ``int8_embedder``) share: a
    ``MiniLMModel`` (``model``, loaded on first use) run over texts sorted by token length, in forward
    passes of at most ``_batch_size`` texts of near-equal length.

    A document text is run once: one repeated within a call, or among the last ``RECENT_TEXTS``
    documents embedded (the update detector's statements are embedded while a turn is written and often
    come back as the text of a fact embedded right after: 9 % of the texts of a LoCoMo conversation),
    is served from the vector already made. The vectors do not change: each is what the model gives for
    the text alone, up to float rounding (padding in a batch is masked out). Queries keep their own
    cache; ``_embed`` is the model's pass alone.
    """

    RECENT_TEXTS = 2048  # 3 MB of vectors
    #: Whether a few texts to be stored also run on the bulk threads (``_embed``).
    FEW_TO_STORE_WIDE = True
    _batch_size: int
    _recent: _LRU | None = None

    @property
    def model(self) -> MiniLMModel:
        raise NotImplementedError

    @property
    def dim(self) -> int:
        return MINILM_DIM

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP] (loads the model)."""
        return self.model.count_tokens(text)

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        """``StaticVectors``: each word's word-piece ids (loads the model)."""
        return self.model.word_pieces(words)

    @property
    def piece_vectors(self) -> PieceTable:
        """``StaticVectors``: the model's input vector of every word piece (loads the model)."""
        return self.model.piece_vectors

    @property
    def recent_texts(self) -> _LRU:
        """The vectors of the documents embedded last (created on first use)."""
        if self._recent is None:
            self._recent = _LRU(self.RECENT_TEXTS)
        return self._recent

    def embed_document(self, texts: Sequence[str]) -> FloatArray:
        """Embed texts to be stored, each distinct text not run lately run once (see the class).

        Raises ValidationError (bad texts), EmbeddingError (bad output).
        """
        return self._embed_through(self.recent_texts, check_texts(texts), "document")

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        """The model's pass over ``texts`` (no reuse): sorted by word pieces, ``_batch_size`` per pass.
        More texts than one pass holds run wide (the model's ``batch_threads``), and with
        ``FEW_TO_STORE_WIDE`` any texts to be stored: in float products the write path's few short
        statements at a time ran 1.6x faster on two threads. A question stays on one thread, beside
        whatever else the machine runs."""
        model = self.model
        encoded = [model.token_ids(t) for t in texts]
        out = np.empty((len(texts), MINILM_DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        wide = len(texts) > self._batch_size or (kind == "document" and self.FEW_TO_STORE_WIDE)
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = model.encode([encoded[i] for i in rows], wide)
        return out


__all__ = ["MiniLMEncoder"]
