"""The learned part of update detection: which words signal a change, and how the signals combine.

Nothing here is a list of phrasings. Two things are learned from labelled statement pairs
(``tests/data/updates_corpus.json``, by ``python -m hermes_memory.bench.updates --fit``):

- **Change cues**: the log-odds that a word (or two-word sequence) of the later statement belongs to an
  update rather than to an addition or restatement. Only words seen in the later statements of at least
  ``min_families`` different attribute families count, so a cue is a way of speaking ("these days",
  "anymore", "switched", "also"), never a topic ("iPhone", "choir").
- **The decision**: a logistic model over the pair's features and their pairwise products — how alike
  the two statements are in meaning with and without their values (the embedder's cosine), how alike
  what each says that the other does not is (two values of one kind: ``readings.apart``), how many
  words they share, the cue score, and whether the later one negates a state.

The bench refits both without the family it scores (leave-one-family-out), so its held-out figure says
how the mechanism does on attributes nobody labelled.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.updates.endings import begins, ceases, sets_aside
from hermes_memory.updates.events import ended, moves_to_another, names_another, setting_only
from hermes_memory.updates.places import keeps_someone, may_name_anew
from hermes_memory.updates.readings import (
    MEMO,
    additive,
    brief,
    content,
    cue_tokens,
    masked_cues,
    meets,
    named,
    negates_itself,
    news_cues,
    one_more,
    timeless_values,
    values,
    whom,
)
from hermes_memory.updates.shape import (
    IDENTITY,
    another_by_role,
    attribute_words,
    bare,
    one_valued,
    same_attribute,
    same_slot,
)
from hermes_memory.updates.statement import Statement, topic_of

FEATURES: tuple[str, ...] = (
    "cos_full",
    "cos_masked",
    "overlap",
    "cue",
    "cue_x_cos",
    "cue_meaning",
    "affinity",
    "negated",
    "new_value",
    "same_value",
    "old_named",
    "novel",
    "restated",
    "context_cue",
    "ended",
    "one_valued",
    "same_slot",
    "brief",
    "cos_apart",
)
#: A learned change cue counts as evidence of a change from this weight up (``UpdateModel.cue_min``).
CUE_MIN = 0.5
#: A vector as this module takes it: a numpy row (float32, as embedders give them) or any floats.
Vector = npt.NDArray[np.floating[Any]] | Sequence[float]


class _Rows:
    """A model's lists of floats as arrays, each made once per list: scoring one pair converted every
    list on every call. A list assigned anew (the bench sets a fitted affinity) is converted anew.
    Likewise each statement's strongest cue under one dict of cue weights."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[Sequence[float], npt.NDArray[np.float64]]] = {}
        self._strongest: tuple[dict[str, float], dict[str, float]] = ({}, {})

    def strongest(self, weights: dict[str, float]) -> dict[str, float]:
        """The masked forms' strongest cues read under ``weights`` so far (to be filled by the caller)."""
        if self._strongest[0] is not weights or len(self._strongest[1]) > MEMO:
            self._strongest = (weights, {})
        return self._strongest[1]

    def row(self, name: str, values: Sequence[float]) -> npt.NDArray[np.float64]:
        made = self._made.get(name)
        if made is None or made[0] is not values or len(made[1]) != len(values):
            made = (values, np.asarray(values, dtype=np.float64))
            self._made[name] = made
        return made[1]


