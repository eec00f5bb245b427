"""The tool schemas the provider gives Hermes: constant data, built once at import, no I/O.

Names are prefixed (``nextlevel_``): Hermes drops provider tools named like its core tools (``memory``).
"""

from __future__ import annotations

import copy
from typing import Any

from hermes_memory import validation as v

SEARCH = "nextlevel_search"
REMEMBER = "nextlevel_remember"
MEMORY = "nextlevel_memory"

TIER_NAMES = ["tier1", "tier2", "tier3", "graph"]
# The API's own vocabularies, so the schema can never offer a value the API refuses.
FACT_CATEGORIES = sorted(v.FACT_CATEGORIES)
ENTITY_TYPES = sorted(v.ENTITY_TYPES)
EVENT_TYPES = sorted(v.EVENT_TYPES)

# The curated actions (Hermes' own memory tool: MEMORY.md / USER.md, same files, same arguments).
CURATED_ACTIONS = ["add", "replace", "remove", "read"]
# The seed's action set (section 9.1) plus why/history/forget. Order is what the model reads.
ACTIONS = [
    *CURATED_ACTIONS,
    "recall",
    "fact_store",
    "fact_query",
    "fact_update",
    "fact_delete",
    "entity_ensure",
    "entity_link",
    "entity_query",
    "timeline_add",
    "timeline_query",
    "semantic_search",
    "semantic_index",
    "graph_traverse",
    "graph_path",
    "graph_central",
    "why",
    "history",
    "forget",
    "consolidate",
    "stats",
    "core",
]

_AS_OF = {
    "type": "string",
    "description": "Answer as memory believed then: ISO date/time (e.g. '2025-03-01') or Unix seconds.",
}
_TIERS = {
    "type": "array",
    "items": {"type": "string", "enum": TIER_NAMES},
    "description": "Limit to these tiers (tier1 curated notes, tier2 facts/turns, tier3 meaning, graph).",
}

_PER_TIER = {
    "type": "integer",
    "description": "recall: up to this many results per tier asked (at most 50), instead of 'limit'.",
}

SEARCH_SCHEMA: dict[str, Any] = {
    "name": SEARCH,
    "description": (
        "Search long-term memory across every tier (past conversations, facts, people, projects, events, "
        "curated notes) and get the best matches, dated and with sources. Use it before answering "
        "anything about the user's past, preferences, plans, people or earlier decisions, and when the "
        "user refers to something from a previous session."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to recall, in natural language."},
            "limit": {"type": "integer", "description": "Max results (default 8, at most 50)."},
            "limit_per_tier": _PER_TIER,
            "tiers": _TIERS,
            "as_of": _AS_OF,
            "skill": {
                "type": "string",
                "description": "The skill you recall for: only the tiers its SKILL.md declares "
                "(memory_tiers).",
            },
        },
        "required": ["query"],
    },
}

REMEMBER_SCHEMA: dict[str, Any] = {
    "name": REMEMBER,
    "description": (
        "Store something durable in long-term memory: a fact (default), an entity (person, project, "
        "tool, place...), a relation between two known entities, or a dated event. Conversations are "
        "remembered automatically; use this for things the user asks you to keep or that you will need "
        "later. Store plain statements, not instructions."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["fact", "entity", "relation", "event"]},
            "content": {"type": "string", "description": "fact: the statement; event: its title."},
            "category": {"type": "string", "enum": FACT_CATEGORIES, "description": "fact category."},
            "confidence": {"type": "number", "description": "0..1, how sure (default 1)."},
            "name": {"type": "string", "description": "entity: its name."},
            "entity_type": {"type": "string", "enum": ENTITY_TYPES},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "description": {"type": "string", "description": "entity or event details."},
            "from_entity": {"type": "string", "description": "relation: source entity name."},
            "to_entity": {"type": "string", "description": "relation: target entity name."},
            "relation": {"type": "string", "description": "relation type, e.g. works_on, owns."},
            "event_type": {"type": "string", "enum": EVENT_TYPES},
            "when": {"type": "string", "description": "event: ISO date/time or Unix seconds (default now)."},
            "related_entities": {"type": "array", "items": {"type": "string"}},
        },
        "required": [],
    },
}

