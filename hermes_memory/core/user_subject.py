"""Who "the user" is when a subject is asked about: ``user``, ``me``, ``I`` and the names the user goes
by all mean the one person the memory is about. One rule for the CLI's ``history``, the API's
``fact_history``, the agent's tool and MCP (facts are stored under "the user", "user" or a name)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2

USER_WORDS = frozenset({"user", "the user", "me", "i", "myself", "my", "mine", "you"})
_NAME_PATTERNS = (
    re.compile(r"\b(?:my|user'?s|the user's)\s+name\s+is\s+([A-Z][\w'-]{1,40})", re.IGNORECASE),
    re.compile(r"^\s*name\s*[:=]\s*([A-Z][\w'-]{1,40})", re.IGNORECASE),
    re.compile(r"\b(?:user|the user)\s+is\s+(?:called|named)\s+([A-Z][\w'-]{1,40})", re.IGNORECASE),
    re.compile(r"\b(?:goes by|call (?:me|them|him|her))\s+([A-Z][\w'-]{1,40})", re.IGNORECASE),
)


def user_names(tier2: Tier2, curated: CuratedStore | None) -> list[str]:
    """Names the user goes by: from USER.md (``Name: Maya``, ``The user's name is Maya``) and the
    aliases of the stored user entity. Raises StorageError."""
    names: list[str] = []
    for entry in curated.entries("user") if curated is not None else []:
        for pattern in _NAME_PATTERNS:
            found = pattern.search(entry)
            if found:
                names.append(found.group(1))
    for word in ("the user", "user"):
        for entity in tier2.entities.find(word):
            forms = [entity.name, *entity.aliases]
            names += [str(form) for form in forms if str(form).lower() not in USER_WORDS]
    return list(dict.fromkeys(n for n in names if n))


def subjects_for(subject: str, names: Sequence[str]) -> list[str]:
    """The stored subjects a question about ``subject`` covers: for the user (a user word or one of
    ``names``) every name the user goes by, else ``subject`` alone."""
    wanted = subject.strip().lower()
    if wanted not in USER_WORDS and wanted not in {n.lower() for n in names}:
        return [subject]
    return list(dict.fromkeys([subject, "the user", "user", *names]))


__all__ = ["USER_WORDS", "subjects_for", "user_names"]
