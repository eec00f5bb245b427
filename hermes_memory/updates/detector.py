"""Decide whether a new statement replaces earlier ones: same holder, same attribute, a new value.

``UpdateDetector.replaced(new, earlier)`` reads each earlier statement against the new one and returns
those the new one makes no longer true, with the model's probability. The steps, each general:
1. the new statement must assert something (``Statement.asserts``: no question, hypothetical, plan or
   negated event);
2. it must be about the same holder (``same_holder``: the user, a named person, pet, project);
3. the learned model (``model.UpdateModel``) weighs how alike the two are in meaning (MiniLM cosine of
   the statements, of the statements with their values masked, and of what each says that the other
   does not: ``apart_cosine``), the words they share, the change
   cues the new one carries, and whether it names a new value; above its threshold it is an update.
   A correction (", not <old word>"), a denial (the old statement said again negated) or giving up what
   the old statement says one does ("I left the trio") ends what it names without the model.
Vectors come from the embedder the store already runs (all-MiniLM-L6-v2); a small LRU keeps the vectors
of statements seen recently, so a user's facts are embedded once per process.
"""

from __future__ import annotations

import statistics
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hermes_memory.updates.endings import (
    abandons,
    affirms,
    ceases,
    completes,
    corrects,
    denies,
    predicate,
    restates,
    retains,
    says_again,
)
from hermes_memory.updates.events import ended
from hermes_memory.updates.holders import about_same, speaks_of_any
from hermes_memory.updates.lexicon import BYGONE, verb_form
from hermes_memory.updates.model import (
    FEATURES,
    UpdateModel,
    Vector,
    episode_of,
    evidence,
    features,
    packaged,
    values,
)
from hermes_memory.updates.places import keeps_someone
from hermes_memory.updates.readings import apart, named, timeless_values
from hermes_memory.updates.shape import another_by_role, fills_slot, one_valued, same_slot
from hermes_memory.updates.statement import USER, Statement
from hermes_memory.updates.subject import opening_names

