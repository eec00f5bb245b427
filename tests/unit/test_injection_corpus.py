"""Injection corpus (issue 7): prompt-injection, exfiltration, invisible-Unicode and homoglyph samples
(``tests/data/injection_corpus.json``, written for this project) go through every write path. Each is
either refused (ThreatDetectedError) or stored such that nothing that reads memory back — recall (hits
and the rendered block), prefetch, get_latest, semantic search, the tools, the MCP server — emits text
the threat scan flags. A benign control set, full of words like "ignore", "system" and "curl", is
stored and recalled unchanged."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import FAST_PROVIDER_YAML

from hermes_memory.api import MemoryAPI
from hermes_memory.hermes import registry, safety
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes.tools import ToolContext, call_tool
from hermes_memory.security.threats import scan_for_threats

# Importing the MCP SDK makes pydantic-settings warn about its own model; not ours to fix.
pytestmark = pytest.mark.filterwarnings(
    "ignore::pydantic_settings.exceptions.IncompleteFieldDefinitionWarning"
)
CORPUS = json.loads((Path(__file__).parents[1] / "data" / "injection_corpus.json").read_text("utf-8"))
CATEGORIES = ("prompt_injection", "exfiltration", "invisible", "homoglyph")
HOSTILE: list[str] = [sample for category in CATEGORIES for sample in CORPUS[category]]
BENIGN: list[str] = CORPUS["benign"]
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
# Innocent questions whose answers come from the hostile memories.
PROBES = ["instructions", "what are my instructions", "system prompt", "curl", "env file", "ssh key",
          "secret token", "tea", "weather", "note", "who are you now", "rules", "send"]  # fmt: skip
# Curated stores hold everything the corpus does not get refused for (nothing, if all goes well).
BIG_CURATED: dict[str, Any] = {"tier1": {"memory_char_limit": 200_000, "user_char_limit": 200_000}}


def flagged(text: str) -> list[str]:
    """Pattern ids either scanner reports for ``text`` (ours at ``strict``, plus Hermes' when present)."""
    return [m.pattern_id for m in scan_for_threats(text)] + safety.findings(text)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def assert_clean(value: Any, where: str) -> None:
    for text in strings(value):
        assert not flagged(text), f"{where} emitted flagged text {text[:120]!r}: {flagged(text)}"


@dataclass
class World:
    api: MemoryAPI
    ctx: ToolContext
    mcp: dict[str, Callable[..., Any]]
    outcomes: dict[str, dict[str, int]]


def _outcome(world: World, path: str, envelope: dict[str, Any]) -> None:
    kind = "stored" if envelope["success"] else str(envelope["meta"].get("error_type"))
    world.outcomes.setdefault(path, {}).setdefault(kind, 0)
    world.outcomes[path][kind] += 1


def _tool(world: World, tool: str, **args: Any) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(call_tool(world.ctx, tool, args))
    return decoded


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("injection")
    with MemoryAPI(hermes_home=home, background=False, **HASHING, **BIG_CURATED) as api:
        ctx = ToolContext(api=api, session_id="inj", writable=True, after_write=lambda: None)
        mcp: dict[str, Callable[..., Any]] = {}
        try:
            from hermes_memory.mcp_server import build_server

            mcp = {tool.name: tool.fn for tool in build_server(api)._tool_manager.list_tools()}
        except ImportError:
            pass
        w = World(api, ctx, mcp, {})
        _write_everything(w)
        yield w


def _write_everything(w: World) -> None:
    api = w.api
    for i, sample in enumerate(HOSTILE):
        _outcome(w, "fact_store", api.fact_store(sample))
        _outcome(w, "curated_add", api.curated_add(sample))
        _outcome(w, "curated_add_user", api.curated_add(sample, "user"))
        _outcome(w, "entity_ensure", api.entity_ensure(sample[:200], "other"))
        _outcome(w, "entity_alias", api.entity_ensure(f"Person {i}", "person", aliases=[sample[:200]]))
        _outcome(w, "timeline_add", api.timeline_add("event", sample[:500], description=sample))
        _outcome(w, "semantic_index", api.semantic_index(sample, wait=False))
        _outcome(w, "remember_message", api.remember_message(sample, "inj-session", 1_700_000_000 + i))
        _outcome(w, "remember_speaker", api.remember_turn(
            "I had a quiet day at home.", "Sounds nice.", "inj-speaker", 1_700_100_000 + i,
            user_name=sample[:200],
        ))  # fmt: skip
        for tool, args in (
            ("nextlevel_remember", {"content": sample}),
            ("nextlevel_remember", {"kind": "entity", "name": sample[:200]}),
            ("nextlevel_memory", {"action": "semantic_index", "text": sample}),
            ("nextlevel_memory", {"action": "timeline_add", "title": sample[:500]}),
        ):
            out = _tool(w, tool, **args)
            path = f"tool:{args.get('action') or args.get('kind', 'fact')}"
            w.outcomes.setdefault(path, {}).setdefault(out.get("error_type", "stored"), 0)
            w.outcomes[path][out.get("error_type", "stored")] += 1
        if "remember" in w.mcp and i % 3 == 0:  # each call flushes; a third of the corpus is plenty
            w.mcp["remember"](text=sample, session_id="inj-mcp")
            w.outcomes.setdefault("mcp_remember", {}).setdefault("stored", 0)
            w.outcomes["mcp_remember"]["stored"] += 1
    for i, sentence in enumerate(BENIGN):
        assert api.fact_store(sentence)["success"], sentence
        assert api.remember_message(sentence, "benign", 1_700_200_000 + i, speaker="Dana")["success"]
    assert api.flush(timeout=120)["data"]["drained"]


def test_corpus_is_large_and_every_hostile_sample_is_flagged() -> None:
    assert len(HOSTILE) >= 150 and len(BENIGN) >= 50
    missed = [sample for sample in HOSTILE if not scan_for_threats(sample)]
    assert not missed, f"samples the scanner does not flag: {missed}"
    print(f"INJECTION_SAMPLES={len(HOSTILE)} BENIGN_SAMPLES={len(BENIGN)}")


def test_benign_control_set_is_never_flagged() -> None:
    assert [s for s in BENIGN if flagged(s)] == []


def test_scanned_write_paths_refuse_every_sample(world: World) -> None:
    # Paths that scan on write refuse everything; the others store the text and rely on the read side.
    for path in ("fact_store", "curated_add", "curated_add_user", "entity_ensure", "entity_alias",
                 "timeline_add", "semantic_index", "tool:fact", "tool:entity", "tool:semantic_index",
                 "tool:timeline_add"):  # fmt: skip
        assert world.outcomes[path] == {"threat_detected": len(HOSTILE)}, (path, world.outcomes[path])
    assert world.outcomes["remember_message"] == {"stored": len(HOSTILE)}
    assert world.outcomes["remember_speaker"] == {"stored": len(HOSTILE)}
    curated = world.api.curated_snapshot()["data"]
    assert curated["memory"] == [] and curated["user"] == []


def test_recall_never_emits_flagged_text(world: World) -> None:
    # Every stored sample can surface; half of them as queries over all tiers, the probes tier by tier.
    calls: list[tuple[str, list[str] | None]] = [(query, None) for query in HOSTILE[::2]]
    calls += [(query, [tier]) for query in PROBES for tier in ("tier1", "tier2", "tier3", "graph")]
    for query, tiers in calls:
        envelope = world.api.recall(query, tiers=tiers, limit=20)
        assert envelope["success"], (query, envelope["error"])
        assert_clean(envelope["data"]["hits"], f"recall({query!r}) hits")
        assert not flagged(envelope["data"]["rendered"]), (query, envelope["data"]["rendered"])
    # The hostile turns were stored and are found: the check above had something to check.
    found = world.api.recall("instructions", tiers=["tier2"], limit=50)["data"]["hits"]
    assert any(hit["metadata"].get("neutralised") for hit in found)


def test_get_latest_and_semantic_search_never_emit_flagged_text(world: World) -> None:
    latest = world.api.get_latest(count=1000)
    assert latest["success"] and len(latest["data"]) >= len(HOSTILE)
    assert_clean(latest["data"], "get_latest")
    for query in [*HOSTILE[::6], *PROBES]:
        for envelope in (world.api.semantic_search(query, limit=20, min_score=0.0),
                         world.api.semantic_hybrid(query, limit=20)):  # fmt: skip
            assert envelope["success"], envelope["error"]
            assert_clean(envelope["data"], f"semantic search {query!r}")


def test_tool_output_never_emits_flagged_text(world: World) -> None:
    for query in [*HOSTILE[::6], *PROBES]:
        assert_clean(_tool(world, "nextlevel_search", query=query, limit=20), f"nextlevel_search {query!r}")
        for action, args in (("fact_query", {"query": query}), ("semantic_search", {"query": query}),
                             ("entity_query", {"name": query[:200]}), ("timeline_query", {})):  # fmt: skip
            out = _tool(world, "nextlevel_memory", action=action, **args)
            assert_clean(out, f"nextlevel_memory {action} {query!r}")
    assert_clean(_tool(world, "nextlevel_memory", action="history", subject="Dana"), "history")


def test_mcp_output_never_emits_flagged_text(world: World) -> None:
    if not world.mcp:
        pytest.skip("the mcp extra is not installed")
    for query in [*HOSTILE[::8], *PROBES]:
        assert_clean(world.mcp["recall"](query=query, limit=20), f"mcp recall {query!r}")
        assert_clean(world.mcp["fact_query"](query=query), f"mcp fact_query {query!r}")
    assert_clean(world.mcp["timeline_query"](), "mcp timeline_query")


def test_benign_text_is_stored_and_recalled_unchanged(world: World) -> None:
    for sentence in BENIGN:
        facts = world.api.fact_query(sentence, limit=50, min_confidence=0.0)["data"]
        assert sentence in [fact["content"] for fact in facts], sentence
        hits = world.api.recall(sentence, tiers=["tier2"], limit=50)["data"]
        texts = [hit["text"] for hit in hits["hits"]]
        assert any(sentence in text for text in texts), (sentence, texts[:5])
        assert not any(hit["metadata"].get("neutralised") for hit in hits["hits"] if sentence in hit["text"])
        assert sentence in hits["rendered"] or any(
            " ".join(sentence.split()) in line for line in hits["rendered"].splitlines()
        ), sentence




def test_prefetch_never_emits_flagged_text(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    provider = NextLevelProvider()
    provider.initialize("inj-prefetch", hermes_home=str(home), platform="cli", agent_identity="default")
    try:
        for sample in HOSTILE[::2]:
            provider.sync_turn(sample, "Noted.")
        for sentence in BENIGN[:10]:
            provider.sync_turn(sentence, "Noted.")
        shared = registry.find(str(home), "default")
        assert shared is not None and shared.api.flush(timeout=120)["data"]["drained"]
        shown = 0
        for query in [*HOSTILE[::4], *PROBES, *BENIGN[:10]]:
            block = provider.prefetch(query)
            assert not flagged(block), (query, block)
            shown += bool(block.strip())
        assert shown > 0  # the benign turns come back: prefetch was not simply empty
    finally:
        provider.shutdown()


def test_outcome_counts_are_reported(world: World) -> None:
    total = sum(sum(kinds.values()) for kinds in world.outcomes.values())
    print(f"INJECTION_WRITES={total} " + json.dumps(world.outcomes, sort_keys=True))
    assert total >= len(HOSTILE) * 10
    assert re.fullmatch(r"\d+", str(total))
