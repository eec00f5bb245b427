"""Entity references (uuid, name or alias) resolved to one graph node, and the errors for none or several."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.errors import ConflictError, NotFoundError
from hermes_memory.graph.builder import NameIndex, normalise_key

_MAX_SUGGESTIONS = 5


class EntityNotFoundError(NotFoundError):
    """No entity has this uuid, name or alias; ``suggestions`` holds close names (may be empty)."""

    def __init__(self, ref: str, suggestions: Sequence[str]) -> None:
        self.ref = ref
        self.suggestions = list(suggestions)
        hint = ", ".join(f'"{s}"' for s in self.suggestions) if self.suggestions else "none"
        super().__init__(f'unknown entity "{ref}"; close matches: {hint}')


class AmbiguousEntityError(ConflictError):
    """Several entities share this name/alias; ``candidates`` lists uuid, name, entity_type, occurrences."""

    def __init__(self, ref: str, candidates: Sequence[Mapping[str, Any]]) -> None:
        self.ref = ref
        self.candidates = [dict(c) for c in candidates]
        listed = "; ".join(f"{c['name']} ({c['entity_type']}, uuid={c['uuid']})" for c in self.candidates)
        super().__init__(
            f'ambiguous entity "{ref}": {len(self.candidates)} matches: {listed}. '
            "Pass entity_type=... or the uuid."
        )


def resolve(graph: Any, index: NameIndex, ref: str, entity_type: str | None = None) -> str:
    """uuid for a uuid, name or alias (case-insensitive) in ``graph``; a canonical name beats an alias.

    Raises EntityNotFoundError (with close matches) or AmbiguousEntityError (listing candidates;
    narrow with ``entity_type`` or use the uuid).
    """
    if ref in graph and (entity_type is None or _type_matches(graph, ref, entity_type)):
        return ref
    for bucket in (index.by_name(ref), index.by_alias(ref)):
        if entity_type is not None:
            bucket = {u for u in bucket if _type_matches(graph, u, entity_type)}
        if len(bucket) == 1:
            return next(iter(bucket))
        if bucket:
            candidates = sorted(
                (_candidate(graph, u) for u in bucket),
                key=lambda c: (-c["occurrence_count"], c["entity_type"], c["uuid"]),
            )
            raise AmbiguousEntityError(ref, candidates)
    raise EntityNotFoundError(ref, _suggest(graph, index, ref, entity_type))


def _type_matches(graph: Any, uuid: str, entity_type: str) -> bool:
    return normalise_key(graph.nodes[uuid]["entity_type"]) == normalise_key(entity_type)


def _candidate(graph: Any, uuid: str) -> dict[str, Any]:
    attrs = graph.nodes[uuid]
    return {
        "uuid": uuid,
        "name": attrs["name"],
        "entity_type": attrs["entity_type"],
        "occurrence_count": attrs["occurrence_count"],
    }


def _suggest(graph: Any, index: NameIndex, ref: str, entity_type: str | None) -> list[str]:
    close = difflib.get_close_matches(normalise_key(ref), index.keys(), n=_MAX_SUGGESTIONS, cutoff=0.6)
    names: list[str] = []
    for key in close:
        for uuid in sorted(index.uuids_for_key(key)):
            if entity_type is not None and not _type_matches(graph, uuid, entity_type):
                continue
            name = str(graph.nodes[uuid]["name"])
            if name not in names:
                names.append(name)
    return names[:_MAX_SUGGESTIONS]


__all__ = ["AmbiguousEntityError", "EntityNotFoundError", "resolve"]
