"""The MCP server (`hermes-memory mcp`): recall, remember, timeline, why, forget, stats and friends over
stdio, so any MCP client shares the same memory as Hermes.

Every tool returns the envelope's ``data`` as JSON; a failed envelope becomes an MCP tool error carrying
the envelope's one-line message (never a traceback). Needs the ``mcp`` extra.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory import __version__
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import DependencyMissingError
from hermes_memory.hermes.settings import load_memory_config
from hermes_memory.scoping import check_scope_name
from hermes_memory.security import fence
from hermes_memory.security.threats import neutralise_data
from hermes_memory.validation import profile_name

if TYPE_CHECKING:
    _Int = int
else:
    try:  # pydantic comes with the mcp extra; without it build_server refuses before any tool exists
        from pydantic import StrictInt as _Int
    except ImportError:
        _Int = int

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

SERVER_NAME = "hermes-memory"
TOOL_NAMES = (
    "recall",
    "remember",
    "timeline",
    "timeline_query",
    "why",
    "fact_query",
    "forget",
    "stats",
    "core_memory",
    "observe_many",
    "assert_fact",
    "as_of",
    "list_agents",
    "reflect",
)
_INSTRUCTIONS = (
    "Long-term memory. Use `recall` before answering questions about the user or past conversations, "
    "`remember` to store something said, `why` to see where a fact came from."
)


def _fastmcp() -> type[FastMCP]:
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError as exc:
        raise DependencyMissingError(
            "the MCP server needs the 'mcp' package: pip install 'hermes-memory-tiers[mcp]'"
        ) from exc
    return FastMCP


def _tool_error(message: str) -> Exception:
    from mcp.server.fastmcp.exceptions import ToolError

    return ToolError(message)


def _data(envelope: dict[str, Any]) -> Any:
    """The envelope's data as plain JSON values; a failed envelope raises a tool error."""
    if not envelope["success"]:
        raise _tool_error(str(envelope["error"]))
    # default=str: timestamps and odd values become strings instead of failing the whole result.
    data = json.loads(json.dumps(envelope["data"], ensure_ascii=False, default=str))
    # Memory is data, never instructions: remembered text reaches the client neutralised and quoted
    # (tags escaped, role markers marked: ``security.fence``).
    return fence.quote_data(neutralise_data(data))


def _guard(call: Callable[[], dict[str, Any]]) -> Any:
    from hermes_memory.errors import HermesMemoryError

    try:
        return _data(call())
    except HermesMemoryError as exc:
        raise _tool_error(str(exc)) from exc


