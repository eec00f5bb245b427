"""The <memory-context> fence holds (issue 14, defect 1): the adversarial corpus
(``tests/data/fence_corpus.json``, written for this project) goes in through the real write paths (a
Hermes turn via ``sync_turn``, the provider's remember tool, the API's fact store) and comes back
through prefetch, wrapped by Hermes' own ``build_memory_context_block`` (its sanitiser included),
through every read tool of the provider and through the MCP server. What the model receives has
exactly one opening and one closing fence, whatever the case, spacing or nesting of stored tags, and no
role marker that is not marked ``[quoted]``. Ordinary sentences come back unchanged.

Run with ``-s`` to see the counts per class (``FENCE_CORPUS ...``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fence_checks import fences, posing
from hermes_settings import FAST_PROVIDER_YAML

from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.security import fence, threats

pytestmark = pytest.mark.filterwarnings(
    "ignore::pydantic_settings.exceptions.IncompleteFieldDefinitionWarning"
)
memory_manager = pytest.importorskip("agent.memory_manager", reason="hermes-agent is not installed")

CORPUS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "data" / "fence_corpus.json").read_text("utf-8")
)
CLASSES = [key for key in CORPUS if key not in ("about", "benign")]
SAMPLES: list[tuple[str, str]] = [(cls, sample) for cls in CLASSES for sample in CORPUS[cls]]
BENIGN: list[str] = CORPUS["benign"]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


@dataclass
class World:
    provider: NextLevelProvider
    mcp: dict[str, Any]
    blocks: list[str] = field(default_factory=list)
    tool_texts: list[str] = field(default_factory=list)
    shown_by_class: dict[str, int] = field(default_factory=dict)


def _tool(provider: NextLevelProvider, name: str, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(name, args))
    return answer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("fence") / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    provider = NextLevelProvider()
    provider.initialize("fence", hermes_home=str(home), platform="cli", agent_identity="default")
    try:
        shared = registry.find(str(home), "default")
        assert shared is not None
        for i, (_, sample) in enumerate(SAMPLES):
            provider.sync_turn(sample, "Noted.")  # a Hermes turn: stored whatever it says
            if i % 4 == 0:  # the write tools refuse what the scan flags; the rest is stored as a fact
                _tool(provider, "nextlevel_remember", content=sample)
                shared.api.fact_store(sample)
        for sentence in BENIGN:
            provider.sync_turn(sentence, "Noted.")
        assert shared.api.flush(timeout=300)["data"]["drained"]
        mcp: dict[str, Any] = {}
        try:
            from hermes_memory.mcp_server import build_server
        except ImportError:
            pass
        else:
            mcp = {tool.name: tool.fn for tool in build_server(shared.api)._tool_manager.list_tools()}
        yield World(provider, mcp)
    finally:
        provider.shutdown()


def test_corpus_counts_and_classes() -> None:
    counts = {cls: len(CORPUS[cls]) for cls in CLASSES}
    print("FENCE_CORPUS " + json.dumps({**counts, "total": len(SAMPLES), "benign": len(BENIGN)}))
    assert len(SAMPLES) >= 300 and len(BENIGN) >= 20
    assert all(count >= 15 for count in counts.values()), counts


def test_every_sample_outside_the_fence_class_is_flagged_when_written() -> None:
    # Detection is at write time: each instruction-bearing sample gets a FLAGGED verdict.
    missed = [(cls, s) for cls, s in SAMPLES if cls != "fence_tag" and threats.is_clean(s)]
    assert missed == []


def test_prefetch_through_hermes_keeps_one_fence_and_no_posing_role(world: World) -> None:
    build = memory_manager.build_memory_context_block
    shown_lines = escaped = 0
    for i, (cls, sample) in enumerate(SAMPLES):
        world.provider.on_session_switch(f"read-{i}")  # nothing shown yet: the whole answer comes back
        block = world.provider.prefetch(sample)
        if not block:
            continue
        wrapped = build(block)  # Hermes' sanitiser runs here, after ours
        assert fences(wrapped) == (1, 1), (cls, sample, wrapped)
        assert posing(wrapped) == [], (cls, sample, posing(wrapped))
        assert wrapped.rstrip().endswith("</memory-context>")
        lines = [line for line in block.splitlines() if line.startswith("- [")]
        shown_lines += len(lines)
        escaped += sum("&lt;" in line for line in lines)
        world.shown_by_class[cls] = world.shown_by_class.get(cls, 0) + len(lines)
    print(f"FENCE_PREFETCH lines={shown_lines} escaped_lines={escaped} by_query_class="
          + json.dumps(world.shown_by_class, sort_keys=True))  # fmt: skip
    # Stored fence tags did reach the block (escaped): the fence held with them inside it.
    assert shown_lines > 0 and escaped > 0


def test_every_read_tool_returns_no_fence_and_no_posing_role(world: World) -> None:
    checked = 0
    for cls, sample in SAMPLES[::3]:
        answers = [
            _tool(world.provider, "nextlevel_search", query=sample, limit=20),
            _tool(world.provider, "nextlevel_memory", action="recall", query=sample, limit=20),
            _tool(world.provider, "nextlevel_memory", action="fact_query", query=sample[:200]),
            _tool(world.provider, "nextlevel_memory", action="semantic_search", query=sample),
            _tool(world.provider, "nextlevel_memory", action="timeline_query"),
        ]
        for answer in answers:
            text = json.dumps(answer, ensure_ascii=False)
            for piece in strings(answer):
                assert fences(piece) == (0, 0), (cls, sample, piece)
                assert posing(piece) == [], (cls, sample, piece)
            checked += len(text)
    assert checked > 0


def test_mcp_tools_return_no_fence_and_no_posing_role(world: World) -> None:
    if not world.mcp:
        pytest.skip("the mcp extra is not installed")
    for cls, sample in SAMPLES[::4]:
        for answer in (
            world.mcp["recall"](query=sample, limit=20),
            world.mcp["fact_query"](query=sample[:200]),
        ):
            for piece in strings(answer):
                assert fences(piece) == (0, 0), (cls, sample, piece)
                assert posing(piece) == [], (cls, sample, piece)


def test_ordinary_sentences_come_back_unchanged(world: World) -> None:
    for sentence in BENIGN:
        assert threats.is_clean(sentence) and fence.quote(sentence) == sentence, sentence
        hits = _tool(world.provider, "nextlevel_search", query=sentence, limit=20)["results"]
        assert sentence in [hit["text"] for hit in hits], sentence
    world.provider.on_session_switch("benign")
    block = world.provider.prefetch("the instructions for the new bookshelf")
    assert "The instructions for the new bookshelf were in Swedish." in block


def test_quote_is_idempotent_and_escapes_every_tag() -> None:
    for _, sample in SAMPLES:
        once = fence.quote(sample)
        assert fence.quote(once) == once
        assert fences(once) == (0, 0), sample
        assert posing(once) == [], sample
