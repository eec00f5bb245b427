"""Category -> instance matching at phrase level: a turn that names an instance of what a question asks
for ranks up ("What martial arts has John done?" <- "I'm off to do some taekwondo").

A list question's evidence rarely says the category word: it names instances, each in another session,
and the whole-turn vectors rank them by everything else the turn says. Here the question's category
phrase (``category_of``: the words after "what/which" up to the verb, "martial arts") is matched against
each candidate turn's short phrases (``phrase_spans``: its clauses, long ones as three-word windows) by
the best cosine over the phrases; phrases that contain a category word themselves are left out (that
match is BM25's). The vectors are context-free: the sum of the embedder's input vectors of a phrase's
word pieces (``tier3.embedder.StaticVectors``), worked out once per turn (``phrases``: one gather and two
running sums, about 0.07 ms; the first ``max_words`` words) and kept in a ``PhraseCache`` bounded by
bytes, so a recall costs one matrix-vector product per candidate, not a model run per phrase. Measured
on LoCoMo dev (an offline re-ranking, docs/research.md, of the engine's top 100, then through the
engine with ``bench/locomo_research.py``): the model's own phrase vectors gain about as much as the input
vectors (offline recall@10 +0.0086 against +0.0073), the same prior from whole-turn vectors gains nothing
(-0.001), and a random prior of the same strength loses.

All cues are generic English: nothing here is taken from a benchmark's questions.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from typing import TYPE_CHECKING

from hermes_memory.tier3.embedder import PieceTable, StaticVectors

if TYPE_CHECKING:  # numpy is imported where used: a read that touches no vector never loads it
    import numpy as np
    import numpy.typing as npt


_WORDS = re.compile(r"[\w'’+-]+")
# Function words: a phrase of only these is no phrase; the category's own content words (``stems``) are
# those not in it. Generic English.
_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can cannot could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself let me more
    most my myself no nor not of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why with would
    you your yours yourself also just will shall might must kind kinds type types sort sorts""".split()
)
# Where the category phrase after "what/which" ends: an auxiliary, a preposition (or a name).
_END = frozenset(
    "has have had does do did is are was were des might would will can could should shall for that to in "
    "on at from with".split()
)
# Clause boundaries: punctuation, dashes and conjunctions.
_CLAUSE = re.compile(
    r"[.!?;:,()\[\]\"]+|\s[-\u2013\u2014]\s"
    r"|\b(?:and|but|so|because|when|while|which|though|although|since|then|or)\b",
    re.I,
)
# Words a clause opens with that are no part of what it names ("I'm", "really", "oh").
_LEAD = frozenset(
    "i i'm i've i'd i'll we we're we've it it's that's this there you you're he she they just really "
    "also so yeah yes oh wow hey hi well um".split()
)
_STEM = 5  # a category word matches a phrase word that starts with its first five letters


def category_of(question: str, names: Sequence[str]) -> str | None:
    """The category a question asks instances of: the words after "what/which" (and "kinds of") up to
    the first auxiliary, preposition or participant's name ("What indoor activities has Jon done…" ->
    "indoor activities"); after "what are (some)" the next few words; "where has X <verb>" -> "places
    <verb>"; "how many N" -> N. None when the question names no category ("What did X research?")."""
    folded = {n.casefold() for n in names}
    m = re.search(r"\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(.*)", question, re.I)
    if m:
        words: list[str] = []
        for word in _WORDS.findall(m.group(1)):
            if word.casefold() in _END or word.casefold().removesuffix("'s") in folded:
                break
            words.append(word)
        if words and words[0].casefold() not in ("are", "is", "some"):
            return " ".join(words)
        rest = re.match(r"(?:are|is)\s+(?:some\s+)?(?:of\s+)?(?:\w+'s?\s+)?(.*)", m.group(1), re.I)
        if rest:
            kept = [w for w in _WORDS.findall(_without(rest.group(1), names)) if w.casefold() not in _END]
            if kept:
                return " ".join(kept[:4])
        return None
    m = re.search(r"\bwhere\s+(?:has|have|did|does|do|is|was)\s+\S+\s+(.*)", question, re.I)
    if m:
        return "places " + _without(m.group(1).rstrip("?"), names)
    m = re.search(r"\bhow many\s+(.*?)\s+(?:has|have|does|do|did|is|are)\b", question, re.I)
    return m.group(1) if m else None


def _without(text: str, names: Sequence[str]) -> str:
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip()


def stems(category: str) -> tuple[str, ...]:
    """The category's content words, cut to their first letters (a phrase with one of them says the
    category itself: BM25 finds it)."""
    return tuple(w.casefold()[:_STEM] for w in _WORDS.findall(category)
                 if w.casefold() not in _STOP and len(w) > 2)  # fmt: skip