def build_server(api: MemoryAPI) -> FastMCP:
    """An MCP server whose tools call ``api``. Raises DependencyMissingError without the ``mcp`` extra."""
    server = _fastmcp()(SERVER_NAME, instructions=_INSTRUCTIONS, log_level="WARNING")
    # FastMCP takes no version: without one the low-level server reports the mcp library's own.
    server._mcp_server.version = __version__

    @server.tool(
        description="Ranked, dated memories about a query from every tier (or `tiers`): turns, facts, "
        "indexed texts, events, entity cards, curated notes. `limit` hits in all (default 10) or "
        "`limit_per_tier` per tier, not both."
    )
    def recall(
        query: str,
        limit: _Int | None = None,
        tiers: list[str] | None = None,
        as_of: float | str | None = None,
        limit_per_tier: _Int | None = None,
        valid_at: float | str | None = None,
    ) -> dict[str, Any]:
        point: Any = as_of if valid_at is None else {"valid": valid_at, "known": as_of}
        result: dict[str, Any] = _guard(
            lambda: api.recall(query, tiers=tiers, limit=limit, as_of=point, limit_per_tier=limit_per_tier)
        )
        return result

    @server.tool(description="Remember a message (stored as an episode, facts extracted), then flush.")
    def remember(
        text: str,
        session_id: str = "mcp",
        speaker: str | None = None,
        role: str = "user",
        time: float | str | None = None,
    ) -> dict[str, Any]:
        queued: dict[str, Any] = _guard(
            lambda: api.remember_message(text, session_id, time, role=role, speaker=speaker)
        )
        queued["flush"] = _guard(lambda: api.flush(timeout=30.0))
        return queued

    @server.tool(description="Dated events and facts about one entity, oldest first.")
    def timeline(entity: str, limit: _Int = 100) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = _guard(lambda: api.timeline(entity, limit))
        return result

    @server.tool(description="Timeline events within [start, end] (Unix seconds), newest first.")
    def timeline_query(
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        entity: str | None = None,
        limit: _Int = 20,
    ) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = _guard(
            lambda: api.timeline_query(start, end, event_type, limit, entity=entity)
        )
        return result

    @server.tool(description="Where a fact came from: source turns, extractor, confidence, supersessions.")
    def why(fact_uuid: str) -> dict[str, Any]:
        result: dict[str, Any] = _guard(lambda: api.why(fact_uuid))
        return result

    @server.tool(description="Facts matching free text (BM25); without text, the newest.")
    def fact_query(
        query: str | None = None, limit: _Int = 10, as_of: float | None = None
    ) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = _guard(lambda: api.fact_query(query, limit=limit, as_of=as_of))
        return result

    @server.tool(
        description="Forget a record by uuid or recall hit id (`id`, e.g. episode:<uuid>) or everything "
        "about an entity (`entity`) in every tier. "
        "Without confirm=true it only previews what would go (counts per tier, and 'related': other "
        "names the entity is mentioned under, which include_related=true or a list of them adds); with "
        "it, irreversible. A forget of more than a few turns has a 'warning' in its preview and also "
        "needs confirm_large=true."
    )
    def forget(
        id: str | None = None,
        entity: str | None = None,
        confirm: bool = False,
        include_related: bool | list[str] = False,
        confirm_large: bool = False,
    ) -> dict[str, Any]:
        if (id is None) == (entity is None):
            raise _tool_error("pass exactly one of id or entity")
        # Looked up at call time: forget/forget_entity come from the ops mixin.
        method = getattr(api, "forget" if id is not None else "forget_entity", None)
        if method is None:
            raise _tool_error("forget is not available in this version of hermes-memory")
        target = id if id is not None else entity
        result: dict[str, Any] = _guard(
            lambda: method(
                target, confirm=confirm, include_related=include_related, confirm_large=confirm_large
            )
        )
        return result

    @server.tool(
        description="Remember many messages or turns at once, all or nothing: each item {text, speaker?, "
        "role?} or {user?, assistant?}, with optional session_id, time, metadata, turn_id; then flush."
    )
    def observe_many(items: list[dict[str, Any]], session_id: str = "mcp") -> dict[str, Any]:
        queued: dict[str, Any] = _guard(lambda: api.observe_many(items, session_id))
        queued["flush"] = _guard(lambda: api.flush(timeout=30.0))
        return queued

    @server.tool(
        description="Store a fact triple (subject, predicate, object) true from valid_from until valid_to "
        "(Unix seconds or ISO dates); an overlapping older value of the same subject+predicate is superseded."
    )
    def assert_fact(
        subject: str,
        predicate: str,
        object: str,
        valid_from: float | str | None = None,
        valid_to: float | str | None = None,
        confidence: float = 1.0,
    ) -> dict[str, Any]:
        result: dict[str, Any] = _guard(
            lambda: api.assert_fact(subject, predicate, object, valid_from, valid_to, confidence=confidence)
        )
        return result

    @server.tool(
        description="Facts true at `valid` (world time) as known at `known` (system time; default now), "
        "about `subject` or matching `query` (times: Unix seconds or ISO dates)."
    )
    def as_of(
        valid: float | str | None = None,
        known: float | str | None = None,
        subject: str | None = None,
        query: str | None = None,
        limit: _Int = 50,
    ) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = _guard(
            lambda: api.as_of(valid, known, subject=subject, query=query, limit=limit)
        )
        return result

    @server.tool(description="The agents (scopes) that share this store, and which of them this one reads.")
    def list_agents() -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = _guard(api.list_agents)
        return result

    @server.tool(description="LLM insights over recent turns, stored as facts citing them (needs the LLM).")
    def reflect(session_id: str | None = None, limit: _Int = 50) -> dict[str, Any]:
        result: dict[str, Any] = _guard(lambda: api.reflect(session_id, limit=limit))
        return result

    @server.tool(description="Counts and sizes of every memory tier.")
    def stats() -> dict[str, Any]:
        result: dict[str, Any] = _guard(api.stats)
        return result

    @server.tool(
        description="The core memory: a few durable bullets about the agent (SOUL), tools (TOOLS), "
        "standing rules (RULE) and the user (USER), as markdown and per section."
    )
    def core_memory() -> dict[str, Any]:
        result: dict[str, Any] = _guard(api.core_memory)
        return result

    return server


def serve_stdio(
    *,
    home: str | os.PathLike[str] | None = None,
    profile: str | None = None,
    config: str | os.PathLike[str] | None = None,
    scope: str | None = None,
) -> None:
    """Open the memory (as ``scope``, default config ``scope.name``) and serve it over stdio until the
    client disconnects.

    Raises DependencyMissingError without the ``mcp`` extra, ConfigError/StorageError when the memory
    cannot be opened.
    """
    _fastmcp()  # fail before opening the store when the extra is missing
    if profile is not None:
        profile_name("profile", profile)
    if scope is not None:
        check_scope_name(scope)
    # The same settings Hermes' provider reads for this home (HOME/nextlevel.yaml, or ``config``).
    resolved = load_memory_config(home, config_path=config, profile=profile)
    with MemoryAPI(resolved.config, actor="mcp", scope=scope) as api:
        build_server(api).run("stdio")


__all__ = ["SERVER_NAME", "TOOL_NAMES", "build_server", "serve_stdio"]
