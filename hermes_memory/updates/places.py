"""A person's place in what the user told: a statement whose values are all someone the memory knows,
named by their relation ("the user has a husband named Rui", "the user's physio is Ms Lund"), gives way
only to another person, the role named again, or what ends it; whatever else a message tells of the user
leaves it as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_memory.extract.kin import kin_predicate
from hermes_memory.updates.endings import ceases
from hermes_memory.updates.events import ended
from hermes_memory.updates.readings import timeless_values
from hermes_memory.updates.shape import bare, same_slot
from hermes_memory.updates.statement import Statement


def keeps_someone(old: Statement, new: Statement, context: Sequence[Statement] = ()) -> bool:
    """Whether ``old`` holds a person's place (``_someone``) that nothing in the message ends: no
    negation, ceasing or event that befalls them, no other person, and the role not named again in any of
    its clauses ("Mrs Patel's gone on maternity leave, so it's a supply teacher till Easter")."""
    if not _someone(old):
        return False
    roles = _roles(old)
    return not (new.negated or ceases(new) or ended(old, new, context) or may_name_anew(old, new)
                or any(roles & bare(s) for s in (new, *context)))  # fmt: skip


def _someone(statement: Statement) -> bool:
    """Whether a statement's values are all someone the memory knows, other than whom it speaks of, named
    by a word of relation to them ("the user has a husband named Rui", "the user's boss is Kim"): a
    person holds its place, and only another person, the role named again ("it's a supply teacher till
    Easter"), or what ends it (a negation, a ceasing, an event that befalls them) ends it."""
    own = timeless_values(statement)
    holder = (statement.holder or "").casefold()
    known = {w.removesuffix("'s") for m in statement.mentions if m != holder for w in m.split()}
    return bool(own) and own <= known and bool(_roles(statement))


def _roles(statement: Statement) -> set[str]:
    """The words of a statement that name a relation to someone ("husband", "flatmate"), not as an owner
    ("the user's son's teacher": the son is no relation the value holds)."""
    return {w for w in statement.words if not w.endswith("'s") and kin_predicate(w) is not None}


def may_name_anew(old: Statement, new: Statement) -> bool:
    """Whether a present clause may give the one-valued ``old`` another value by its shape alone: any
    clause may, unless the value is someone the memory knows ("the user's physio is Ms Lund"). Then it
    takes someone to take their place: the clause names another person the memory knows, or the role
    itself ("I've signed up for a pottery course" names no one; "Now I see Kofi Mensah" does)."""

    def others(s: Statement) -> set[str]:
        return {m for m in s.mentions if m != (s.holder or "").casefold()}

    return not others(old) or bool(others(new) - others(old)) or same_slot(old, new)


__all__ = ["keeps_someone", "may_name_anew"]