@dataclass
class Cues:
    """Learned change cues: token -> log-odds of "update" against "not an update"; and a direction in
    the embedder's space along which a statement (values masked) reads as a change — for ways of saying
    it that no labelled pair used."""

    weights: dict[str, float] = field(default_factory=dict)
    direction: list[float] = field(default_factory=list)
    affinity: list[float] = field(default_factory=list)
    ending: list[float] = field(default_factory=list)
    _rows: _Rows = field(default_factory=_Rows, init=False, repr=False, compare=False)

    def score(self, statement: Statement, since: Statement) -> float:
        """The summed weight of the statement's change cues that ``since`` does not carry too."""
        return sum(self.weights.get(t, 0.0) for t in news_cues(statement, since))

    def strongest(self, statement: Statement, since: Statement | None = None) -> float:
        """The weight of the statement's strongest change cue (0 without one); with ``since``, of one that
        statement does not carry too (``news_cues``)."""
        if since is not None:
            return max((self.weights.get(t, 0.0) for t in news_cues(statement, since)), default=0.0)
        known = self._rows.strongest(self.weights)
        found = known.get(statement.masked)
        if found is None:
            tokens = masked_cues(statement.masked)
            found = known[statement.masked] = max((self.weights.get(t, 0.0) for t in tokens), default=0.0)
        return found

    def attribute(self, old_vector: Vector, new_vector: Vector) -> float:
        """A learned, weighted cosine: which of the embedder's dimensions say "the same attribute" (not
        the same value) for two statements."""
        if not self.affinity:
            return 0.0
        product = np.asarray(old_vector, dtype=np.float64) * np.asarray(new_vector, dtype=np.float64)
        return float(product @ self._rows.row("affinity", self.affinity))

    def meaning(self, masked_vector: Vector) -> float:
        if not self.direction:
            return 0.0
        direction = self._rows.row("direction", self.direction)
        return float(np.dot(np.asarray(masked_vector, dtype=np.float64), direction))

    def ends(self, masked_vector: Vector) -> float:
        """How much a past event that names the old value reads as its end ("The Fiesta went to the
        scrapyard") rather than an episode of it ("Left the Volvo at the garage overnight"): the masked
        clause along the learned ending direction (``fit_ending``); 1.0 without one."""
        if not self.ending:
            return 1.0
        ending = self._rows.row("ending", self.ending)
        return float(np.dot(np.asarray(masked_vector, dtype=np.float64), ending))

    @classmethod
    def fit(
        cls,
        later: Sequence[tuple[Statement, bool, str, Vector]],
        talk: Sequence[tuple[Statement, Vector]] = (),
        *,
        first: Sequence[Statement] = (),
        min_families: int = 3,
        alpha: float = 1.0,
        ridge: float = 10.0,
    ) -> Cues:
        """From (later statement, is update, family, its masked form's vector) tuples, ``talk``: real
        conversation's statements (none an update), weighed as much as all the labelled non-updates
        together, and ``first``: facts as first told ("My bank is Chase"). A cue is then a word updates
        use more than additions and everyday talk do, and more than first mentions do: "it's" or "so" open
        corrections in the corpus but are everywhere in chat, "is the" opens a first mention as often as an
        update, "anymore" does neither. First mentions only ever take a word's weight away: the families a
        cue must be seen in are those of the later statements ("to work", common in first mentions, is no
        sign that "I got my licence and drive to work now" changes nothing). The change direction is
        learned from the later statements and talk alone: a first mention is a state in the present,
        against which any past event would read as a change."""
        pos: Counter[str] = Counter()
        neg: Counter[str] = Counter()
        chat: Counter[str] = Counter()
        families: dict[str, set[str]] = defaultdict(set)
        told: Counter[str] = Counter()
        n_pos = sum(1 for _, u, _, _ in later if u)
        n_neg = len(later) - n_pos
        for statement, update, family, _ in later:
            for token in cue_tokens(statement):
                (pos if update else neg)[token] += 1
                families[token].add(family)
        for statement in first:
            told.update(cue_tokens(statement))
        for statement, _ in talk:
            chat.update(cue_tokens(statement))
        weights = {}
        for token, fams in families.items():
            if len(fams) < min_families:
                continue
            p = (pos[token] + alpha) / (n_pos + 2 * alpha)
            q = (neg[token] + alpha) / (n_neg + 2 * alpha)
            if talk:
                q = (q + (chat[token] + alpha) / (len(talk) + 2 * alpha)) / 2
            if first:  # and at least as often as a first mention uses it
                q = max(q, (told[token] + alpha) / (len(first) + 2 * alpha))
            w = math.log(p / q)
            if abs(w) >= 0.5:
                weights[token] = round(w, 4)
        direction = _direction([(v, u) for _, u, _, v in later], [v for _, v in talk], ridge)
        return cls(weights, direction)

    def fit_ending(
        self, told: Sequence[tuple[Vector, bool]], talk: Sequence[Vector] = (), *, ridge: float = 3.0
    ) -> None:
        """The ending direction (``ends``) from the masked vectors of past events that name an earlier
        statement's value, each with whether it ended that statement, and ``talk``: real conversation's
        such events (none an end), weighed together as much as the labelled episodes: a weighted ridge
        regression to +1 / -1."""
        if not any(u for _, u in told) or all(u for _, u in told):
            self.ending = []
            return
        self.ending = _direction(told, talk, ridge)


