"""Absurd ``limit`` / ``budget`` / ``depth`` / ``count`` / ``max_items`` values (negative, 0, huge, not an
integer, NaN, infinite, text, bool) through every entry point that takes one — MemoryAPI, the provider's
tools and the MCP server (through its real argument handling) — get a clear error naming the parameter,
or the documented clamp (``graph_traverse`` depth: capped at the graph's maximum, said in the answer).
Never a crash, a hang or a huge allocation: every call is bounded in time and its result is small.

Prints ``ABSURD_LIMITS=<calls> {surface: count}`` when the module finishes."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from seed_memory import seed_knowledge

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes.tools import ToolContext, call_tool

pytestmark = pytest.mark.filterwarnings(
    "ignore::pydantic_settings.exceptions.IncompleteFieldDefinitionWarning"
)
FAST: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
CALL_TIMEOUT_S = 60.0
MAX_RESULT_CHARS = 2_000_000  # a bounded answer, whatever the limit asked for

ABSURD: list[Any] = [
    -1,
    0,
    -(2**31),
    -(2**63),
    2**31,
    2**63,
    2**64,
    10**30,
    10**9,
    1.5,
    5.0,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    "5",
    "ten",
    "",
    "1e9",
    True,
    False,
    [5],
    {"n": 5},
]
COUNT: dict[str, int] = {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    line = f"ABSURD_LIMITS={sum(COUNT.values())} " + json.dumps(COUNT, sort_keys=True)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryAPI]:
    home: Path = tmp_path_factory.mktemp("absurd")
    memory = MemoryAPI(hermes_home=home, **FAST)
    seed_knowledge(memory)
    memory.remember_turn("Maya moved to Lisbon last May.", "Noted, Lisbon.", "s1", 1_700_000_100.0)
    memory.flush(timeout=30)
    yield memory
    memory.close()


def bounded(fn: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(CALL_TIMEOUT_S)
    assert not thread.is_alive(), "the call hung"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# (method, fixed arguments, parameter, (lowest valid, highest valid) or None when any int >= lowest is a
# documented clamp)
API_LIMITS: list[tuple[str, dict[str, Any], str, tuple[int, int | None]]] = [
    ("recall", {"query": "Maya"}, "limit", (1, 200)),
    ("recall", {"query": "Maya"}, "budget_tokens", (1, 100_000)),
    ("recall", {"query": "Maya"}, "limit_per_tier", (1, 50)),
    ("fact_query", {"query": "Maya"}, "limit", (1, 1000)),
    ("entity_query", {"name": "Maya"}, "limit", (1, 1000)),
    ("timeline", {"entity": "Maya"}, "limit", (1, 1000)),
    ("timeline_query", {}, "limit", (1, 1000)),
    ("semantic_search", {"query": "Maya"}, "limit", (1, 1000)),
    ("semantic_hybrid", {"query": "Maya"}, "limit", (1, 1000)),
    ("get_latest", {}, "count", (1, 1000)),
    ("audit_log", {}, "limit", (1, 1000)),
    ("contradictions", {}, "limit", (1, 1000)),
    ("graph_central_entities", {}, "limit", (1, 1000)),
    ("graph_spread", {"seeds": ["Maya"]}, "max_hops", (1, 6)),
    ("graph_traverse", {"start_entity": "Maya"}, "depth", (0, None)),
    ("maintenance_runs", {}, "limit", (1, 1000)),
    ("embed_pending", {}, "max_items", (1, None)),
]


def _valid(value: Any, bounds: tuple[int, int | None]) -> bool:
    low, high = bounds
    return _is_int(value) and value >= low and (high is None or value <= high)


@pytest.mark.parametrize(
    ("method", "fixed", "param", "bounds"), API_LIMITS, ids=[f"{m}.{p}" for m, _, p, _ in API_LIMITS]
)
def test_memory_api_limits(
    api: MemoryAPI, method: str, fixed: dict[str, Any], param: str, bounds: tuple[int, int | None]
) -> None:
    for value in ABSURD:
        COUNT["api"] = COUNT.get("api", 0) + 1
        result = bounded(lambda value=value: getattr(api, method)(**fixed, **{param: value}))
        assert isinstance(result, dict) and set(result) >= {"success", "data", "error"}, result
        assert len(json.dumps(result, default=str)) < MAX_RESULT_CHARS
        if _valid(value, bounds):
            assert result["success"], (method, param, value, result["error"])
        else:
            assert not result["success"], (method, param, value)
            assert result["meta"]["error_type"] == "invalid_input", (method, param, value, result)
            assert param in result["error"], (method, param, value, result["error"])


def test_graph_traverse_depth_is_clamped_and_says_so(api: MemoryAPI) -> None:
    data = api.graph_traverse("Maya", depth=10**30)["data"]
    assert data["depth_capped"] is True and data["depth"] == data["max_depth"] < 10**30


# (tool, action or None, parameter, highest valid)
TOOL_LIMITS: list[tuple[str, dict[str, Any], str, int]] = [
    ("nextlevel_search", {"query": "Maya"}, "limit", 50),
    ("nextlevel_memory", {"action": "fact_query", "query": "Maya"}, "limit", 50),
    ("nextlevel_memory", {"action": "entity_query", "name": "Maya"}, "limit", 50),
    ("nextlevel_memory", {"action": "timeline_query"}, "limit", 50),
    ("nextlevel_memory", {"action": "semantic_search", "query": "Maya"}, "limit", 50),
    ("nextlevel_memory", {"action": "graph_traverse", "entity": "Maya"}, "depth", 5),
    ("nextlevel_memory", {"action": "graph_central"}, "limit", 50),
]


@pytest.mark.parametrize(
    ("tool", "fixed", "param", "high"),
    TOOL_LIMITS,
    ids=[f"{t}.{f.get('action', '')}.{p}" for t, f, p, _ in TOOL_LIMITS],
)
def test_tool_limits(api: MemoryAPI, tool: str, fixed: dict[str, Any], param: str, high: int) -> None:
    ctx = ToolContext(api=api, session_id="s-now", writable=True, after_write=lambda: None)
    for value in ABSURD:
        COUNT["tools"] = COUNT.get("tools", 0) + 1
        out = bounded(lambda value=value: call_tool(ctx, tool, {**fixed, param: value}))
        assert isinstance(out, str) and len(out) < MAX_RESULT_CHARS
        decoded = json.loads(out)
        # JSON from a model: integral numbers and digit strings are read as integers.
        number = int(value) if isinstance(value, float) and value.is_integer() else value
        number = int(number) if isinstance(number, str) and number.strip().isdigit() else number
        if _is_int(number) and 1 <= number <= high:
            assert "error" not in decoded, (tool, fixed, value, decoded)
        else:
            assert "error" in decoded, (tool, fixed, value, decoded)
            assert param in decoded["error"], (tool, fixed, value, decoded)


MCP_LIMITS: list[tuple[str, dict[str, Any], str, int]] = [
    ("recall", {"query": "Maya"}, "limit", 200),
    ("recall", {"query": "Maya"}, "limit_per_tier", 50),
    ("timeline", {"entity": "Maya"}, "limit", 1000),
    ("timeline_query", {}, "limit", 1000),
    ("fact_query", {"query": "Maya"}, "limit", 1000),
]


@pytest.mark.parametrize(
    ("tool", "fixed", "param", "high"), MCP_LIMITS, ids=[f"{t}.{p}" for t, _, p, _ in MCP_LIMITS]
)
def test_mcp_limits(api: MemoryAPI, tool: str, fixed: dict[str, Any], param: str, high: int) -> None:
    pytest.importorskip("mcp")
    from mcp.server.fastmcp.exceptions import ToolError

    from hermes_memory.mcp_server import build_server

    server = build_server(api)
    for value in ABSURD:
        if isinstance(value, float) and not math.isfinite(value):
            continue  # not JSON: no MCP client can send it
        COUNT["mcp"] = COUNT.get("mcp", 0) + 1
        args = {**fixed, param: value}
        try:
            out = bounded(lambda args=args: asyncio.run(server.call_tool(tool, args)))
        except ToolError as exc:
            assert param in str(exc) and "Traceback" not in str(exc), (tool, value, str(exc))
            continue
        assert len(json.dumps(out, default=str)) < MAX_RESULT_CHARS
        # Strict integers only (no bool read as 1, no "5", no 5.0), within range.
        assert _is_int(value) and 1 <= value <= high, (tool, value, out)
