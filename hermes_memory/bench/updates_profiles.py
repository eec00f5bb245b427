"""A person telling their assistant about their life: the update mechanism on held-out material.

The labelled corpus scores pairs, each written about one attribute. A user tells the memory one thing
after another: most of it is the first mention of something (their bank, their commute, their partner's
job), and each new statement meets every fact stored before it. A first mention that closes an earlier,
unrelated fact ("My bank is the Sparkasse" ending "I'm a designer at Pixelwerk") is the false update a
user meets first. ``tests/data/updates_profiles.json`` holds a few such people, message by message, with
the earlier messages each one makes no longer true; nothing is fitted on them. ``tests/data/
updates_unseen.json`` holds pairs in everyday wording written after the rules (``load_unseen``: each pair
told as two messages), never read to write one: how the mechanism does on words nobody tuned it to;
``updates_fresh.json`` and ``updates_blind.json`` (in chat's registers: lower case, no subject) more such
pairs, each written by a session that read none of the rules or the other sets; ``updates_voices.json``
the same in the corpus's own labels and kinds (many Englishes, many relatives and friends of the holder),
written by yet another such session and read by no one before it was first scored;
``updates_dialects.json``, ``updates_sixth.json``, ``updates_seventh.json``, ``updates_eighth.json``,
``updates_ninth.json``, ``updates_tenth.json``, ``updates_eleventh.json``, ``updates_twelfth.json``,
``updates_thirteenth.json`` to ``updates_seventeenth.json`` thirteen more such sets (Scottish, Welsh,
Kenyan, Philippine, Jamaican, Ghanaian, Malaysian, Zimbabwean, Pakistani English, ...). The decision
learns from the sets up to the fourteenth as well (``TRAINING_SETS``); the fifteenth to the seventeenth
are held out (``HELD_OUT_SETS``).

``score`` replays each profile as the write path meets it: every message's statements against the open
statements of the messages before it (a closed one is closed for good), and counts the closures that
are right, wrong and missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.holders import named_holders
from hermes_memory.updates.message import read_message
from hermes_memory.updates.statement import Known, Statement

DEFAULT_PROFILES = Path(__file__).resolve().parents[2] / "tests" / "data" / "updates_profiles.json"
DEFAULT_UNSEEN = Path(__file__).resolve().parents[2] / "tests" / "data" / "updates_unseen.json"
DEFAULT_FRESH = DEFAULT_UNSEEN.with_name("updates_fresh.json")
DEFAULT_BLIND = DEFAULT_UNSEEN.with_name("updates_blind.json")
DEFAULT_VOICES = DEFAULT_UNSEEN.with_name("updates_voices.json")
DEFAULT_DIALECTS = DEFAULT_UNSEEN.with_name("updates_dialects.json")
DEFAULT_SIXTH = DEFAULT_UNSEEN.with_name("updates_sixth.json")
DEFAULT_SEVENTH = DEFAULT_UNSEEN.with_name("updates_seventh.json")
DEFAULT_EIGHTH = DEFAULT_UNSEEN.with_name("updates_eighth.json")
DEFAULT_NINTH = DEFAULT_UNSEEN.with_name("updates_ninth.json")
DEFAULT_TENTH = DEFAULT_UNSEEN.with_name("updates_tenth.json")
DEFAULT_ELEVENTH = DEFAULT_UNSEEN.with_name("updates_eleventh.json")
DEFAULT_TWELFTH = DEFAULT_UNSEEN.with_name("updates_twelfth.json")
DEFAULT_THIRTEENTH = DEFAULT_UNSEEN.with_name("updates_thirteenth.json")
DEFAULT_FOURTEENTH = DEFAULT_UNSEEN.with_name("updates_fourteenth.json")
DEFAULT_FIFTEENTH = DEFAULT_UNSEEN.with_name("updates_fifteenth.json")
DEFAULT_SIXTEENTH = DEFAULT_UNSEEN.with_name("updates_sixteenth.json")
DEFAULT_SEVENTEENTH = DEFAULT_UNSEEN.with_name("updates_seventeenth.json")
_LABELS = ("update", "none", "addition", "unrelated")
#: The sets of pairs in everyday wording the decision also learns from (``bench.updates``): scored
#: in-sample by the shipped model, and held out set by set by the bench's cross-set figure.
TRAINING_SETS = (
    DEFAULT_UNSEEN,
    DEFAULT_FRESH,
    DEFAULT_BLIND,
    DEFAULT_VOICES,
    DEFAULT_DIALECTS,
    DEFAULT_SIXTH,
    DEFAULT_SEVENTH,
    DEFAULT_EIGHTH,
    DEFAULT_NINTH,
    DEFAULT_TENTH,
    DEFAULT_ELEVENTH,
    DEFAULT_TWELFTH,
    DEFAULT_THIRTEENTH,
    DEFAULT_FOURTEENTH,
)
#: The sets nothing is fitted on: how the shipped decision does on words nobody tuned it to.
HELD_OUT_SETS = (DEFAULT_FIFTEENTH, DEFAULT_SIXTEENTH, DEFAULT_SEVENTEENTH)
#: Every set, the bench tells the fitted model each one.
UNSEEN_SETS = TRAINING_SETS + HELD_OUT_SETS


def load_profiles(path: Path) -> list[dict[str, Any]]:
    """The profiles: each a name and its messages (``text``, and ``closes``: earlier message indexes)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    profiles: list[dict[str, Any]] = data["profiles"]
    return profiles


