"""The reads and writes of the memory browser that MemoryAPI has no one call for, built from MemoryAPI
calls and the core services it already uses (no SQL here). Each returns plain data or raises the
package's errors; the pages format them.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import HermesMemoryError, NotFoundError, ValidationError

if TYPE_CHECKING:
    from hermes_memory.api.envelope import Envelope
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.hermes.settings import ProviderSettings

# The actor written to the audit log for the browser's writes.
ACTOR = "ui"
# The provider's prefetch waits this long here (a page may take a moment; Hermes itself waits less).
_BLOCK_WAIT_MS = 5000


def data(envelope: Envelope) -> Any:
    """An envelope's data, or its error raised as the package's error (the pages say it)."""
    if envelope["success"]:
        return envelope["data"]
    raise EnvelopeError(str(envelope["error"]), str(envelope["meta"].get("error_type") or "error"))


class EnvelopeError(HermesMemoryError):
    """A MemoryAPI call that failed: its message and error type, as the envelope said them."""

    def __init__(self, message: str, error_type: str):
        super().__init__(message)
        self.error_type = error_type


def provider_block(api: MemoryAPI, settings: ProviderSettings, query: str, *, tier3: bool) -> str:
    """The block Hermes' provider would put before the model for ``query`` as the first turn of a session
    of a warm process: the provider's own prefetch (``hermes.prefetch.Prefetcher``) over this store."""
    from hermes_memory.hermes.prefetch import Prefetcher
    from hermes_memory.hermes.registry import SharedStore

    shared = SharedStore((str(api.config.hermes_home), api.config.profile, api.scope), api, settings)
    if tier3:
        shared.embedder_warm.set()
    patient = dataclasses.replace(settings, prefetch_wait_ms=_BLOCK_WAIT_MS)
    return Prefetcher(shared, patient, tier3=tier3, session_id="memory-browser").prefetch(query)


@dataclass(frozen=True)
class Attribute:
    """The facts of one subject and predicate: what is believed first, then what it replaced."""

    predicate: str
    current: list[dict[str, Any]]
    replaced: list[dict[str, Any]]


def subjects(api: MemoryAPI, limit: int = 400) -> list[tuple[str, int]]:
    """The subjects of the newest believed facts and how many each has, most first."""
    counts: dict[str, int] = {}
    for fact in data(api.fact_query(None, limit=limit, min_confidence=0.0)):
        name = fact.get("subject") or "(no subject)"
        counts[name] = counts.get(name, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower()))


def attributes(api: MemoryAPI, subject: str) -> list[Attribute]:
    """Every fact about ``subject`` grouped by attribute (predicate): believed ones first (newest
    first), then replaced and archived ones, newest first, each with ``replaced_by_text`` when a
    newer fact replaced it."""
    history = data(api.fact_history(subject))
    by_uuid = {f["uuid"]: f for f in history}
    groups: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
    for fact in reversed(history):  # newest first
        groups.setdefault(fact.get("predicate") or "(stated)", []).append(fact)
    out = []
    for predicate, facts in groups.items():
        current = [f for f in facts if _believed(f)]
        replaced = []
        for fact in facts:
            if _believed(fact):
                continue
            by = fact.get("superseded_by")
            if by:
                newer = by_uuid.get(by)
                if newer is None:
                    found = api.fact_get(by)
                    newer = found["data"] if found["success"] else None
                fact = {**fact, "replaced_by_text": None if newer is None else newer["content"]}
            replaced.append(fact)
        out.append(Attribute(predicate, current, replaced))
    out.sort(key=lambda a: (not a.current, a.predicate))
    return out


def _believed(fact: dict[str, Any]) -> bool:
    return not fact.get("superseded_at") and not fact.get("is_archived") and fact.get("valid_to") is None


def correct_fact(api: MemoryAPI, uuid: str, text: str) -> dict[str, Any]:
    """Store ``text`` as a correction of fact ``uuid`` (``MemoryAPI.fact_correct``: a new fact that
    supersedes it in one transaction, never an in-place rewrite), audited as the browser's. Returns
    ``fact`` (the correction) and ``replaced``. Raises EnvelopeError (an unknown or no longer believed
    fact, an empty text, markup or a threat in it, the same statement)."""
    return dict(data(api.fact_correct(uuid, text, reason="corrected in the memory browser", actor=ACTOR)))


