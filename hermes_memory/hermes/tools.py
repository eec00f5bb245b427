"""The provider's tools: argument checking, the action table, and JSON results for the model.

Every result is a JSON object; every failure is ``{"error": "..."}`` with a reason the model can act
on (a bad argument names the argument and what it accepts). Stored text is scanned for injection
before it reaches the API; recalled text is neutralised, then quoted (``security.fence``: tags escaped,
role markers marked) before it reaches the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import HermesMemoryError, ValidationError
from hermes_memory.hermes import curated_tool, safety
from hermes_memory.hermes.schemas import ACTIONS, CURATED_ACTIONS, MEMORY, REMEMBER, SEARCH
from hermes_memory.recall import availability
from hermes_memory.recall.render import superseded_note
from hermes_memory.security import fence
from hermes_memory.security.threats import neutralise

MAX_RESULT_CHARS = 16_000
_MAX_LIMIT = 50
# Record fields that cost the model tokens without telling it anything.
_NOISE = frozenset({"content_hash", "access_count", "last_accessed", "recorded_at", "metadata", "scope"})
_TIME_KEYS = frozenset(
    {"created_at", "updated_at", "timestamp", "valid_from", "valid_to", "expires_at", "superseded_at",
     "first_seen", "last_seen", "learned_at", "time"}
)  # fmt: skip


@dataclass
class ToolContext:
    """What a tool call needs from the provider."""

    api: MemoryAPI
    session_id: str
    writable: bool
    after_write: Callable[[], None]


Handler = Callable[[ToolContext, Mapping[str, Any]], Envelope]


# -- argument helpers (each raises ValidationError naming the argument) ------------------------------
def _opt_str(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationError(f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _str(args: Mapping[str, Any], key: str, *, hint: str = "") -> str:
    value = _opt_str(args, key)
    if value is None or not value.strip():
        raise ValidationError(f"'{key}' is required{hint}")
    return value


def _num(args: Mapping[str, Any], key: str, default: float | None = None) -> float | None:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError as exc:
            raise ValidationError(f"'{key}' must be a number, got {v.shown(args.get(key))}") from exc
    return v.number_value(key, value)


def _int(args: Mapping[str, Any], key: str, default: int, maximum: int = _MAX_LIMIT) -> int:
    value = args.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return v.positive_int(key, value, maximum=maximum)


def _list(args: Mapping[str, Any], key: str) -> list[str] | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    return v.string_list(key, value, max_chars=200)


def _fact_uuid(args: Mapping[str, Any]) -> str:
    """A fact's uuid; recall results name facts ``fact:<uuid>``, so that form is accepted too."""
    return _str(args, "uuid", hint=" (a fact uuid from fact_query or recall)").strip().removeprefix("fact:")