def _direction(labelled: Sequence[tuple[Vector, bool]], talk: Sequence[Vector], ridge: float) -> list[float]:
    """A direction in the embedder's space along which the labelled vectors that are True lie and the
    others and ``talk`` (real conversation, none True) do not: a ridge regression to +1 / -1 in which
    every talk vector together weighs as much as the labelled False ones."""
    x = np.asarray([v for v, _ in labelled] + list(talk), dtype=np.float64)
    y = np.asarray([1.0 if u else -1.0 for _, u in labelled] + [-1.0] * len(talk))
    share = np.ones(len(x))
    if talk:
        share[len(labelled) :] = max(1, sum(1 for _, u in labelled if not u)) / len(talk)
    xw = x * share[:, None]
    centred = y - np.average(y, weights=share)
    direction = np.linalg.solve(xw.T @ x + ridge * np.eye(x.shape[1]), xw.T @ centred)
    return [round(float(d), 6) for d in direction]


def _names_of(old: Statement, said: Statement) -> bool:
    """Whether a clause names something of ``old``: one of its values, or a content word (a shared stem)."""
    return bool(values(old) & bare(said)) or topic_of(frozenset(content(old)), said.words)


def episode_of(
    old: Statement, new: Statement, cues: Cues, new_masked_vector: Vector, context: Sequence[Statement] = ()
) -> bool:
    """Whether ``new`` tells, in the past, an event with a value of ``old`` (``ended``) that reads as an
    episode of it, not its end: it names the value only as its setting (``setting_only``), or reads so
    along the learned ending direction (``Cues.ends``); or that it left the thing ``old`` names somewhere,
    with someone or for a while (``sets_aside``: "I left my cello at Tom's place"). ``context``: the
    message's other clauses. An event of one day that names, of ``old``, only whom it speaks of is an
    occasion in their life, not the end of what ``old`` says of them ("Mia had her school photo taken
    today" after "My daughter Mia is in reception at Hillside Primary")."""
    if sets_aside(old, new):
        return True
    if not ended(old, new) or ceases(new):
        return False  # "Stopped seeing Dr Vance": an activity ceased, no episode of it
    mine = timeless_values(old)
    if brief(new) and set().union(*(meets(mine, named(s)) for s in (new, *context))) <= whom(old):
        return True  # an occasion of theirs
    return setting_only(old, new, context) or cues.ends(new_masked_vector) <= 0