#: Another earlier statement is the same attribute as the one replaced at this cosine or above.
SAME_ATTRIBUTE = 0.6
#: A message that tells no change in its words replaces a statement only when the clause is this much
#: nearer to it in meaning (cosine) than to the median of the holder's other statements (``stands_out``).
STANDOUT = 0.2
#: ... when the holder has at least this many other statements to measure it against.
STANDOUT_PEERS = 3
#: A bound this close under the threshold still has the remainders embedded (rounding of the sums).
_MARGIN = 1e-9
#: Where the remainders' cosine sits among a pair's features.
APART = FEATURES.index("cos_apart")

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

    def features(
        self, old: Statement, new: Statement, context: Sequence[Statement] = (), apart: float | None = None
    ) -> list[float]:
        """The pair's features; ``apart``: the remainders' cosine if known (``apart_cosine``)."""
        vec = self.vectors([old.normal, new.normal, old.masked, new.masked])
        full = float(vec[old.normal] @ vec[new.normal])
        masked = float(vec[old.masked] @ vec[new.masked])
        return features(
            old,
            new,
            full,
            masked,
            self.model.cues,
            vec[new.masked],
            vec[old.normal],
            vec[new.normal],
            context,
            self.apart(old, new) if apart is None else apart,
        )

    def apart(self, old: Statement, new: Statement) -> float:
        """``apart_cosine`` over this detector's vectors."""
        return apart_cosine(old, new, self.vectors([t for t in apart_texts(old, new) if t]))

    def _highest(self, row: Sequence[float]) -> float:
        """The decision's probability for a pair's features at the more favourable bound of the
        remainders' cosine (-1, 1)."""
        return max(self.model.probability(_with_apart(row, bound)) for bound in (-1.0, 1.0))

    def says_change(
        self, new: Statement, old: Statement, context: Sequence[Statement] = (), *, confident: bool = False
    ) -> bool:
        """Whether the message carries evidence that ``old`` changed (``model.evidence``); ``confident``:
        the decision is at least ``model.sure`` of it."""
        model = self.model
        masked = self.vectors([new.masked])[new.masked]
        change = model.cues.meaning(masked) >= model.meaning_min
        return evidence(old, new, context, model.cues, model.cue_min, change,
                        episode_of(old, new, model.cues, masked, context), confident)  # fmt: skip

    @staticmethod
    def repeats(new: Statement, old: Statement, cued: bool = False) -> bool:
        """Whether ``new`` names the old value again in the present, unnegated, with no change cue
        (``cued``) and no other value: "Ingrid is the person I report to" after "My manager is Ingrid"
        restates it; a past event ("the Fiesta died"), a negation or a change cue ("Vivaldi has replaced
        Firefox") ends a value it names. A clause whose subject is the old value, said of the user's in
        the present (``_reasserts``), restates it whatever its cue words. A clause whose subject is its
        holder restates only when it says nothing the old one does not (``restates``): one that names the
        old value among words of its own tells something new of it, and the decision weighs it ("I let
        my Equinox membership lapse", "I've switched to the falafel van for lunch, Pret got too pricey",
        "I'm in the paramedicine program at Monash" after "My course is nursing at Monash"). Between
        statements that name no value, it restates the old one when it says nothing the old one does not
        ("Woodwork is what I love" after "I'm passionate about woodworking") or says all of it again
        ("Please note in your notes that I prefer window seats" after "User prefers window seats"), unless
        a verb of ceasing governs it ("we stopped homeschooling"); so does one as negated as the old one
        ("Long time no see" said again)."""
        if (new.negated and not old.negated) or new.tense == "past":
            return False  # a negation ends what it negates; one said again ("Long time no see") does not
        old_values = timeless_values(old)
        if not old_values:  # a change said in words would be a word the old one lacks, or drop one of it
            return restates(new, old) or (says_again(new, old) and not ceases(new))
        if cued and not _reasserts(new, old_values):
            return False
        if not old_values & set(new.words) or values(new) - old_values - _words(old):
            return False
        return restates(new, old) or not predicate(new)  # said of its holder, in words of its own

    @classmethod
    def can_replace(cls, new: Statement, old: Statement, cued: bool = False) -> bool:
        """Whether ``old`` is a state ``new`` could end (``holds``) and ``new`` does not restate it."""
        return cls.holds(old) and not cls.repeats(new, old, cued)

    def cued(self, new: Statement) -> bool:
        """Whether ``new`` carries one of the model's change cues (read from its words alone)."""
        return self.model.cues.strongest(new) >= self.model.cue_min

    @staticmethod
    def holds(old: Statement) -> bool:
        """Whether an earlier statement is a state a newer one can end: one that asserts something in the
        present ("I work at Siemens", "my phone is a Pixel"), or an arrangement for a day still to come
        (``Statement.arranged``), however it was told: it holds until its day ("Just booked flights to
        Lisbon for the 3rd of June", "Ana is going to Tokyo in October" can be given up). Not an event
        told in the past ("I went to a poetry reading on Friday"), a wish, or a question."""
        return UpdateDetector.states(old) or (old.arranged and old.why_not in _ARRANGING)

    @staticmethod
    def states(old: Statement) -> bool:
        """Whether an earlier statement asserts something in the present: a state, not only an
        arrangement (``holds``)."""
        return old.asserts and old.tense != "past"

    @staticmethod
    def rearranges(new: Statement) -> bool:
        """Whether ``new`` is an arrangement said anew ("Class reunion is the 25th of October"): it asserts
        nothing yet of what holds now, but it is what an earlier arrangement still to come now is, and it
        can replace only such an arrangement (``Statement.arranged``)."""
        return not new.asserts and new.why_not == "plan" and new.arranged

    def tells_change(self, new: Statement, old: Statement, context: Sequence[Statement] = ()) -> bool:
        """Whether the message tells in its words that ``old`` changed, not only by how alike in meaning
        it is: a learned change cue in one of its clauses, a negation, a ceasing, the old value named
        again, an event that befell it, or the old statement's slot or role given another value
        (``fills_slot``, ``same_slot``, ``another_by_role``)."""
        message = (new, *context)
        cue_min = self.model.cue_min
        return (
            new.negated or ceases(new) or ended(old, new, context)
            or fills_slot(old, new) or same_slot(old, new) or another_by_role(old, new)
            or any(values(old) & named(s) or self.model.cues.strongest(s, old) >= cue_min for s in message)
        )  # fmt: skip

    def _reads_as_end(self, new: Statement) -> bool:
        """Whether a past event reads as an end, not an episode, along the learned ending direction
        (``Cues.ends``): "Quit the quartet", not "Quit Firefox earlier because it was hogging memory"."""
        return self.model.cues.ends(self.vectors([new.masked])[new.masked]) > 0

    def comparable(self, new: Statement, earlier: Sequence[Statement]) -> list[int]:
        """The indices of the ``earlier`` statements ``replaced`` weighs ``new`` against (about the same
        holder, a state ``new`` could end); decided on the words alone: no vector is needed for the rest.
        A clause in the shape of a one-valued attribute ("Dr. Moss is my dentist now") says what fills a
        slot now: it replaces the slot's earlier value, and ends no arrangement that is only an
        arrangement ("I booked a first appointment with Dr. Moss for next week": it has come about). What a
        clause takes as given ("my iphone 15" in "how do I stop my iphone 15 from ...") weighs only
        statements with another value (``_another_value``)."""
        rearranged = self.rearranges(new)
        if (not new.asserts and not rearranged) or not speaks_of_any(new):
            return []
        cued = self.cued(new)
        slot = one_valued(new)
        return [
            i for i, old in enumerate(earlier)
            if (old.arranged or not rearranged)
            and (not new.presupposed or _another_value(old, new))
            and ((about_same(old, new) and self.can_replace(new, old, cued)
                  and (not slot or self.states(old))) or corrects(old, new))
        ]  # fmt: skip

    def replaced(
        self,
        new: Statement,
        earlier: Sequence[Statement],
        context: Sequence[Statement] = (),
        sources: Sequence[frozenset[str]] | None = None,
        *,
        comparable: Sequence[int] | None = None,
    ) -> list[Replacement]:
        """The earlier statements ``new`` makes no longer true, most probable first.

        ``context``: the other clauses of the same message (evidence of a change may sit in one of them).
        ``sources``: where each earlier statement was said (the turns a fact was drawn from); given, the
        others replaced with the most probable one must also have been said with it.
        ``comparable``: ``comparable(new, earlier)``, when the caller has it already (it embeds the
        statements weighed for all the clauses of a message at once).
        A correction ("..., not <old value>": ``endings.corrects``) replaces the statements it sets right,
        a denial (the old statement said again negated: ``endings.denies``) the statements it denies, the
        end of an activity in progress (``endings.completes``: "Finished Dune" after "I'm reading Dune")
        the statements of that activity, and giving up what one does or belongs to (``endings.abandons``:
        "Quit the quartet" after "I'm in a barbershop quartet", when it reads as an end along the learned
        ending direction) the statements of it. An earlier statement that a clause of the message says again,
        whole (``endings.affirms``: "Since I'm lactose intolerant, ..."), or says its holder kept
        (``endings.retains``: "... but kept Freedom as my carrier"), is kept.
        Otherwise one statement updates one attribute: the most probable earlier statement is replaced
        when it is above the threshold or the new one gives its one-valued slot another value
        (``fills_slot``), and others above the threshold only when they say the same thing as that one
        (their cosine to it at least ``SAME_ATTRIBUTE``) and were said with it (``sources``): two facts
        drawn from one old statement; not a person's place the message does not end (``keeps_someone``).
        In a store, many facts of a holder say much the same thing ("Jon is still searching for a place
        for his dance studio", "Jon is prepping for his dance studio"), and a new value replaces the one
        statement that held it, not all of them. The clause speaks of the attribute of the earlier
        statement most alike to it in meaning: the one replaced is that one or says the same thing ("I'm
        the cellist of the Lindqvist Ensemble now" is nearest to the quartet the user played in, and
        replaces no rowing club membership, however its words read)."""
        mine = list(self.comparable(new, earlier) if comparable is None else comparable)
        if not mine:
            return []
        context = [c for c in context if not c.presupposed]  # what a clause takes as given tells no change
        ends = [i for i in mine if corrects(earlier[i], new) or denies(earlier[i], new)
                or completes(earlier[i], new)
                or (abandons(earlier[i], new) and self._reads_as_end(new))]  # fmt: skip
        if ends:  # a correction, a denial, a completion or giving up ends what it names, whatever the model
            return [Replacement(i, self.model.probability(self.features(earlier[i], new, context)))
                    for i in ends]  # fmt: skip
        vec = self.vectors([new.normal, new.masked, *(earlier[i].normal for i in mine),
                            *(earlier[i].masked for i in mine)])  # fmt: skip
        alike = {i: float(vec[earlier[i].normal] @ vec[new.normal]) for i in mine}
        mine = [i for i in mine if alike[i] >= self.model.floor]
        if not mine:
            return []
        threshold = self.model.threshold
        # The decision is linear in the remainders' cosine before its logistic, so the cosine's bounds
        # bound the probability: a statement under the threshold at both (and filling no one-valued slot)
        # stays whatever its remainders say, and they are not embedded (most of those weighed are such).
        rows = {i: self.features(earlier[i], new, context, 0.0) for i in mine}  # the cosine is set below
        bound = {i: self._highest(rows[i]) for i in mine}
        exact = [i for i in mine if bound[i] >= threshold - _MARGIN or fills_slot(earlier[i], new)]
        self.vectors([t for i in exact for t in apart_texts(earlier[i], new) if t])  # one batch
        chance = {i: self.model.probability(_with_apart(rows[i], self.apart(earlier[i], new))) for i in exact}
        scored = sorted(((chance.get(i, bound[i]), i) for i in mine), reverse=True)
        over = [(p, i) for p, i in scored if p >= threshold or fills_slot(earlier[i], new)]
        # a clause of the message that says an earlier statement again, whole, or that its value was kept,
        # keeps it (only a statement that could be replaced is asked: every one above the threshold is
        # among them)
        said = (new, *context)
        kept = {i for _, i in over if any(affirms(earlier[i], s) or retains(earlier[i], s) for s in said)}
        sure = [(p, i) for p, i in over if i not in kept]
        if not sure:
            return []
        # A statement whose only values are whom the clause speaks of gives way to one drawn from the same
        # turn that the clause says more of.
        best = top = sure[0][1]
        if _of_whom_it_speaks(earlier[top], new):
            best = next((i for _, i in sure if not _of_whom_it_speaks(earlier[i], new)
                         and (sources is None or bool(sources[i] & sources[top]))), top)  # fmt: skip
        anchor = vec[earlier[best].normal]
        near = max(mine, key=alike.__getitem__)
        if float(vec[earlier[near].normal] @ anchor) < SAME_ATTRIBUTE:
            return []  # the clause is nearest to another attribute than the one it would replace
        if not stands_out(best, alike) and not self.tells_change(new, earlier[best], context):
            return []  # "My bank is the Sparkasse" is as near to the user's job as to anything they said
        confident = next(p for p, i in sure if i == best) >= self.model.sure
        if not self.says_change(new, earlier[best], context, confident=confident):
            return []
        return [
            Replacement(i, p) for p, i in scored
            if i == best or (p >= threshold and i not in kept
                             and float(vec[earlier[i].normal] @ anchor) >= SAME_ATTRIBUTE
                             and (sources is None or bool(sources[i] & sources[best]))
                             and not _of_whom_it_speaks(earlier[i], new)
                             and not keeps_someone(earlier[i], new, context))
        ]  # fmt: skip