def phrase_spans(
    text: str, window: int, max_words: int | None = None
) -> tuple[list[str], list[tuple[int, int]]]:
    """A turn's words and its phrases as (start, end) word ranges: each clause without its opening
    pronoun and filler words, one of at most ``window`` + 2 words whole, a longer one as ``window``-word
    windows one word apart; phrases of function words only are left out. With ``max_words``, only the
    text's first that many words are looked at (the cost and size of a long text's phrases is bounded)."""
    if max_words is not None:
        ends = [m.end() for m in islice(_WORDS.finditer(text), max_words)]
        text = text[: ends[-1]] if ends else ""
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    for clause in _CLAUSE.split(text):
        found = _WORDS.findall(clause)
        while found and found[0].casefold() in _LEAD:
            found = found[1:]
        content = [w.casefold() not in _STOP for w in found]
        if not any(content):
            continue
        start = len(words)
        words.extend(found)
        if len(found) <= window + 2:
            spans.append((start, start + len(found)))
            continue
        for i in range(len(found) - window + 1):
            if any(content[i : i + window]):
                spans.append((start + i, start + i + window))
    return words, spans


@dataclass(frozen=True, slots=True)
class Phrases:
    """A turn's phrases for one embedder: each phrase's context-free vector (the sum of its word pieces'
    input vectors, unit length; a phrase whose sum is zero is left out), its range of words, and the
    turn's words casefolded (to leave out phrases that say the category word), also joined, each after a
    space (a stem opens one of the words only if it follows a space there)."""

    vectors: npt.NDArray[np.float32]  # (phrases, dim)
    spans: npt.NDArray[np.int64]  # (phrases, 2): first word, last word + 1
    words: tuple[str, ...]
    joined: str = ""  # " " + " ".join(words)

    @property
    def nbytes(self) -> int:
        """About what it holds in memory."""
        return (self.vectors.nbytes + self.spans.nbytes + sum(len(w) + 56 for w in self.words)
                + len(self.joined) + 56)  # fmt: skip


def phrases(text: str, embedder: StaticVectors, window: int, max_words: int | None = None) -> Phrases:
    """``phrase_spans`` of ``text`` with their vectors: each phrase's sum of the rows of
    ``embedder.piece_vectors`` of its words' pieces (``embedder.word_pieces``; a word without a piece
    takes row 0), as the difference of two running sums over the turn's pieces (linear in its length)."""
    table = embedder.piece_vectors
    words, spans = phrase_spans(text, window, max_words)
    return _summed(words, spans, embedder.word_pieces(words) if spans else [], table)


def _summed(
    words: list[str], spans: list[tuple[int, int]], pieces: list[list[int]], table: PieceTable
) -> Phrases:
    """``phrases`` of a text whose ``phrase_spans`` are ``words`` and ``spans``, its words' ``pieces`` read
    already (one tokenizer call serves several turns: ``PhraseCache.get_many``)."""
    import numpy as np

    if not spans:
        return Phrases(np.zeros((0, table.shape[1]), dtype=np.float32), np.zeros((0, 2), dtype=np.int64), ())
    per_word = [p or [0] for p in pieces]
    ends = list(accumulate(len(p) for p in per_word))
    running = np.zeros((ends[-1] + 1, table.shape[1]), dtype=np.float32)
    np.cumsum(table[[i for p in per_word for i in p]], axis=0, out=running[1:])
    piece_spans = np.array([(ends[a] - len(per_word[a]), ends[b - 1]) for a, b in spans], dtype=np.int64)
    vectors = running[piece_spans[:, 1]] - running[piece_spans[:, 0]]
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    known = norms > 0
    if not known.all():
        vectors, norms = vectors[known], norms[known]
        spans = [span for span, kept in zip(spans, known, strict=True) if kept]
    vectors /= norms[:, None]
    words_folded = tuple(w.casefold() for w in words)
    joined = " " + " ".join(words_folded)
    return Phrases(vectors, np.array(spans, dtype=np.int64).reshape(-1, 2), words_folded, joined)


