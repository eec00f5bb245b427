"""Skills declare the memory tiers they read (seed §9.4): the shipped memory-recall skill's frontmatter names
its tiers, and `nextlevel_search(query, skill=...)` reads only the tiers that skill's SKILL.md declares,
3 results each (the seed's skill_recall_context)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import api_of

from hermes_memory.errors import ValidationError
from hermes_memory.hermes import install, skill_manifest
from hermes_memory.hermes.schemas import SEARCH_SCHEMA, TIER_NAMES

TRACKER = """---
name: project-tracker
description: Track the user's projects.
memory_tiers: [tier2]
memory_queries: [current projects, open tasks]
---
# Project tracker
"""


def test_the_shipped_skill_declares_the_tiers_it_reads() -> None:
    text = install.skill_text()
    manifest = skill_manifest.parse("memory-recall", text)
    assert manifest.memory_tiers == ("tier1", "tier2", "tier3", "graph")
    assert set(manifest.memory_tiers) <= set(TIER_NAMES) and manifest.memory_queries
    hermes = pytest.importorskip("agent.skill_utils")  # Hermes still reads the skill as before
    front, _ = hermes.parse_frontmatter(text)
    assert front["name"] == "memory-recall" and front["memory_tiers"] == list(manifest.memory_tiers)
    assert front["metadata"]["hermes"]["requires_tools"] == ["nextlevel_search"]


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValidationError, match="declares no memory_tiers"):
        skill_manifest.parse("x", "---\nname: x\n---\nbody")
    with pytest.raises(ValidationError, match="unknown memory_tiers"):
        skill_manifest.parse("x", "---\nmemory_tiers: [tier9]\n---\n")
    with pytest.raises(ValidationError, match="no frontmatter"):
        skill_manifest.parse("x", "# no frontmatter")


def test_recall_args_follow_the_declaration() -> None:
    manifest = skill_manifest.parse("project-tracker", TRACKER)
    assert skill_manifest.recall_args(manifest, {"query": "q", "skill": "project-tracker"}) == {
        "query": "q", "tiers": ["tier2"], "limit_per_tier": 3,
    }  # fmt: skip
    assert skill_manifest.recall_args(manifest, {"query": "q", "limit": 5})["tiers"] == ["tier2"]
    with pytest.raises(ValidationError, match="may not read"):
        skill_manifest.recall_args(manifest, {"query": "q", "tiers": ["tier3"]})


def test_a_skills_search_reads_only_its_declared_tiers(make: Any, home: Path) -> None:
    assert "skill" in SEARCH_SCHEMA["parameters"]["properties"]
    skill = home / "skills" / "work" / "project-tracker" / "SKILL.md"  # a category folder, as Hermes allows
    skill.parent.mkdir(parents=True)
    skill.write_text(TRACKER, encoding="utf-8")
    provider = make("s1")
    for n in range(5):
        provider.sync_turn(
            f"Project Atlas milestone {n} is the database migration.", "Noted.", session_id="s0"
        )
    assert api_of(home).flush(timeout=30)["data"]["drained"]
    plain = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "Project Atlas milestone"}))
    assert {r["tier"] for r in plain["results"]} - {"tier2"}  # without a skill: other tiers answer too
    found = json.loads(
        provider.handle_tool_call(
            "nextlevel_search", {"query": "Project Atlas milestone", "skill": "project-tracker"}
        )
    )
    assert found["results"] and {r["tier"] for r in found["results"]} == {"tier2"}
    assert len(found["results"]) <= skill_manifest.SKILL_LIMIT_PER_TIER
    refused = json.loads(
        provider.handle_tool_call(
            "nextlevel_search", {"query": "x", "skill": "project-tracker", "tiers": ["graph"]}
        )
    )
    assert refused["error_type"] == "invalid_input" and "may not read" in refused["error"]
    missing = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "x", "skill": "nope"}))
    assert missing["error_type"] == "not_found"
    escape = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "x", "skill": "../../etc"}))
    assert escape["error_type"] == "invalid_input"