#: Why a statement that names a day still to come asserts nothing now, when it arranges that day all
#: the same: it tells a plan ("we're flying out on the 3rd"), or one in a modal mood ("Ana is going to
#: Tokyo in October", "I might drive up on Friday"). A question arranges nothing.
_ARRANGING = frozenset({None, "plan", "hypothetical"})


def _with_apart(row: Sequence[float], cosine: float) -> list[float]:
    """A pair's features with the remainders' cosine set to ``cosine`` (no other feature depends on it)."""
    out = list(row)
    out[APART] = cosine
    return out


def _another_value(old: Statement, given: Statement) -> bool:
    """Whether ``old`` names a value (a name or number, not a day) and ``given`` none of its values:
    "when my LastPass subscription runs out" takes LastPass as still in use."""
    mine = timeless_values(old)
    return bool(mine) and not mine & set(given.words)


def apart_texts(old: Statement, new: Statement) -> tuple[str, str]:
    """What each of the two says that the other does not (``readings.apart``)."""
    return apart(old, new), apart(new, old)


def apart_cosine(old: Statement, new: Statement, vectors: Mapping[str, Vector]) -> float:
    """The cosine of what each statement says that the other does not (``apart_texts``): two values of
    one kind ("phone samsung galaxy s22", "typing oneplus 12") read alike; 0.0 where one of the two says
    nothing the other does not. ``vectors``: each text's."""
    mine, theirs = apart_texts(old, new)
    return float(np.dot(vectors[mine], vectors[theirs])) if mine and theirs else 0.0


