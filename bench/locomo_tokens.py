"""Research (issue 16, item 2): token-level late interaction as new information for re-ranking.

The re-ranker of ``bench/locomo_rerank.py ltr`` found the engine's own features used up. This adds
features the engine does not compute, from the real MiniLM: ColBERT-style MaxSim between the question
and each of its top-100 candidate turns. Every content word piece of the question (no function word,
participant name or punctuation) takes its best cosine with any word piece of the turn; the features
are the mean, the maximum and the mean of the two best of these, and the mean and maximum for the
words of the question's category (``recall.instances.category_of``: "What martial arts has John done?"
-> "martial arts"; 0 without one). The pieces are MiniLM's contextual last-layer states
(``MiniLMModel.hidden_states``), or with ``--static`` the model's input vectors of the pieces (what the
engine's category -> instance prior already reads: no forward pass per candidate).

    python bench/locomo_rerank.py dump --root /tmp/ltr16_stores --out /tmp/ltr16_dump.pkl
    python bench/locomo_tokens.py --dump /tmp/ltr16_dump.pkl --out /tmp/ltr16_tokens.pkl [--static]
    python bench/locomo_rerank.py ltr --dump /tmp/ltr16_tokens.pkl --features base --l2 0.01

The features are inserted after the dump's own (``features`` names them), so ``ltr --features base``
uses them and ``--features NAME,...`` picks any subset.

Measured (2026-11-28, LoCoMo dev, five conversations, real MiniLM, no LLM; the engine recall@10 0.8437,
hit@5 0.8250; pairwise re-ranker trained leave-one-conversation-out, l2 0.01):

    features                          recall@10   hit@5    multi-hop   open-domain
    the dump's 29                     0.8465      0.8263   0.6073      0.6515
    + contextual MaxSim (5)           0.8476      0.8303   0.6097      0.6402
    + static MaxSim (5)               0.8480      0.8303   0.6083      0.6515

The contextual MaxSim is the re-ranker's largest weight once it is there (0.52 standardised, the next
0.33), yet it adds +0.001 recall@10 and +0.004 hit@5 held out (the static one the same), and multi-hop
stays below the engine's own 0.6156: it says again what the turn's vectors say. Shipping the contextual
one would also mean a forward pass per candidate at read time (tens of ms) or every turn's piece states
stored (about 15 KB a turn in int8, 1.5 GB at 100k turns). Dropped.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_research import DEFAULT_DATA

from hermes_memory.bench.locomo import turn_text, turns_of
from hermes_memory.recall.engine import _FUNCTION_WORDS
from hermes_memory.recall.instances import category_of
from hermes_memory.tier3.minilm_embedder import MiniLMModel, load_minilm, packaged_model_dir

FEATURES = ["tok_mean", "tok_max", "tok_top2", "tok_cat", "tok_cat_max"]
Rows = npt.NDArray[np.float32]
_ALNUM = re.compile(r"[a-z0-9]", re.I)


class PieceStates:
    """A text's word pieces as unit vectors (without [CLS] and [SEP]), each with the word it is part of:
    MiniLM's contextual last-layer states, or with ``static`` the model's input vectors of the pieces."""

    def __init__(self, static: bool) -> None:
        folder = packaged_model_dir()
        self.model: MiniLMModel = load_minilm(folder, "numpy", None)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.static = static

    def __call__(self, text: str) -> tuple[Rows, list[str]]:
        enc = self.tokenizer.encode(text)
        ids = enc.ids[: self.model.max_tokens]
        if self.static:
            rows = np.asarray(self.model.piece_vectors[np.array(ids)], dtype=np.float32)
        else:
            hidden, _ = self.model.hidden_states([ids])
            rows = hidden[0]
        rows = rows / (np.linalg.norm(rows, axis=1, keepdims=True) + 1e-9)
        words = [_word_at(text, start, end) for start, end in enc.offsets[: len(ids)]]
        return rows[1:-1], words[1:-1]


def _word_at(text: str, start: int, end: int) -> str:
    """The whole word around the characters ``text[start:end]`` (a piece's word), lower case."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return text[start:end].casefold()


def content_rows(states: tuple[Rows, list[str]], names: set[str]) -> Rows | None:
    """The rows of content word pieces: not a function word, a participant's name or punctuation."""
    rows, words = states
    keep = [bool(_ALNUM.search(w)) and len(w) > 1 and w not in _FUNCTION_WORDS and w not in names
            for w in words]  # fmt: skip
    return rows[np.array(keep, dtype=bool)] if any(keep) else None


def token_features(question: Rows | None, category: Rows | None, turn: Rows) -> list[float]:
    """``FEATURES`` of one candidate turn (0 where the question or the turn has no pieces)."""
    out = [0.0] * len(FEATURES)
    if question is None or not len(turn):
        return out
    best = (question @ turn.T).max(axis=1)
    out[0], out[1], out[2] = float(best.mean()), float(best.max()), float(np.sort(best)[-2:].mean())
    if category is not None:
        cat = (category @ turn.T).max(axis=1)
        out[3], out[4] = float(cat.mean()), float(cat.max())
    return out


def add_features(dump: dict[str, Any], data: list[dict[str, Any]], states: PieceStates) -> None:
    """Insert ``FEATURES`` after the dump's own features, for every question's candidates."""
    texts: dict[tuple[str, str], str] = {}
    people: dict[str, set[str]] = {}
    for sample in data:
        conv = sample["conversation"]
        people[sample["sample_id"]] = {conv["speaker_a"].casefold(), conv["speaker_b"].casefold()}
        for _, _, turn in turns_of(conv):
            texts[(sample["sample_id"], turn["dia_id"])] = turn_text(turn)
    cache: dict[tuple[str, str], Rows] = {}
    width = len(dump["features"])
    for q in dump["questions"]:
        names = people[q["conv"]]
        question = content_rows(states(q["question"]), names)
        cat = category_of(q["question"], [n.title() for n in names])
        category = content_rows(states(cat), names) if cat else None
        rows = []
        for dia in q["order"]:
            key = (q["conv"], dia)
            if key not in cache:
                cache[key] = states(texts[key])[0] if key in texts else np.zeros((0, 1), np.float32)
            rows.append(token_features(question, category, cache[key]))
        new = np.array(rows, dtype=np.float32)
        q["x"] = np.concatenate([q["x"][:, :width], new, q["x"][:, width:]], axis=1)
    dump["features"] = [*dump["features"], *FEATURES]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--dump", type=Path, default=Path("/tmp/ltr16_dump.pkl"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/ltr16_tokens.pkl"))
    ap.add_argument("--static", action="store_true", help="the input vectors of the pieces, no forward pass")
    a = ap.parse_args(argv)
    with a.dump.open("rb") as fh:
        dump = pickle.load(fh)
    add_features(dump, json.loads(a.data.read_text(encoding="utf-8")), PieceStates(a.static))
    with a.out.open("wb") as fh:
        pickle.dump(dump, fh)
    print(f"{a.out}: {len(dump['questions'])} questions, features {dump['features'][-len(FEATURES) :]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