def evidence(
    old: Statement,
    new: Statement,
    context: Sequence[Statement],
    cues: Cues,
    cue_min: float,
    reads_as_change: bool = False,
    episode: bool = False,
    confident: bool = False,
) -> bool:
    """Whether the message carries evidence that ``old`` changed, not only that something else is also
    true: a learned change cue in the clause or in another clause of the same message that asserts ("The
    Fiesta died, so I'm leasing a Niro"; not one denying a change: "still cheaper, so not moving"), a
    negated state ("not ... anymore"), the shape of a one-valued attribute
    (the old statement's counts only for a clause not told as a past event) or a role held to one person
    at a time said again by its verb with someone else (``another_by_role``),
    the old value named again in the message while the clause names a new one ("Sold the Golf and bought
    a Tesla"; "Spanish never clicked, so it's Italian I study now"),
    or an event told in the past that befell the old value (``ended``). Between two statements that name
    no value (no name, no number), only the clause's own cue, negation or shape counts: in chat, another
    clause's "now" says nothing about "It helps me unwind". ``reads_as_change``: the clause, values
    masked, lies along the learned change direction (``Cues.meaning``), a way of saying it that no cue
    word carries. A clause about no one in particular counts only when it names a value, negates, tells
    a past event or gives the old slot a new identity. The shape
    of a one-valued old statement whose value is someone the memory knows counts only for a clause
    naming someone else or the role (``may_name_anew``). None of it counts between two
    statements that cannot be of one attribute (``same_attribute``), nor for an event told in the past
    when nothing in the message names a value or content word of a one-valued earlier statement, unless
    the decision is sure of it and the event moves something to a value of its own ("Ported my number to
    Mint Mobile": ``moves_to_another``).
    ``episode``: the clause tells, in the past, an event with the old value that reads as an
    episode of it (``episode_of``): "Cancelled Thursday's cleaning with Dr. Okafor" carries a cue, but no
    end of the dentist; only its own negation counts then (``negates_itself``), or the decision being sure
    of an update when the message names another value (``names_another``: "Moved Rufus's records to
    Riverbank").
    ``confident``: the decision itself is sure of an
    update ("My machine runs Ubuntu 24.04 LTS" after "I'm on macOS"), which counts as evidence where none
    of the rules above says the clause ends nothing. A negated clause ends no negated state ("I don't
    have a car either" after "I don't drive"): only an affirmative one does. Someone the memory knows,
    named by their relation ("a husband named Rui"), gives way only to another person, the role named
    again, a negation, a ceasing or an event that befalls them (``keeps_someone``). A clause in the present
    that says a state goes on ("still") or holds beside another (an additive particle: ``additive``) is
    no evidence, nor is a past clause telling how the old state began (``begins``); but a slot in the
    shape of a one-valued attribute holds one value, so there the particle adds to someone else's. A
    subject opened by an additive determiner ("Another podcast I never miss is ...": ``one_more``) names
    one more of several in any shape. An
    earlier statement with the particle says it is one of several: only a negation, a ceasing or an event
    that befalls its value ends it, not a new value."""
    if not same_attribute(new, old):
        return False  # "My laptop is a ThinkPad" says nothing of the phone, whatever its cues
    if "still" in new.words and not new.negated and new.tense != "past":
        return False  # "Kenji's still employed by ...": the continuative aspect says a state goes on
    if begins(old, new):
        return False  # "Started my own clothing store a while ago": how the old state began, no end of it
    besides = additive(new) and not new.negated and not one_valued(new)
    if besides and not (new.tense == "past" and ended(old, new)):
        return False  # "I'm also on call", "also got cup tickets": beside ("also sold the Golf" may end it)
    if one_more(new):
        return False  # "Another podcast I never miss is Hidden Brain": one more of several, in any shape
    one_of_several = (additive(old) and not one_valued(old)) or one_more(old)
    if one_of_several and not (new.negated or ceases(new) or ended(old, new, context)):
        return False  # "Tim has also taken up the cello", one of several: only what names it ends it
    message = (new, *context)
    unnamed = new.tense == "past" and attribute_words(old) and not any(_names_of(old, s) for s in message)
    if unnamed and not (confident and moves_to_another(old, new)):  # "Ported my number to Mint Mobile" may
        return False  # "We tried the new noodle bar" names nothing of "the user's dentist is Dr. Okafor"
    if episode and not negates_itself(new) and not (confident and names_another(old, new, context)):
        return False  # "Cancelled Thursday's cleaning with Dr. Okafor": an episode, whatever its cues
    old_values = values(old)
    said = message if old_values or values(new) else (new,)
    # A clause about no one in particular that names nothing ("Searching for a venue has been slow", "the
    # studio's on shaky ground right now") tells how something goes, whatever its cues; it sets no value.
    # It may set one by naming the old slot with a new identity ("actually the landlord's a private guy").
    if new.holder is None and not (
        values(new) or new.negated or new.tense == "past"
        or (same_slot(old, new) and IDENTITY.search(new.normal) is not None)
    ):  # fmt: skip
        return False  # about no one, naming nothing: "The studio's on shaky ground right now" ends nothing
    if old.negated and new.negated:
        return False  # "I don't have a car either" after "I don't drive": a negation ends no negated state
    if keeps_someone(old, new, context):
        return False  # "I drive an old Renault Clio" ends no "the user has a husband named Rui"
    cued = any(cues.strongest(s, old) >= cue_min for s in said if s is new or s.asserts)
    if confident or reads_as_change or new.negated or ceases(new) or cued:
        return True
    if one_valued(new) or (one_valued(old) and new.tense != "past" and may_name_anew(old, new)):
        return True  # a past event ("tried the new noodle bar") sets no present value of the old's slot
    if another_by_role(old, new):
        return True  # "I report to Marcus Bell now" after "I report to Sunita Rao": a role of one at a time
    named_again = any(old_values & named(s) for s in message)
    return bool(named_again and values(new) - old_values) or ended(old, new, context)


