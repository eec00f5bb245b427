"""Decide whether a new statement replaces earlier ones: same holder, same attribute, a new value.

``UpdateDetector.replaced(new, earlier)`` reads each earlier statement against the new one and returns
those the new one makes no longer true, with the model's probability. The steps, each general:
1. the new statement must assert something (``Statement.asserts``: no question, hypothetical, plan or
   negated event);
2. it must be about the same holder (``same_holder``: the user, a named person, pet, project);
3. the learned model (``model.UpdateModel``) weighs how alike the two are in meaning (MiniLM cosine of
   the statements, and of the statements with their values masked), the words they share, the change
   cues the new one carries, and whether it names a new value; above its threshold it is an update.
Vectors come from the embedder the store already runs (all-MiniLM-L6-v2); a small LRU keeps the vectors
of statements seen recently, so a user's facts are embedded once per process.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hermes_memory.updates.model import UpdateModel, features, packaged, values
from hermes_memory.updates.statement import Statement, about_same

# The shape of a one-valued attribute: "the user's dentist is ...", "... is the user's manager".
_ONE_VALUED = re.compile(
    r"^the user's (?:\w+ ){0,2}?(?:is|are)\b|\bis (?:now )?the user's (?:\w+ ){0,2}?\w+\b", re.I
)

#: Another earlier statement is the same attribute as the one replaced at this cosine or above.
SAME_ATTRIBUTE = 0.6

Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class Replacement:
    """An earlier statement the new one replaces, with the model's probability."""

    index: int
    probability: float


class UpdateDetector:
    """Update decisions over one encoder (texts -> L2-normalised rows) and one fitted model."""

    def __init__(self, encode: Encode, model: UpdateModel | None = None, *, cache_size: int = 4096):
        self._encode = encode
        self.model = model if model is not None else packaged()
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Each text's vector (embedded once, then kept in the LRU)."""
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            for t in found:
                self._cache.move_to_end(t)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            rows = self._encode(missing)
            with self._lock:
                for text, row in zip(missing, rows, strict=True):
                    found[text] = row
                    self._cache[text] = row
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return found

    def features(self, old: Statement, new: Statement) -> list[float]:
        vec = self.vectors([old.normal, new.normal, old.masked, new.masked])
        full = float(vec[old.normal] @ vec[new.normal])
        masked = float(vec[old.masked] @ vec[new.masked])
        return features(
            old, new, full, masked, self.model.cues, vec[new.masked], vec[old.normal], vec[new.normal]
        )

    def says_change(self, new: Statement, old: Statement) -> bool:
        """Whether the new statement carries evidence that ``old`` changed, not only that something else
        is also true: a learned change cue, a negated state ("not ... anymore"), the shape of a one-valued
        attribute ("my dentist is ...", "Tobias is my manager"), or the old value named again in a
        statement that does not merely repeat it ("Sold the Golf and bought a Tesla")."""
        if self.model.cues.strongest(new) >= self.model.cue_min or new.negated:
            return True
        if _ONE_VALUED.search(new.normal) is not None:
            return True
        old_values = values(old)
        return bool(old_values & set(new.words)) and bool(values(new) - old_values)

    @staticmethod
    def holds(old: Statement) -> bool:
        """Whether an earlier statement is a state a newer one can end: one that asserts something in the
        present ("I work at Siemens", "my phone is a Pixel"); not an event told in the past ("I went to a
        poetry reading on Friday"), a plan or a wish."""
        return old.asserts and old.tense != "past"

    def replaced(self, new: Statement, earlier: Sequence[Statement]) -> list[Replacement]:
        """The earlier statements ``new`` makes no longer true, most probable first.

        One statement updates one attribute: the most probable earlier statement is replaced when it is
        above the threshold, and others above it only when they say the same thing as that one (their
        cosine to it at least ``SAME_ATTRIBUTE``: two facts drawn from one old statement)."""
        if not new.asserts or (new.holder is None and not new.mentions):
            return []
        mine = [i for i, old in enumerate(earlier) if about_same(old, new) and self.holds(old)]
        if not mine:
            return []
        vec = self.vectors([new.normal, new.masked, *(earlier[i].normal for i in mine),
                            *(earlier[i].masked for i in mine)])  # fmt: skip
        mine = [i for i in mine if float(vec[earlier[i].normal] @ vec[new.normal]) >= self.model.floor]
        if not mine:
            return []
        scored = sorted(
            ((self.model.probability(self.features(earlier[i], new)), i) for i in mine), reverse=True
        )
        best_p, best = scored[0]
        if best_p < self.model.threshold or not self.says_change(new, earlier[best]):
            return []
        anchor = vec[earlier[best].normal]
        threshold = self.model.threshold
        return [
            Replacement(i, p) for p, i in scored
            if i == best or (p >= threshold and float(vec[earlier[i].normal] @ anchor) >= SAME_ATTRIBUTE)
        ]  # fmt: skip


__all__ = ["SAME_ATTRIBUTE", "Encode", "Replacement", "UpdateDetector"]
