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
    """Whether ``old`` holds a person's place that nothing in the message ends: its values are all someone
    the memory knows, other than whom it speaks of, named by a word of relation to them ("the user has a
    husband named Rui", "the user's boss is Kim"), and the message tells no negation, ceasing or event
    that befalls them, names no other person, and does not name the role again in any of its clauses
    ("Mrs Patel's gone on maternity leave, so it's a supply teacher till Easter")."""
    roles = _roles(old)
    own = timeless_values(old)
    if not roles or not own or not own <= {w.removesuffix("'s") for m in _others(old) for w in m.split()}:
        return False
    return not (new.negated or ceases(new) or ended(old, new, context) or may_name_anew(old, new)
                or any(roles & bare(s) for s in (new, *context)))  # fmt: skip


def _roles(statement: Statement) -> set[str]:
    """The words of a statement that name a relation to someone ("husband", "flatmate"), not as an owner
    ("the user's son's teacher": the son is no relation the value holds)."""
    return {w for w in statement.words if not w.endswith("'s") and kin_predicate(w) is not None}


def _others(statement: Statement) -> set[str]:
    """The known holders a statement names other than whom it speaks of."""
    return {m for m in statement.mentions if m != (statement.holder or "").casefold()}


def may_name_anew(old: Statement, new: Statement) -> bool:
    """Whether a present clause may give the one-valued ``old`` another value by its shape alone: any
    clause may, unless the value is someone the memory knows ("the user's physio is Ms Lund"). Then it
    takes someone to take their place: the clause names another person the memory knows, or the role
    itself ("I've signed up for a pottery course" names no one; "Now I see Kofi Mensah" does)."""
    return not _others(old) or bool(_others(new) - _others(old)) or same_slot(old, new)


__all__ = ["keeps_someone", "may_name_anew"]
