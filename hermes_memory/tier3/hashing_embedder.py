"""A deterministic hashing embedder: fast, dependency-free, for unit tests and the contract suite only.

Words and character trigrams are hashed (blake2b, so stable across processes, unlike ``hash()``)
into ``dim`` signed buckets. Texts that share words or spellings land close; there is no meaning.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hermes_memory.errors import ConfigError
from hermes_memory.tier3.embedder import BaseEmbedder, Kind

_WORD = re.compile(r"\w+|[^\w\s]")
_CHAR_WEIGHT = 0.5  # words carry more signal than spelling fragments


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if value >> 63 else -1.0)


class HashingEmbedder(BaseEmbedder):
    """Signed feature hashing of words and character trigrams into ``dim`` buckets."""

    name = "hashing"
    #: Its vectors share words, not meaning: what reads meaning (update detection) does not use them.
    carries_meaning = False

    def __init__(self, dim: int = 384, max_tokens: int = 512, cache_size: int = 1024) -> None:
        if dim <= 0:
            raise ConfigError(f"hashing embedder: dim must be > 0, got {dim}")
        if max_tokens <= 0:
            raise ConfigError(f"hashing embedder: max_tokens must be > 0, got {max_tokens}")
        super().__init__(cache_size=cache_size)
        self._dim = dim
        self._max_tokens = max_tokens
        self.model_id = f"hashing-{dim}" + ("" if max_tokens == 512 else f"-max{max_tokens}")

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """Words and punctuation marks, each one token."""
        return len(_WORD.findall(text))

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        import numpy as np  # where vectors are made: a store opened only to read never loads it

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            lowered = text.lower()
            for word in _WORD.findall(lowered)[: self._max_tokens]:
                idx, sign = _bucket("w:" + word, self._dim)
                out[row, idx] += sign
            padded = f" {' '.join(lowered.split())} "
            for i in range(len(padded) - 2):
                idx, sign = _bucket("c:" + padded[i : i + 3], self._dim)
                out[row, idx] += sign * _CHAR_WEIGHT
        return out


__all__ = ["HashingEmbedder"]