def features(
    old: Statement,
    new: Statement,
    cos_full: float,
    cos_masked: float,
    cues: Cues,
    new_masked_vector: Vector,
    old_vector: Vector = (),
    new_vector: Vector = (),
    context: Sequence[Statement] = (),
    cos_apart: float = 0.0,
) -> list[float]:
    """The pair's feature vector (``FEATURES``' order); ``context``: the message's other clauses;
    ``cos_apart``: the cosine of what each statement says that the other does not (``readings.apart``; 0
    when one of them says nothing the other does not)."""
    a, b = content(old), content(new)
    overlap = len(a & b) / max(1, min(len(a), len(b)))
    cue = cues.score(new, old)  # a cue both statements carry is no news of a change
    old_values, new_values = timeless_values(old), timeless_values(new)  # a day or month is when, not what
    return [
        cos_full,
        cos_masked,
        overlap,
        cue,
        cue * cos_full,
        cues.meaning(new_masked_vector),
        cues.attribute(old_vector, new_vector) if len(old_vector) else 0.0,
        1.0 if new.negated else 0.0,
        1.0 if new_values - old_values else 0.0,
        1.0 if new_values and new_values <= old_values else 0.0,
        len(old_values & set(new.words)) / len(old_values) if old_values else 0.0,
        len(b - a) / len(b) if b else 0.0,
        # The old statement's words said again with no negation and no change cue: the same value.
        (len(a & b) / len(a) if a else 0.0) * (0.0 if new.negated or cue > 0 else 1.0),
        max((cues.strongest(s) for s in context if s.asserts), default=0.0),  # none from "so not moving"
        1.0 if ended(old, new, context) and cues.ends(new_masked_vector) > 0
        and not setting_only(old, new, context) else 0.0,
        1.0 if one_valued(new) else 0.0,
        1.0 if same_slot(old, new) else 0.0,
        1.0 if brief(new) else 0.0,
        cos_apart,
    ]


@dataclass
class UpdateModel:
    """Cues plus a logistic decision over ``features``; ``threshold`` on its probability."""

    cues: Cues
    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    threshold: float
    #: The replaced statement's cosine to the new one is at least this (a new statement about another
    #: attribute never closes anything, however its words read).
    floor: float = 0.0
    #: A change cue counts as evidence of a change from this learned weight up.
    cue_min: float = CUE_MIN
    #: A clause reads as a change (``Cues.meaning`` of its masked vector) from this value up.
    meaning_min: float = 0.1
    #: From this probability the decision's own reading of a pair counts as evidence of a change
    #: (``evidence``'s ``confident``): fitted as the threshold is, to a training precision.
    sure: float = 0.5
    _rows: _Rows = field(default_factory=_Rows, init=False, repr=False, compare=False)

    def probability(self, x: Sequence[float]) -> float:
        # Each term ``w * (v - m) / s`` is taken elementwise (the same IEEE operations, in the same
        # order, as on Python floats) and summed by ``sum`` in feature order, as ever: the same float.
        rows = self._rows
        terms = rows.row("weights", self.weights) * (interactions(x) - rows.row("mean", self.mean))
        terms /= rows.row("scale", self.scale)
        z = self.bias + sum(terms.tolist())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def raise_threshold(self, cut: float) -> None:
        """The threshold at least ``cut``; ``sure`` never below the threshold."""
        self.threshold = max(self.threshold, cut)
        self.sure = max(self.sure, self.threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(v, 6) for v in self.mean],
            "scale": [round(v, 6) for v in self.scale],
            "threshold": round(self.threshold, 4),
            "floor": round(self.floor, 4),
            "cue_min": round(self.cue_min, 4),
            "meaning_min": round(self.meaning_min, 4),
            "sure": round(self.sure, 4),
            "cues": dict(sorted(self.cues.weights.items())),
            "cue_direction": self.cues.direction,
            "attribute_affinity": self.cues.affinity,
            "ending_direction": self.cues.ending,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UpdateModel:
        expanded = len(interactions([0.0] * len(FEATURES)))
        if list(data.get("features", [])) != list(FEATURES) or len(data["weights"]) != expanded:
            raise ValueError("update model was fitted on other features; refit it")
        return cls(
            Cues(
                {str(k): float(v) for k, v in data["cues"].items()},
                [float(d) for d in data["cue_direction"]],
                [float(d) for d in data["attribute_affinity"]],
                [float(d) for d in data.get("ending_direction", [])],
            ),
            [float(w) for w in data["weights"]],
            float(data["bias"]),
            [float(v) for v in data["mean"]],
            [float(v) for v in data["scale"]],
            float(data["threshold"]),
            float(data["floor"]),
            float(data["cue_min"]),
            float(data.get("meaning_min", cls.meaning_min)),
            float(data.get("sure", cls.sure)),
        )

    @classmethod
    def fit(
        cls,
        rows: Sequence[Sequence[float]],
        labels: Sequence[bool],
        cues: Cues,
        *,
        precision: float = 0.98,
        l2: float = 1.0,
        passes: Sequence[bool] | None = None,
        sure_precision: float = 0.9,
        structural: Sequence[bool] | None = None,
    ) -> UpdateModel:
        """Logistic regression (Newton steps, L2) on standardised features; the threshold is the lowest
        probability that keeps the training precision at ``precision`` or above among the rows that
        ``passes`` the decision's other gates (default: all). ``sure`` is the lowest probability, not
        below the threshold, that keeps ``sure_precision`` among the rows through the ``structural``
        gates alone (default: all), whatever other evidence of a change they carry: from there the
        decision's own reading counts as that evidence."""
        x = np.asarray([interactions(r) for r in rows], dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale < 1e-9] = 1.0
        z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
        w = np.zeros(z.shape[1])
        reg = l2 * np.eye(z.shape[1])
        reg[0, 0] = 0.0
        for _ in range(50):
            p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
            grad = z.T @ (p - y) + reg @ w
            hess = (z.T * (p * (1 - p))) @ z + reg
            step = np.linalg.solve(hess, grad)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        probs = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gate = np.ones(len(probs), dtype=bool) if passes is None else np.asarray(passes, dtype=bool)
        threshold = _threshold(probs[gate], y[gate], precision)
        shape = np.ones(len(probs), dtype=bool) if structural is None else np.asarray(structural, dtype=bool)
        sure = max(threshold, _threshold(probs[shape], y[shape], sure_precision))
        return cls(cues, list(w[1:]), float(w[0]), list(mean), list(scale), threshold, sure=sure)


