"""What the update decision learns from, and how the bench holds part of it out.

The decision learns from the labelled corpus (``tests/data/updates_corpus.json``) and from the sets of
pairs in everyday wording (``updates_profiles.TRAINING_SETS``): many voices, registers and Englishes,
each set written by someone who read none of the rules. The corpus counts ``CORPUS_WEIGHT`` times: it is
the one set written to cover every kind of non-update (questions, plans, reported speech, other people)
in balance, and the figures the README promises are its own.

Two figures fit without part of that material and score it:

* **leave-family-out**: the corpus's attribute families are dealt into ``FAMILY_GROUPS`` groups; each
  group is scored by a decision fitted without any pair of its families (the corpus's or a set's of the
  same name), so no cue, weight or threshold was chosen from an attribute it is scored on;
* **cross-set**: the training sets are dealt into ``SET_FOLDS`` folds; each fold's sets are scored by a
  decision fitted on the corpus and the other folds' sets, beside one fitted on the corpus alone.

``HELD_OUT_SETS`` are never fitted on at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hermes_memory.bench.updates import Pair

#: How many times each corpus pair counts among the training pairs: the least weight at which the
#: decision fitted on the corpus and every training set keeps the corpus's precision >= 0.97 and recall
#: >= 0.90 in-sample (measured with every kind taught: 1 gave 0.953 / 0.884, 2 gave 0.958 / 0.903, 3
#: gave 0.971 / 0.901; with ``UNTAUGHT_KINDS`` left out, 3 gives 0.974 / 0.907).
CORPUS_WEIGHT = 3
#: The kinds of change the sets do not teach: an event told as news whose reading as an ending is the
#: reader's judgement ("got the keys to our place in Didsbury" ends "I rent in Salford"; "flew out of
#: Glasgow for a work trip" ends nothing). Taught by the sets too, the decision closed more everyday
#: events: leave-family-out precision 0.944 (against 0.950 without), and 13 false closures on the
#: hand-written probes of everyday events and plans (against 7). The corpus's events, written in balance
#: with events that end nothing, still teach it; a set that labels no kinds is taught whole.
UNTAUGHT_KINDS = frozenset({"event"})
#: The corpus's families are held out in this many groups (one fit each).
FAMILY_GROUPS = 12
#: The training sets are held out in this many folds (one fit each).
SET_FOLDS = 2
#: What joins a counted copy's id to its pair's.
_COPY = "~"

T = TypeVar("T")


def counted(pairs: Sequence[Pair], times: int) -> list[Pair]:
    """Each pair ``times`` times: itself, then copies whose ids say which pair they copy."""
    return [
        p if k == 0 else dataclasses.replace(p, id=f"{p.id}{_COPY}{k}") for p in pairs for k in range(times)
    ]


def original(pair_id: str) -> str:
    """The id of the pair a counted copy copies (a pair's own id for the pair itself)."""
    return pair_id.partition(_COPY)[0]


def taught(pairs: Sequence[Pair]) -> list[Pair]:
    """A training set's pairs the decision learns from: all but the updates of ``UNTAUGHT_KINDS``."""
    return [p for p in pairs if not (p.update and p.kind in UNTAUGHT_KINDS)]


def set_prefix(path: Path) -> str:
    """What a training set's pair ids and unnamed families start with: its file's stem."""
    return f"{path.stem}:"


def dealt(items: Sequence[T], hands: int) -> list[list[T]]:
    """``items`` dealt in order into ``hands`` groups (fewer when there are fewer items), none empty."""
    hands = max(1, min(hands, len(items)))
    return [list(items[i::hands]) for i in range(hands)]


def without_sets(pairs: Sequence[Pair], paths: Sequence[Path]) -> list[Pair]:
    """``pairs`` less those of the sets at ``paths``."""
    prefixes = tuple(set_prefix(p) for p in paths)
    return [p for p in pairs if not p.id.startswith(prefixes)]


__all__ = [
    "CORPUS_WEIGHT",
    "FAMILY_GROUPS",
    "SET_FOLDS",
    "UNTAUGHT_KINDS",
    "counted",
    "dealt",
    "original",
    "set_prefix",
    "taught",
    "without_sets",
]