def stands_out(index: int, alike: Mapping[int, float]) -> bool:
    """Whether the statement at ``index`` stands out among those weighed (``alike``: each one's cosine to
    the new clause): at least ``STANDOUT`` nearer than the median of the others, or too few others to
    tell. A clause about an attribute the holder never spoke of (their bank, when they told their job,
    their flat and their hobbies) is about as near to all of them."""
    others = [v for i, v in alike.items() if i != index]
    return len(others) < STANDOUT_PEERS or alike[index] - statistics.median(others) >= STANDOUT


def _of_whom_it_speaks(old: Statement, new: Statement) -> bool:
    """Whether every value of ``old`` is someone ``new`` names as a known holder while ``new`` gives a
    value of its own: beside a statement of that holder's attribute drawn from the same turn, "Switched
    Rolo to Butternut Box" replaces what Rolo eats, not that "the user has a dog named Rolo"."""
    own = values(old)
    if not own:
        return False
    named = {w.removesuffix("'s") for m in new.mentions for w in m.split()}
    return own <= named and bool(values(new) - own - named)


def _reasserts(new: Statement, old_values: set[str]) -> bool:
    """Whether ``new`` opens with the old value as the subject of a clause about the user's, in the
    present ("Ingrid is the person I report to", "Quokka keeps all my passwords" after the user named
    Ingrid, Quokka; a person the memory knows too): it says of the old value what the old statement did,
    so no cue word ends it. Not when it places the role in the past ("Ingrid is my former manager") or its
    relative clause is not in the present simple ("the browser I've dropped", "the one I used to see")."""
    if new.holder != USER:
        return False
    opening = set(opening_names(new.normal, frozenset()))
    if not opening or not opening <= old_values:
        return False
    if any(w in BYGONE or w.split("-")[0] in BYGONE for w in new.words):
        return False
    after = new.normal.lower().partition("the user ")[2].split()[:1]
    return not (after and after[0] != "is" and verb_form(after[0]))


def _words(statement: Statement) -> set[str]:
    return {w.removesuffix("'s") for w in statement.words}


__all__ = [
    "SAME_ATTRIBUTE",
    "STANDOUT",
    "Encode",
    "Replacement",
    "UpdateDetector",
    "apart_cosine",
    "apart_texts",
    "stands_out",
]