def interactions(x: Sequence[float]) -> npt.NDArray[np.float64]:
    """The features and every product of two of them, in ``itertools.combinations`` order (as
    ``triu_indices`` walks the pairs): a logistic decision over these can weigh a signal by another ("a
    change cue, between two statements alike in meaning"; "a new value, in the shape of a one-valued
    attribute") without a rule saying which pairs matter."""
    base = np.asarray(x, dtype=np.float64)
    first, second = _pairs(len(base))
    return np.concatenate([base, base[first] * base[second]])


@functools.cache
def _pairs(n: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    first, second = np.triu_indices(n, k=1)
    return first, second


def fit_affinity(products: np.ndarray, labels: Sequence[bool], ridge: float = 10.0) -> list[float]:
    """Ridge weights over the elementwise products of two statements' vectors, toward "update"."""
    y = np.asarray([1.0 if u else -1.0 for u in labels])
    w = np.linalg.solve(
        products.T @ products + ridge * np.eye(products.shape[1]), products.T @ (y - y.mean())
    )
    return [round(float(v), 6) for v in w]


def _threshold(probs: np.ndarray, y: np.ndarray, precision: float, *, support: int = 5) -> float:
    """The lowest cut whose predictions (at least ``support`` of them) keep ``precision``; 0.5 when no
    cut does."""
    best = None
    for cut in sorted(set(np.round(probs, 4)), reverse=True):
        chosen = probs >= cut
        if chosen.sum() < support:
            continue
        if y[chosen].mean() >= precision:
            best = float(cut)
    return best if best is not None else 0.5


def packaged() -> UpdateModel:
    """The model shipped with the package (fitted on the whole corpus)."""
    text = resources.files("hermes_memory.updates").joinpath("model.json").read_text(encoding="utf-8")
    return UpdateModel.from_dict(json.loads(text))


__all__ = [
    "FEATURES",
    "Cues",
    "UpdateModel",
    "cue_tokens",
    "ended",
    "evidence",
    "features",
    "fit_affinity",
    "interactions",
    "named",
    "packaged",
    "values",
]