def mark_wrong(api: MemoryAPI, uuid: str) -> dict[str, Any]:
    """Retire a wrong statement the way the CLI's ``fact delete`` does: archived (recall no longer uses
    it; its history and audit trail stay). Raises EnvelopeError for an unknown fact."""
    return dict(data(api.fact_delete(uuid, soft=True)))


@dataclass(frozen=True)
class MergePlan:
    """Two entities of one type: ``merged`` is folded into ``kept``."""

    merged: dict[str, Any]
    kept: dict[str, Any]
    relations: int  # of the merged entity: they move to the kept one


def merge_plan(api: MemoryAPI, merged_name: str, kept_name: str) -> MergePlan:
    """What merging would do. Raises NotFoundError for an unknown name, ValidationError for one entity
    named twice or two types."""
    merged, kept = entity(api, merged_name), entity(api, kept_name)
    if merged["uuid"] == kept["uuid"]:
        raise ValidationError(f"{merged_name!r} and {kept_name!r} are the same entity")
    if merged["entity_type"] != kept["entity_type"]:
        raise ValidationError(
            f"{merged['name']!r} is a {merged['entity_type']} and {kept['name']!r} a {kept['entity_type']}: "
            "only entities of one type can be merged"
        )
    return MergePlan(merged, kept, len(merged.get("relations") or []))


def merge_entities(api: MemoryAPI, merged_name: str, kept_name: str) -> dict[str, Any]:
    """Fold entity ``merged_name`` into ``kept_name`` with the consolidate job's merge (one transaction:
    relations and fact links move, timeline references follow, aliases are united, the merged entity is
    deleted, both sides audited; the graph follows): the merged name becomes an alias of the kept one
    first, as the job merges an entity named by another's alias. Raises as ``merge_plan``."""
    from hermes_memory.cron.entity_merge import EntityMerge, merge_entity

    plan = merge_plan(api, merged_name, kept_name)
    kept = plan.kept
    data(api.entity_ensure(kept["name"], kept["entity_type"], aliases=[plan.merged["name"]]))
    outcome = merge_entity(
        api.maintenance_context(), EntityMerge(plan.merged["uuid"], kept["uuid"]), time.time()
    )
    if outcome is None:
        raise ValidationError(f"{plan.merged['name']!r} could not be merged (changed meanwhile); try again")
    return {"kept": kept["name"], "merged": plan.merged["name"], "relations_moved": outcome.relations_moved}


def entity(api: MemoryAPI, name: str) -> dict[str, Any]:
    """The entity a name, alias or uuid names (with its relations). Raises NotFoundError."""
    for found in data(api.entity_query(name, limit=5)):
        if (
            found["uuid"] == name
            or found["name"].lower() == name.lower()
            or name.lower() in (a.lower() for a in found.get("aliases") or [])
        ):
            return dict(found)
    raise NotFoundError(f"no entity named {name!r}")


def entity_names(
    api: MemoryAPI, uuids: Iterable[str], names: dict[str, str] | None = None
) -> dict[str, str]:
    """The names of entities by uuid (an unknown one: the start of its uuid), added to ``names``."""
    out = {} if names is None else names
    for uuid in uuids:
        if uuid not in out:
            try:
                out[uuid] = api.tier2.entities.get(uuid).name
            except NotFoundError:
                out[uuid] = uuid[:8]
    return out


def relation_rows(api: MemoryAPI, found: dict[str, Any]) -> list[tuple[str, str, str]]:
    """An entity's relations as (from name, relation, to name)."""
    names = {found["uuid"]: found["name"]}
    rows = []
    for rel in found.get("relations") or []:
        entity_names(api, (rel["from_entity_id"], rel["to_entity_id"]), names)
        rows.append((names[rel["from_entity_id"]], str(rel["relation_type"]), names[rel["to_entity_id"]]))
    return rows


def graph_png(api: MemoryAPI, name: str) -> bytes:
    """A PNG of the graph around entity ``name`` (one hop). Raises DependencyMissingError (the ``viz``
    extra), NotFoundError-like graph errors for an unknown name."""
    import tempfile
    from pathlib import Path

    from hermes_memory.graph.render import render_png

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "graph.png"
        render_png(api.knowledge_graph(), target, (720, 480), around=name, depth=1, max_nodes=60)
        return target.read_bytes()


__all__ = [
    "ACTOR",
    "Attribute",
    "EnvelopeError",
    "MergePlan",
    "attributes",
    "correct_fact",
    "data",
    "entity",
    "entity_names",
    "graph_png",
    "mark_wrong",
    "merge_entities",
    "merge_plan",
    "provider_block",
    "relation_rows",
    "subjects",
]
