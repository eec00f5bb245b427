"""`hermes-memory mcp` as a real subprocess over stdio, driven by the MCP client library: tools are listed,
remember then recall returns the text, why explains a fact, stats counts, bad input is a tool error.

Fast: the hashing embedder and the in-process vector backend, chosen through a --config file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.types import CallToolResult, TextContent  # noqa: E402

from hermes_memory.mcp_server import TOOL_NAMES  # noqa: E402

TIMEOUT_S = 120  # a bound against a hang, not a speed assertion
TEXT = "My sister Anna moved to Lisbon in May 2023 and works at a bakery."


def _text(result: CallToolResult) -> str:
    parts = [c.text for c in result.content if isinstance(c, TextContent)]
    assert parts, result
    return "\n".join(parts)


def _json(result: CallToolResult) -> Any:
    assert not result.isError, _text(result)
    if result.structuredContent is not None:
        content = result.structuredContent
        # FastMCP wraps non-object results (lists) as {"result": ...}.
        return content["result"] if set(content) == {"result"} else content
    return json.loads(_text(result))


def _server(tmp_path: Path) -> StdioServerParameters:
    config = tmp_path / "config.yaml"
    config.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\n", encoding="utf-8")
    entry = "import sys; from hermes_memory.cli import main; sys.exit(main())"
    args = ["-c", entry, "mcp", "--home", str(tmp_path / "home"), "--config", str(config)]
    return StdioServerParameters(command=sys.executable, args=args, env={"HF_HUB_OFFLINE": "1"})


async def _session_checks(tmp_path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with anyio.fail_after(TIMEOUT_S):
        async with stdio_client(_server(tmp_path)) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            out["remember"] = _json(
                await session.call_tool(
                    "remember", {"text": TEXT, "session_id": "mcp-test", "speaker": "Sam"}
                )
            )
            out["recall"] = _json(
                await session.call_tool("recall", {"query": "Where did Anna move?", "limit": 5})
            )
            out["per_tier"] = _json(
                await session.call_tool("recall", {"query": "Where did Anna move?", "limit_per_tier": 1})
            )
            out["both_limits"] = await session.call_tool(
                "recall", {"query": "Anna", "limit": 2, "limit_per_tier": 1}
            )
            out["facts"] = _json(await session.call_tool("fact_query", {"query": "Lisbon"}))
            if out["facts"]:
                out["why"] = _json(await session.call_tool("why", {"fact_uuid": out["facts"][0]["uuid"]}))
            out["timeline"] = _json(await session.call_tool("timeline", {"entity": "Anna"}))
            out["stats"] = _json(await session.call_tool("stats", {}))
            out["bad_limit"] = await session.call_tool("recall", {"query": "Anna", "limit": "many"})
            out["empty_query"] = await session.call_tool("recall", {"query": "   "})
            out["unknown_fact"] = await session.call_tool("why", {"fact_uuid": "no-such-fact"})
            out["forget_no_target"] = await session.call_tool("forget", {})
            out["forget_preview"] = _json(await session.call_tool("forget", {"entity": "Anna"}))
            out["recall_after_preview"] = _json(await session.call_tool("recall", {"query": "Anna Lisbon"}))
            out["forget"] = _json(await session.call_tool("forget", {"entity": "Anna", "confirm": True}))
            out["recall_after_forget"] = _json(await session.call_tool("recall", {"query": "Anna Lisbon"}))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # One server session for the whole module: starting Python + the library is the slow part.
    result: dict[str, Any] = anyio.run(_session_checks, tmp_path_factory.mktemp("mcp"))
    return result


def test_lists_every_tool(results: dict[str, Any]) -> None:
    assert results["tools"] == sorted(TOOL_NAMES)


def test_remember_then_recall_returns_the_text(results: dict[str, Any]) -> None:
    assert results["remember"]["queued"] is True
    assert results["remember"]["flush"]["drained"] is True
    texts = [hit["text"] for hit in results["recall"]["hits"]]
    assert any("Lisbon" in text for text in texts), texts
    assert "Lisbon" in results["recall"]["rendered"]


def test_recall_passes_limit_per_tier_through(results: dict[str, Any]) -> None:
    hits = results["per_tier"]["hits"]
    tiers = [hit["tier"] for hit in hits]
    assert hits and len(tiers) == len(set(tiers)), tiers  # one hit per tier at most
    assert all(hit["kind"] and hit["source"] for hit in hits)
    both = results["both_limits"]
    assert both.isError and "not both" in both.content[0].text


def test_why_explains_an_extracted_fact(results: dict[str, Any]) -> None:
    assert results["facts"], "the extractor stored no fact about Lisbon"
    why = results["why"]
    assert why["fact"]["uuid"] == results["facts"][0]["uuid"]
    assert any(TEXT in (episode.get("text") or "") for episode in why["source_episodes"]), why


def test_stats_count_the_remembered_message(results: dict[str, Any]) -> None:
    tier2 = results["stats"]["tier2"]
    assert json.dumps(tier2)  # plain JSON
    assert tier2["episodes"] >= 1, tier2


def test_forget_previews_without_confirm_and_erases_with_it(results: dict[str, Any]) -> None:
    assert any("Anna" in hit["text"] for hit in results["recall_after_preview"]["hits"])
    assert not any("Anna" in hit["text"] for hit in results["recall_after_forget"]["hits"])
    assert "Anna" not in results["recall_after_forget"]["rendered"]


@pytest.mark.parametrize("call", ["bad_limit", "empty_query", "unknown_fact", "forget_no_target"])
def test_bad_input_is_a_tool_error_without_traceback(results: dict[str, Any], call: str) -> None:
    result: CallToolResult = results[call]
    assert result.isError
    message = _text(result)
    assert message.strip()
    assert "Traceback" not in message