class PhraseCache:
    """Each turn's ``Phrases`` (by its uuid, which names one unchanging text), worked out on first use
    and kept, the most recently used first, within ``max_bytes``: a turn's phrase vectors take about 1.5 KB
    per phrase, far more than its row, so they are bounded on their own."""

    def __init__(self, max_bytes: int):
        self._max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, int, int], Phrases] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, uuid: str, text: str, embedder: StaticVectors, window: int, max_words: int) -> Phrases:
        """The phrases of the turn ``uuid`` (its ``text``), worked out unless kept."""
        return self.get_many([(uuid, text)], embedder, window, max_words)[0]

    def get_many(
        self, turns: Sequence[tuple[str, str]], embedder: StaticVectors, window: int, max_words: int
    ) -> list[Phrases]:
        """The phrases of each of ``turns`` (uuid, text), in their order: those not kept worked out with
        one word-piece read for all their words (a recall meets several new turns at once, and each read
        of new words is a tokenizer call with a cost of its own: measured ~20 us, plus ~3 us a word); the
        same phrases as ``phrases``."""
        keys = [(uuid, window, max_words) for uuid, _ in turns]
        with self._lock:
            out: list[Phrases | None] = [self._items.get(key) for key in keys]
            for key, found in zip(keys, out, strict=True):
                if found is not None:
                    self._items.move_to_end(key)
        missing = [i for i, found in enumerate(out) if found is None]
        if not missing:
            return [found for found in out if found is not None]
        table = embedder.piece_vectors
        spans = [phrase_spans(turns[i][1], window, max_words) for i in missing]
        words = [word for found, kept in spans if kept for word in found]
        pieces = iter(embedder.word_pieces(words) if words else [])
        made = [_summed(found, kept, list(islice(pieces, len(found))) if kept else [], table)
                for found, kept in spans]  # fmt: skip
        with self._lock:
            for i, phrases_of in zip(missing, made, strict=True):
                out[i] = phrases_of
                if keys[i] not in self._items:
                    self._items[keys[i]] = phrases_of
                    self._bytes += phrases_of.nbytes
                    while self._bytes > self._max_bytes and len(self._items) > 1:
                        _, dropped = self._items.popitem(last=False)
                        self._bytes -= dropped.nbytes
        return [found for found in out if found is not None]

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._bytes


def query_vector(category: str, embedder: StaticVectors) -> npt.NDArray[np.float32] | None:
    """The category phrase's context-free vector, unit length (None when it has no known piece)."""
    import numpy as np

    pieces = [i for p in embedder.word_pieces(_WORDS.findall(category)) for i in p]
    if not pieces:
        return None
    vec = np.asarray(embedder.piece_vectors[pieces], dtype=np.float32).sum(axis=0)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else None


def best_matches(
    turns: Sequence[Phrases], qvec: npt.NDArray[np.float32], lexical: tuple[str, ...]
) -> list[float | None]:
    """Per turn, the best cosine between ``qvec`` and its phrases' vectors, phrases holding a word that
    starts with a ``lexical`` stem left out; None for a turn with no phrase left."""
    import numpy as np

    out: list[float | None] = []
    heads = tuple(" " + stem for stem in lexical)
    for turn in turns:
        if not len(turn.spans):
            out.append(None)
            continue
        sims = turn.vectors @ qvec
        # Words hold no space: a stem opens one of the turn's words only if it follows a space in them
        # joined by spaces (one search of the joined words; most turns have no such word to look for).
        if heads and any(head in turn.joined for head in heads):
            first, stop = turn.spans[:, 0], turn.spans[:, 1]
            for i, word in enumerate(turn.words):
                if word.startswith(lexical):  # the phrases over this word say the category: left out
                    sims[(first <= i) & (i < stop)] = -np.inf
        best = max(sims.tolist())  # a few dozen phrases: a list's max is quicker than numpy's, the same value
        out.append(best if best > -np.inf else None)
    return out


def instance_order(
    scores: Sequence[float], matches: dict[int, float], keep: int, weight: float
) -> list[float]:
    """A ranked list's ``scores`` (best first) with each matched position (index -> its best cosine)
    raised by ``weight`` times its match rescaled over the matches (the median to 0, the best to 1;
    below the median nothing); the first ``keep`` do not move, the others are held below them (the
    prior reorders what follows the first hits). The caller sorts by the new scores."""
    out = list(scores)
    if weight <= 0 or len(matches) < 2:
        return out
    values = sorted(matches.values())
    top, mid = values[-1], values[len(values) // 2]
    if top <= mid:
        return out
    cap = scores[keep - 1] * (1.0 - 1e-9) if 0 < keep <= len(scores) else float("inf")
    for i, match in matches.items():
        if i >= keep and match > mid:
            out[i] = min(cap, scores[i] * (1.0 + weight * (match - mid) / (top - mid)))
    return out


__all__ = ["PhraseCache", "Phrases", "best_matches", "category_of", "instance_order", "phrase_spans",
           "phrases", "query_vector", "stems"]  # fmt: skip
