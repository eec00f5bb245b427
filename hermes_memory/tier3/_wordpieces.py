"""MiniLM's tokenizer, shared by the int8 (default) and fp32 encoders: word pieces cut to the window.

The tokenizer is ``tokenizer.json`` run by the ``tokenizers`` package with its fixed 128-token padding
and truncation switched off: a single query runs at its own length, batches are grouped by length so
padding costs little, and texts over the window are cut the way the model's tokenizer cuts them (the
head of the word pieces, then ``[SEP]``).
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

from hermes_memory.errors import DependencyMissingError, EmbeddingError

# Words whose pieces ``WordPieces.word_pieces`` keeps (a few MB; the cache starts over when full).
_PIECES_CACHE = 50_000


def require(module: str, extra: str) -> None:
    """Raise DependencyMissingError naming ``extra`` when ``module`` cannot be imported."""
    if importlib.util.find_spec(module) is None:
        raise DependencyMissingError(f"the local embedder needs {module!r}: {extra}")


class WordPieces:
    """Word-piece ids of texts and words under one ``tokenizer.json``, cut to ``max_tokens``.

    Raises DependencyMissingError without ``tokenizers``; EmbeddingError when the file cannot be loaded or
    lacks the ``[SEP]`` token.
    """

    def __init__(self, path: Path, max_tokens: int, extra: str) -> None:
        require("tokenizers", extra)
        tokenizers = importlib.import_module("tokenizers")
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception as exc:
            raise EmbeddingError(f"cannot load the MiniLM tokenizer {path}: {exc}") from exc
        # The packaged tokenizer pads every text to 128 and truncates at 128; both are done here instead.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer
        sep = tokenizer.token_to_id("[SEP]")
        if sep is None:
            raise EmbeddingError(f"the MiniLM tokenizer {path} has no [SEP] token")
        self._sep_id = int(sep)
        self.max_tokens = max_tokens
        self._pieces: dict[str, tuple[int, ...]] = {}  # word -> its pieces (``word_pieces``)
        self._pieces_lock = threading.Lock()

    def vocabulary(self) -> list[str]:
        """Every word piece of the tokenizer (special tokens and ``##`` continuations included)."""
        return list(self._tokenizer.get_vocab())

    def token_ids(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` with [CLS]/[SEP], cut to the window as the model's tokenizer cuts."""
        ids: list[int] = self._tokenizer.encode(text).ids
        if len(ids) > self.max_tokens:
            ids = [*ids[: self.max_tokens - 1], self._sep_id]
        return ids

    def batch_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """``token_ids`` of every text, tokenised in one call (the Rust side runs the batch)."""
        out: list[list[int]] = []
        for enc in self._tokenizer.encode_batch(list(texts)):
            ids: list[int] = enc.ids
            if len(ids) > self.max_tokens:
                ids = [*ids[: self.max_tokens - 1], self._sep_id]
            out.append(ids)
        return out

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` including [CLS] and [SEP], without cutting to the window."""
        return len(self._tokenizer.encode(text).ids)

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        """The word-piece ids of each word (no [CLS]/[SEP]; a word the vocabulary lacks is [UNK]). Words
        seen before come from a bounded cache (a conversation's words repeat; the tokenizer call costs
        more than the rest of recall's phrase matching)."""
        known = self._pieces
        missing = list(dict.fromkeys(w for w in words if w not in known))
        if missing:
            encoded = self._joined_pieces(missing)
            with self._pieces_lock:
                if len(known) + len(missing) > _PIECES_CACHE:
                    known.clear()
                for word, pieces in zip(missing, encoded, strict=True):
                    known[word] = pieces
            return [list(known.get(w) or self._word_pieces_now(w)) for w in words]
        return [list(known[w]) for w in words]

    def _joined_pieces(self, words: list[str]) -> list[tuple[int, ...]]:
        """Each word's pieces from one tokenizer call over the words joined by spaces, each piece given
        to the word its first character lies in. The same pieces as each word alone: the BERT
        normaliser works character by character and its pre-tokenizer splits at every space, so no
        piece spans two words. Not ``encode_batch``: it hands the texts to the tokenizer's thread pool
        with the interpreter lock released, and getting that lock back waits for a thread that holds
        it (measured: ~8 ms beside a busy recall thread, ~0.04 ms alone; one ``encode`` of 30 words
        0.11 ms against 0.21 ms for their batch, 0.16 ms one word at a time)."""
        found = self._tokenizer.encode(" ".join(words), add_special_tokens=False)
        out: list[list[int]] = [[] for _ in words]
        ends = list(accumulate(len(word) + 1 for word in words))  # where the word after each one starts
        at = 0
        for piece, (start, _) in zip(found.ids, found.offsets, strict=True):
            while start >= ends[at]:
                at += 1
            out[at].append(piece)
        return [tuple(pieces) for pieces in out]

    def _word_pieces_now(self, word: str) -> tuple[int, ...]:
        """One word's pieces, uncached (another thread cleared the cache meanwhile)."""
        return tuple(self._tokenizer.encode(word, add_special_tokens=False).ids)


__all__ = ["WordPieces", "require"]
