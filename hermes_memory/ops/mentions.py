"""Other names an entity is mentioned under, for the forget preview: a person called "Zanzibar Quill" is
also "Zanzibar", "Zanzibar's sister" is about her, "Mr. Quill" is her surname with a title, and "ZQ (that's
Zanzibar Quill)" gives her an alias in the text. Forgetting by name alone misses all of these, so the
preview lists them (with how many rows mention each) and the caller may include them.

Only whole-word matches count (as in ``ops.forget``); a bare surname is not offered ("Quill" is also a pen).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hermes_memory.tier2.mentions import MentionQueries

_TITLES = ("Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Sir")
_ALIAS = r"(?P<alias>[A-Z][\w.&'-]{0,40}?)"
# "ZQ (that's Zanzibar Quill)", "Zanzibar Quill (ZQ)", "ZQ, aka Zanzibar Quill", "Zanzibar Quill, known as ZQ"
_GIVEN = (
    rf"{_ALIAS}\s*\(\s*(?:that'?s|that is|i\.e\.,?|aka|a\.k\.a\.|also known as|=)\s+{{name}}\s*\)",
    rf"{{name}}\s*\(\s*(?:aka\s+|a\.k\.a\.\s+|also known as\s+|or\s+|i\.e\.,?\s+)?{_ALIAS}\s*\)",
    rf"{_ALIAS},?\s+(?:aka|a\.k\.a\.|also known as)\s+{{name}}(?!\w)",
    rf"(?<!\w){{name}},?\s+(?:aka|a\.k\.a\.|also known as|known as|nicknamed)\s+{_ALIAS}(?!\w)",
)
_LIMIT_TEXTS = 5000  # rows scanned for aliases given in the text (the rows that name the entity)


def _whole(terms: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def candidates(names: list[str], texts: Iterable[str]) -> list[dict[str, Any]]:
    """Other names for ``names`` (the entity's name and aliases): the first name of a multi-word name,
    title + surname, and aliases the texts give. Each: {"name", "kind", "terms": literal forms matched}."""
    known = {n.casefold() for n in names}
    out: dict[str, dict[str, Any]] = {}

    def add(label: str, kind: str, terms: list[str]) -> None:
        if label.casefold() not in known and label.casefold() not in out:
            out[label.casefold()] = {"name": label, "kind": kind, "terms": terms}

    for name in names:
        words = name.split()
        if len(words) < 2 or not all(w[:1].isupper() for w in words):
            continue  # only a proper name has a first name and a surname ("the user's dog" has neither)
        add(words[0], "first_name", [words[0]])
        last = words[-1]
        add(f"Mr. {last}", "title_surname", [f"{t}{dot} {last}" for t in _TITLES for dot in (".", "")])
    patterns = [
        re.compile(p.replace("{name}", re.escape(n)), re.IGNORECASE) for p in _GIVEN for n in names if n
    ]
    for text in texts:
        for pattern in patterns:
            for m in pattern.finditer(text):
                alias = m.group("alias").strip(".,'")
                if len(alias) >= 2 and any(c.isupper() for c in alias[:1]):
                    add(alias, "alias_in_text", [alias])
    return list(out.values())


def related(q: MentionQueries, names: list[str], planned: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The preview's related names: each candidate with the entities it names and how many rows (not in
    the plan already) mention it. ``planned`` maps table -> uuids the plan removes; ``q`` reads in the
    forget's transaction (its pattern is changed here, and cleared at the end)."""
    q.match(_whole(names))
    texts = q.texts_mentioning(_LIMIT_TEXTS)
    out = []
    for cand in candidates(names, texts):
        q.match(_whole(cand["terms"]))
        counts = {
            table: q.count_mentioning(table, planned.get(table, set()))
            for table in ("episodes", "facts", "timeline")
        }
        entities = [
            {"uuid": uuid, "name": name} for uuid, name in q.entities_named(planned.get("entities", set()))
        ]
        mentions = sum(counts.values())
        if mentions or entities:
            out.append({**cand, "mentions": mentions, "entities": entities})
    q.match(None)
    return out


__all__ = ["candidates", "related"]
