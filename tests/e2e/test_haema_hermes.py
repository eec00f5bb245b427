"""HAEMA inside the real agent (hermes-agent 0.19.0, `hermes -z` processes): the core memory is in the
system prompt Hermes sends, a session's end asks for a core update without holding the exit, and the
optional LLM uses the model Hermes is configured with (`llm.use_hermes_model`: no endpoint or key in
nextlevel.yaml) — here the home's scripted fake LLM on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import SETTINGS, Home, home_fixture, require_hermes

from hermes_memory.bench import fake_llm
from hermes_memory.llm.core_memory import SECTIONS, CoreMemory, CoreMemoryStore

require_hermes()

LLM_SETTINGS = (
    SETTINGS
    + """\
memory:
  llm:
    enabled: true
    use_hermes_model: true
"""
)
BULLET = "The user's dog Biscuit is a beagle"
ADD = {"op": "add", "section": "USER", "text": BULLET}
SCRIPT = {
    "rules": [],
    "default": {"status": True},
    "after_tools": {"quote": True},
    "structured": [
        {"match": "You extract durable knowledge", "reply": {"facts": []}},
        {"match": "core memory", "reply": {"should_update": True, "operations": [ADD]}},
    ],
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "haema", LLM_SETTINGS)


def core_path(home: Home) -> Path:
    return home.path / "default" / "memory" / "core_memory.json"


def test_core_memory_reaches_hermes_and_is_updated_with_hermes_own_model(home: Home) -> None:
    home.script_file.write_text(json.dumps(SCRIPT), encoding="utf-8")
    seeded = CoreMemory({s: () for s in SECTIONS} | {"SOUL": ("Hermes answers in a calm tone",)}, 1.0)
    CoreMemoryStore(core_path(home)).save(seeded)

    first = home.hermes("My dog Biscuit is a beagle.")
    assert "## Core memory (nextlevel)" in first.system
    assert "SOUL:\n- Hermes answers in a calm tone" in first.system
    # The session's end asked for the update; the process exited without making it.
    assert core_path(home).with_name("core_memory.json.pending").exists()

    done = home.cli("core", "update", "--candidate", "My dog Biscuit is a beagle.")
    assert done.returncode == 0, done.stderr
    assert "core memory updated" in done.stdout
    asked = [
        r["body"] for r in fake_llm.read_log(home.log)
        if r["method"] == "POST" and "core memory" in r["body"]["messages"][0]["content"]
    ]  # fmt: skip
    assert asked and asked[-1]["model"] == "fake-model"  # config.yaml's model, no key of our own

    second = home.hermes("Hello again.")
    assert f"USER:\n- {BULLET}" in second.system