MEMORY_SCHEMA: dict[str, Any] = {
    "name": MEMORY,
    "description": (
        "Precise operations on long-term memory (facts, entities, timeline, semantic index, knowledge "
        "graph) and on the curated notes: add/replace/remove/read work like the built-in memory tool on "
        "the same MEMORY.md ('target': memory) and USER.md ('target': user) files — an add over the "
        "character limit is refused with the current entries, consolidate with replace/remove and retry. "
        "Prefer nextlevel_search for plain recall. Results are JSON; facts and entities carry "
        "a 'uuid' to use with fact_update, fact_delete, why. 'why' explains where a fact came from; "
        "'history' shows how facts about a subject changed over time; 'forget' erases a record (uuid) or "
        "everything about an entity (name) from every tier: preview first, then confirm=true. 'core' "
        "reads the core memory (SOUL/TOOLS/RULE/USER bullets kept across sessions)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ACTIONS},
            "query": {"type": "string", "description": "recall, fact_query, semantic_search: search text."},
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "add, replace, remove, read: 'memory' (your notes, default) or 'user' "
                "(the user profile).",
            },
            "content": {
                "type": "string",
                "description": "add, replace: the entry; fact_store, fact_update: fact text.",
            },
            "old_text": {
                "type": "string",
                "description": "replace, remove: a short unique substring of the entry to change.",
            },
            "text": {"type": "string", "description": "semantic_index: text to index."},
            "uuid": {
                "type": "string",
                "description": "fact_update, fact_delete, why, forget: a record uuid.",
            },
            "category": {"type": "string", "enum": FACT_CATEGORIES},
            "confidence": {"type": "number", "description": "0..1."},
            "min_confidence": {"type": "number", "description": "fact_query: floor (default 0.5)."},
            "soft": {"type": "boolean", "description": "fact_delete: archive (true, default) or erase."},
            "confirm": {
                "type": "boolean",
                "description": "forget: false (default) previews what would be erased; true erases it.",
            },
            "confirm_large": {
                "type": "boolean",
                "description": "forget: also needed for a large forget (the preview's 'warning'); ask first.",
            },
            "name": {"type": "string", "description": "entity_ensure, entity_query, forget: an entity name."},
            "include_related": {
                "type": "boolean",
                "description": "forget: also erase the 'related' names the preview lists (first name, "
                "title + surname, aliases given in the text, related entities).",
            },
            "entity_type": {"type": "string", "enum": ENTITY_TYPES},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "description": {"type": "string"},
            "entity": {"type": "string", "description": "graph_traverse start; timeline_query filter."},
            "from_entity": {"type": "string", "description": "entity_link, graph_path: source."},
            "to_entity": {"type": "string", "description": "entity_link, graph_path: target."},
            "relation": {"type": "string", "description": "entity_link type; graph_traverse filter."},
            "strength": {"type": "number", "description": "entity_link: 0..1 (default 1)."},
            "subject": {
                "type": "string",
                "description": "history: the subject (e.g. a person); fact_store: what the fact is about.",
            },
            "predicate": {"type": "string", "description": "fact_store: e.g. works_at (needs subject)."},
            "object": {"type": "string", "description": "fact_store: the value (needs predicate)."},
            "event_type": {"type": "string", "enum": EVENT_TYPES},
            "title": {"type": "string", "description": "timeline_add: event title."},
            "importance": {"type": "number", "description": "0..1 (default 0.5)."},
            "related_entities": {"type": "array", "items": {"type": "string"}},
            "when": {"type": "string", "description": "timeline_add: ISO date/time or Unix seconds."},
            "start": {"type": "string", "description": "timeline_query: from (ISO or Unix seconds)."},
            "end": {"type": "string", "description": "timeline_query: until (ISO or Unix seconds)."},
            "depth": {"type": "integer", "description": "graph_traverse: hops (default 2)."},
            "algorithm": {"type": "string", "enum": ["betweenness", "pagerank", "degree"]},
            "tiers": _TIERS,
            "limit_per_tier": _PER_TIER,
            "as_of": _AS_OF,
            "min_score": {"type": "number", "description": "semantic_search: 0..1 floor."},
            "limit": {"type": "integer", "description": "Max results (default 10, at most 50)."},
        },
        "required": ["action"],
    },
}

_SCHEMAS = (SEARCH_SCHEMA, REMEMBER_SCHEMA, MEMORY_SCHEMA)
TOOL_NAMES = frozenset(s["name"] for s in _SCHEMAS)


def tool_schemas() -> list[dict[str, Any]]:
    """Fresh copies of the three schemas (a host that edits them cannot change ours)."""
    return copy.deepcopy(list(_SCHEMAS))


__all__ = [
    "ACTIONS",
    "CURATED_ACTIONS",
    "MEMORY",
    "MEMORY_SCHEMA",
    "REMEMBER",
    "REMEMBER_SCHEMA",
    "SEARCH",
    "SEARCH_SCHEMA",
    "TOOL_NAMES",
    "tool_schemas",
]