def _time(args: Mapping[str, Any], key: str) -> float | None:
    """ISO-8601 date/time (naive = UTC) or Unix seconds."""
    value = args.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return v.number_value(key, value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValidationError(
                f"'{key}' must be an ISO date/time like '2025-03-01' or '2025-03-01T14:30', or Unix "
                f"seconds; got {v.shown(value)}"
            ) from exc
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    raise ValidationError(f"'{key}' must be an ISO date/time or Unix seconds, got {type(value).__name__}")


def _bool(args: Mapping[str, Any], key: str, default: bool) -> bool:
    value = args.get(key, default)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ValidationError(f"'{key}' must be true or false, got {v.shown(value)}")
    return value


def _storable(*texts: str | None) -> None:
    for text in texts:
        if text:
            safety.ensure_storable(text)


def _write(ctx: ToolContext) -> None:
    if not ctx.writable:
        raise ValidationError(
            "memory writes are disabled in this agent context (only the primary agent writes); "
            "read with nextlevel_search instead"
        )


# -- handlers ----------------------------------------------------------------------------------------
def _recall(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    per_tier = None if args.get("limit_per_tier") is None else _int(args, "limit_per_tier", 5)
    # ``limit`` has a default of its own only without ``limit_per_tier`` (both given: the API refuses).
    limit = _int(args, "limit", 8) if per_tier is None or args.get("limit") is not None else None
    return ctx.api.recall(
        _str(args, "query"),
        tiers=_list(args, "tiers"),
        limit=limit,
        as_of=_time(args, "as_of"),
        session_id=ctx.session_id or None,
        limit_per_tier=per_tier,
    )


def _fact_store(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    content = _str(args, "content", hint=" (the fact to store)")
    _storable(content)
    return ctx.api.fact_store(
        content,
        category=_opt_str(args, "category") or "general",
        confidence=_num(args, "confidence", 1.0) or 0.0,
        source="tool",
        source_id=ctx.session_id or None,
        subject=_opt_str(args, "subject"),
        predicate=_opt_str(args, "predicate"),
        object=_opt_str(args, "object"),
    )


def _fact_update(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    fields: dict[str, Any] = {}
    if (content := _opt_str(args, "content")) is not None:
        _storable(content)
        fields["content"] = content
    if (category := _opt_str(args, "category")) is not None:
        fields["category"] = category
    for key in ("confidence", "importance"):
        if (number := _num(args, key)) is not None:
            fields[key] = number
    if not fields:
        raise ValidationError("fact_update needs at least one of content, category, confidence, importance")
    return ctx.api.fact_update(_fact_uuid(args), **fields)


def _entity_ensure(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    name = _str(args, "name")
    description = _opt_str(args, "description")
    aliases = _list(args, "aliases")
    _storable(name, description, *(aliases or []))
    return ctx.api.entity_ensure(
        name, _opt_str(args, "entity_type") or "other", aliases=aliases, description=description
    )


def _entity_link(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    relation = _str(args, "relation", hint=" (e.g. works_on, owns, knows)")
    _storable(relation)
    return ctx.api.entity_link(
        _str(args, "from_entity"),
        _str(args, "to_entity"),
        relation,
        strength=_num(args, "strength", 1.0) or 0.0,
    )


def _timeline_add(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    title = _opt_str(args, "title") or _str(
        args, "content", hint=" (the event title, as 'title' or 'content')"
    )
    description = _opt_str(args, "description")
    _storable(title, description)
    return ctx.api.timeline_add(
        _opt_str(args, "event_type") or "event",
        title,
        description=description,
        importance=_num(args, "importance", 0.5) or 0.0,
        related_entities=_list(args, "related_entities"),
        timestamp=_time(args, "when"),
        session_id=ctx.session_id or None,
    )


def _semantic_index(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    _write(ctx)
    text = _str(args, "text", hint=" (the text to index)")
    _storable(text)
    return ctx.api.semantic_index(
        text, source_type="tool", session_id=ctx.session_id or None, category=_opt_str(args, "category")
    )


def _forget(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    """Preview (default) or, with confirm=true, erase a record by uuid or an entity by name; with
    include_related (true, or names from the preview's 'related') the other names it is mentioned under."""
    confirm = _bool(args, "confirm", False)
    large = _bool(args, "confirm_large", False)
    related = args.get("include_related", False)
    raw = _opt_str(args, "uuid")
    if raw is not None:  # a bare uuid or a recall hit's id ("episode:<uuid>"): forget reads both
        return ctx.api.forget(raw, confirm=confirm, include_related=related, confirm_large=large)
    name = _opt_str(args, "name")
    if name is not None:
        return ctx.api.forget_entity(name, confirm=confirm, include_related=related, confirm_large=large)
    raise ValidationError(
        "forget needs 'uuid' (a record id from recall or fact_query) or 'name' (an entity); "
        "call it first without 'confirm' to see what would be erased, then with confirm=true"
    )


def _write_action(call: Handler) -> Handler:
    def wrapped(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
        _write(ctx)
        return call(ctx, args)

    return wrapped


_READS: dict[str, Handler] = {
    "recall": _recall,
    "fact_query": lambda ctx, a: ctx.api.fact_query(
        _opt_str(a, "query"),
        category=_opt_str(a, "category"),
        limit=_int(a, "limit", 10),
        min_confidence=_num(a, "min_confidence", 0.5) or 0.0,
        as_of=_time(a, "as_of"),
    ),
    "entity_query": lambda ctx, a: ctx.api.entity_query(
        _opt_str(a, "name"), entity_type=_opt_str(a, "entity_type"), limit=_int(a, "limit", 10)
    ),
    "timeline_query": lambda ctx, a: ctx.api.timeline_query(
        _time(a, "start"),
        _time(a, "end"),
        event_type=_opt_str(a, "event_type"),
        limit=_int(a, "limit", 20),
        entity=_opt_str(a, "entity"),
    ),
    "semantic_search": lambda ctx, a: ctx.api.semantic_search(
        _str(a, "query"), limit=_int(a, "limit", 10), min_score=_num(a, "min_score")
    ),
    "graph_traverse": lambda ctx, a: ctx.api.graph_traverse(
        _str(a, "entity", hint=" (the start entity)"),
        depth=_int(a, "depth", 2, maximum=5),
        relation_filter=_opt_str(a, "relation"),
    ),
    "graph_path": lambda ctx, a: ctx.api.graph_shortest_path(_str(a, "from_entity"), _str(a, "to_entity")),
    "graph_central": lambda ctx, a: ctx.api.graph_central_entities(
        limit=_int(a, "limit", 10), algorithm=_opt_str(a, "algorithm")
    ),
    "stats": lambda ctx, a: ctx.api.stats(),
    "why": lambda ctx, a: ctx.api.why(_fact_uuid(a)),
    "history": lambda ctx, a: ctx.api.fact_history(_str(a, "subject")),
    "core": lambda ctx, a: ctx.api.core_memory(),
}
_WRITES: dict[str, Handler] = {
    "fact_store": _fact_store,
    "fact_update": _fact_update,
    "fact_delete": lambda ctx, a: ctx.api.fact_delete(_fact_uuid(a), soft=_bool(a, "soft", True)),
    "entity_ensure": _entity_ensure,
    "entity_link": _entity_link,
    "timeline_add": _timeline_add,
    "semantic_index": _semantic_index,
    "forget": _write_action(_forget),
    "consolidate": _write_action(lambda ctx, a: ctx.api.consolidate()),
}


def table_actions() -> set[str]:
    """Every action the dispatch table knows (a unit test checks it equals the schema's enum)."""
    return set(_READS) | set(_WRITES) | set(CURATED_ACTIONS)


def _memory(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    action = args.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        raise ValidationError(f"'action' must be one of {', '.join(ACTIONS)}; got {v.shown(action)}")
    handler = _READS.get(action) or _WRITES.get(action)
    if handler is None:  # a curated action: answered by ``_curated`` before any envelope
        raise ValidationError(f"'{action}' is answered in Hermes' memory-tool shape, not as an envelope")
    return handler(ctx, args)


def _remember(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    kind = args.get("kind") or "fact"
    if kind == "fact":
        return _fact_store(ctx, args)
    if kind == "entity":
        return _entity_ensure(ctx, args)
    if kind == "relation":
        return _entity_link(ctx, args)
    if kind == "event":
        return _timeline_add(ctx, args)
    raise ValidationError(f"'kind' must be fact, entity, relation or event; got {v.shown(kind)}")


def _search(ctx: ToolContext, args: Mapping[str, Any]) -> Envelope:
    return _recall(ctx, args)


TOOLS: dict[str, Handler] = {SEARCH: _search, REMEMBER: _remember, MEMORY: _memory}
_WRITING = {REMEMBER} | {f"{MEMORY}:{a}" for a in (*_WRITES, "forget", "consolidate")}


# -- dispatch and results ----------------------------------------------------------------------------
def call_tool(ctx: ToolContext, name: str, args: Mapping[str, Any]) -> str:
    """Run one tool call and return its JSON result. Raises nothing for bad input or a failed
    operation (those become ``{"error": ...}``); a bug propagates to the host."""
    handler = TOOLS.get(name)
    if handler is None:
        return error_json(f"unknown tool {v.shown(name)}; this provider has {', '.join(sorted(TOOLS))}")
    if not isinstance(args, Mapping):
        return error_json(f"arguments must be a JSON object, got {type(args).__name__}")
    if name == MEMORY and args.get("action") in CURATED_ACTIONS:
        return _curated(ctx, str(args["action"]), args)
    try:
        envelope = handler(ctx, args)
    except HermesMemoryError as exc:
        return error_json(str(exc), exc.code)
    if not envelope["success"]:
        out: dict[str, Any] = {"error": envelope["error"], "error_type": envelope["meta"].get("error_type")}
        if envelope.get("data"):
            out["details"] = envelope["data"]
        return _dump(out)
    key = f"{name}:{args.get('action')}" if name == MEMORY else name
    if key in _WRITING:
        ctx.after_write()
    return _dump(_result(name, args, envelope))


def _curated(ctx: ToolContext, action: str, args: Mapping[str, Any]) -> str:
    """A curated action (add/replace/remove/read on MEMORY.md/USER.md) in Hermes' memory-tool shape."""
    result = curated_tool.run(
        ctx.api, action, args, source_id=ctx.session_id or None,
        check_write=lambda: _write(ctx), check_text=safety.ensure_storable,
    )  # fmt: skip
    if result.get("changed"):
        ctx.after_write()
    return _dump(_clean(result))


def error_json(message: str, error_type: str = "invalid_input") -> str:
    return json.dumps({"error": fence.quote(message), "error_type": error_type}, ensure_ascii=False)


def _result(name: str, args: Mapping[str, Any], envelope: Envelope) -> dict[str, Any]:
    data = envelope["data"]
    tiers = availability.tool_fields(*_tiers(envelope))
    if isinstance(data, dict) and "hits" in data:  # recall
        results = [_hit(h) for h in data["hits"]]
        said = [fence.quote(str(w)) for w in envelope["meta"].get("warnings") or []]  # e.g. decomposition
        return {"results": results, "count": len(results), **tiers, **({"warnings": said} if said else {})}
    out: dict[str, Any] = {"result": _clean(data)}
    if isinstance(data, list):
        out["count"] = len(data)
    if name == MEMORY:
        out = {"action": args.get("action"), **out}
    return {**out, **tiers}


def _tiers(envelope: Envelope) -> tuple[list[str], dict[str, str]]:
    """(tiers that answered, tier -> why it could not) of a successful call. Recall says so itself;
    for the others the tiers queried answered, except the vectors when another process held them."""
    meta = envelope["meta"]
    if "tiers_answered" in meta:
        return list(meta["tiers_answered"]), dict(meta.get("tiers_unavailable") or {})
    queried = [t for t in meta.get("tiers_queried") or [] if t in availability.TIER_WORDS]
    degraded = meta.get("degraded") or []
    unavailable = {"tier3": availability.busy_words(str(degraded[0]))} if degraded else {}
    return [t for t in queried if t not in unavailable], unavailable


def _safe(text: str) -> str:
    """Text as the model may see it: neutralised (``strict``, like the recall block); withheld when
    Hermes' own scanner still flags what is left."""
    shown = neutralise(text)
    return shown if not safety.findings(shown) else "[withheld: matched an injection pattern]"


def _hit(hit: Mapping[str, Any]) -> dict[str, Any]:
    meta = hit.get("metadata") or {}
    out = {
        "text": _safe(str(hit.get("text", ""))),
        "kind": hit.get("kind"),
        "tier": hit.get("tier"),
        "score": round(float(hit.get("score", 0.0)), 3),
        "date": _iso(hit.get("timestamp")),
        "id": hit.get("id"),
    }
    if hit.get("source"):
        out["source"] = _safe(str(hit["source"]))
    for key in ("speaker", "session_id", "store", "category"):
        if meta.get(key):
            out[key] = _safe(str(meta[key]))
    note = superseded_note(meta)
    if note:  # the statement was replaced: say by what and since when, as the prefetch block does
        out["superseded"] = _safe(note)
    return out


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (_iso(item) if k in _TIME_KEYS else _clean(item))
            for k, item in value.items()
            if k not in _NOISE
        }
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, str):
        return _safe(value)
    return value


def _iso(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).strftime("%Y-%m-%dT%H:%MZ")
    return value


def _dump(obj: dict[str, Any]) -> str:
    # Every string the model gets is quoted: no tag (the fence), no role marker posing as a message.
    obj = fence.quote_data(obj)
    text = json.dumps(obj, ensure_ascii=False, default=str)
    if len(text) <= MAX_RESULT_CHARS:
        return text
    # Too long for one tool result: keep the best-ranked items and say so.
    for key in ("results", "result"):
        items = obj.get(key)
        if isinstance(items, list):
            while items and len(text) > MAX_RESULT_CHARS:
                items = items[: max(1, len(items) * 3 // 4)] if len(items) > 1 else []
                obj = {**obj, key: items, "truncated": True}
                text = json.dumps(obj, ensure_ascii=False, default=str)
            return text
    return json.dumps({"error": "result too large to return; narrow the query or lower 'limit'"})


__all__ = ["TOOLS", "ToolContext", "call_tool", "error_json", "table_actions"]
