"""Help for the options that share a meaning across commands (``--limit``, a uuid, a session, ...): every
option of every command has a line in ``--help``. An option's own ``help=`` wins; a ``(command,
dest)`` entry wins over the ``dest`` one."""

from __future__ import annotations

import argparse

_BY_DEST = {
    "algorithm": "how centrality is measured",
    "alias": "another name the entity goes by (repeatable)",
    "batch_size": "turns summarised per batch",
    "category": "fact category: user, preference, project, relationship, event, ...",
    "confidence": "how sure, from 0 to 1",
    "content": "the text to store",
    "count": "how many of the newest turns",
    "depth": "how many hops to follow",
    "description": "a short description",
    "end": "only events before this time (Unix time or ISO-8601)",
    "entity": "an entity's name or alias",
    "entity_type": "the entity's type: person, place, org, project, tech, pet, ...",
    "event_type": "the event's type: event, milestone, decision, ...",
    "from_name": "the entity the relation starts from",
    "hard": "erase the fact instead of archiving it",
    "importance": "how much it matters, from 0 to 1",
    "limit": "at most this many results",
    "min_confidence": "leave out facts less sure than this (0 to 1)",
    "min_score": "leave out hits scoring below this (0 to 1)",
    "name": "an entity's name or alias",
    "new": "the entry's new text",
    "object": "what the subject relates to",
    "old": "a short unique part of the entry to replace",
    "predicate": "the relation, e.g. works_at, lives_in",
    "query": "the words to search for",
    "relation": "the relation's type, e.g. works_at, sibling_of",
    "role": "who speaks: user or assistant",
    "session": "the session id",
    "source": "where the fact comes from",
    "source_type": "what kind of text it is (document, note, ...)",
    "speaker": "the speaker's name",
    "start": "only events from this time on (Unix time or ISO-8601)",
    "store": "the curated store: memory (MEMORY.md) or user (USER.md)",
    "strength": "how strong, from 0 to 1",
    "subject": "who or what it is about ('user' and 'me' mean the user)",
    "substring": "a short unique part of the entry to remove",
    "target": "the entity to reach",
    "text": "the text",
    "tiers": "only these tiers",
    "title": "the event's title",
    "to_name": "the entity the relation points to",
    "ttl_days": "forget it after this many days",
    "uuid": "a uuid, or a unique start of one as `history` and `fact query` print it (8 characters)",
}
_BY_COMMAND = {
    ("path", "source"): "the entity to start from",
    ("traverse", "entity"): "the entity to start from",
    ("index", "text"): "the text to chunk, embed and index",
    ("remember", "text"): "what was said",
}


def fill_help(parser: argparse.ArgumentParser, command: str = "") -> None:
    """Give every option of ``parser`` and its subcommands without a help line the shared one."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                fill_help(sub, f"{command} {name}".strip())
        elif action.help is None and not isinstance(action, argparse._HelpAction):
            leaf = command.split()[-1] if command else ""
            action.help = _BY_COMMAND.get((leaf, action.dest)) or _BY_DEST.get(action.dest)


__all__ = ["fill_help"]