def load_unseen(path: Path) -> list[dict[str, Any]]:
    """Labelled pairs never fitted on (``earlier``, ``later``, ``label``: "update", or "none" or one of the
    corpus's labels that are no update: "addition", "unrelated"), each as a profile of two messages that
    ``score`` replays: the later one closes the earlier one's statements when the label says so. Raises
    ValueError for any other label."""
    pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    out: list[dict[str, Any]] = []
    for pair in pairs:
        if pair["label"] not in _LABELS:
            raise ValueError(f"{pair['id']}: label {pair['label']!r} is none of {', '.join(_LABELS)}")
        closes = [0] if pair["label"] == "update" else []
        out.append({"name": pair["id"], "messages": [{"text": pair["earlier"]},
                                                     {"text": pair["later"], "closes": closes}]})  # fmt: skip
    return out


def score(
    profiles: Sequence[dict[str, Any]],
    detector: UpdateDetector,
    holders: Callable[..., Known],
    stored: Callable[[str, Known], list[Statement]],
    when: Any,
) -> dict[str, Any]:
    """True, false and missed closures over ``profiles`` (by message), and each wrong or missed one.
    ``holders(text)``: whom a message makes the store know (what the store knows is the union over the
    messages so far); ``stored(text, known)``: the statements the store holds after a message; ``when``:
    the time the messages are read at."""
    right = wrong = missed = wanted = 0
    errors: list[dict[str, Any]] = []
    for profile in profiles:
        texts = [m["text"] for m in profile["messages"]]
        open_: list[tuple[Statement, int]] = []
        known = Known()
        subjects: set[str] = set()
        for n, message in enumerate(profile["messages"]):
            told = holders(texts[n])  # each message read once, not again with every later one
            known = Known(known.holders | told.holders, known.things | told.things)
            heard = read_message(
                texts[n], when=when, holders=known.holders, things=known.things, subjects=subjects
            )
            later = [s for _, s in heard]
            closed: set[int] = set()
            for new in later:
                if not new.asserts or not open_:
                    continue
                candidates = [s for s, _ in open_]
                sources = [frozenset({str(said)}) for _, said in open_]
                context = [s for s in later if s is not new]
                ended = {r.index for r in detector.replaced(new, candidates, context, sources)}
                closed.update(open_[i][1] for i in ended)
                open_ = [item for i, item in enumerate(open_) if i not in ended]
            want = set(message.get("closes", ()))
            wanted += len(want)
            right += len(want & closed)
            wrong += len(closed - want)
            missed += len(want - closed)
            if closed != want:
                errors.append({"profile": profile["name"], "message": n, "text": texts[n],
                               "closed": sorted(closed), "wanted": sorted(want)})  # fmt: skip
            kept = stored(texts[n], known)
            subjects |= named_holders(kept)
            open_.extend((s, n) for s in kept)
    return {"messages": sum(len(p["messages"]) for p in profiles), "updates": wanted, "right": right,
            "wrong": wrong, "missed": missed, "errors": errors}  # fmt: skip


__all__ = [
    "DEFAULT_BLIND",
    "DEFAULT_DIALECTS",
    "DEFAULT_EIGHTH",
    "DEFAULT_ELEVENTH",
    "DEFAULT_FIFTEENTH",
    "DEFAULT_FOURTEENTH",
    "DEFAULT_FRESH",
    "DEFAULT_NINTH",
    "DEFAULT_PROFILES",
    "DEFAULT_SEVENTEENTH",
    "DEFAULT_SEVENTH",
    "DEFAULT_SIXTEENTH",
    "DEFAULT_SIXTH",
    "DEFAULT_TENTH",
    "DEFAULT_THIRTEENTH",
    "DEFAULT_TWELFTH",
    "DEFAULT_UNSEEN",
    "DEFAULT_VOICES",
    "HELD_OUT_SETS",
    "TRAINING_SETS",
    "UNSEEN_SETS",
    "load_profiles",
    "load_unseen",
    "score",
]
