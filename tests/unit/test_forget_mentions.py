"""Forget by mention (issue 14, defect 10): the preview lists the other names an entity is mentioned under
— the first name, title + surname, possessives, an alias the text gives ("ZQ (that's Zanzibar Quill)") and
the entities they name — and ``include_related`` forgets them too; a bare surname ("quill pen") is not one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import _ops_commands
from hermes_memory.cli import main as cli_main
from hermes_memory.hermes.tools import ToolContext, call_tool

TURNS = [
    "I met Zanzibar Quill at the harbour yesterday.",
    "Zanzibar's sister lives in Oslo and paints.",
    "ZQ (that's Zanzibar Quill) called me about the boat.",
    "Mr. Quill said the boat is ready on Friday.",
    "ZQ booked the ferry for the whole family.",
    "Zanzibar loves sailing on weekends.",
    "The quill pen is on the desk.",
    "I booked a table in Brooklyn.",
]
SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _populate(home: Path) -> None:
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        for i, text in enumerate(TURNS):
            _ok(api.remember_turn(text, "Noted.", "s1", 1_700_000_000.0 + 60 * i, user_name="Caroline"))
        _ok(api.flush())
        _ok(api.entity_ensure("Zanzibar Quill", "person"))
        _ok(api.entity_ensure("ZQ", "person"))
        _ok(api.entity_ensure("Zanzibar's sister", "person"))
        _ok(api.fact_store("Zanzibar's sister paints harbours"))
        _ok(api.fact_store("Mr. Quill owns a blue boat"))
        _ok(api.embed_pending())


def _everything(api: MemoryAPI) -> str:
    dumps = [
        api.fact_query(None, limit=100, min_confidence=0.0), api.entity_query(None, limit=100),
        api.get_latest(100), api.timeline_query(limit=100), api.recall("Zanzibar Quill ZQ sister boat"),
        api.semantic_search("Zanzibar", limit=50),
    ]  # fmt: skip
    # words only: no uuid or vector encoding can spell one by chance
    return " ".join(re.findall(r"[a-z']+\.?", json.dumps(dumps, ensure_ascii=False).lower()))


def test_the_preview_lists_other_names_and_include_related_forgets_them(tmp_path: Path) -> None:
    _populate(tmp_path)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        preview = _ok(api.forget_entity("Zanzibar Quill"))
        related = {r["name"]: r for r in preview["related"]}
        assert {"Zanzibar", "Mr. Quill", "ZQ"} <= set(related), preview["related"]
        assert related["Zanzibar"]["mentions"] >= 2 and "Zanzibar's sister" in related["Zanzibar"]["entities"]
        assert related["ZQ"]["entities"] == ["ZQ"] and related["ZQ"]["mentions"] >= 1
        assert related["Mr. Quill"]["mentions"] >= 2  # the turn and the fact
        assert not any(r["included"] for r in preview["related"])
        assert "Quill" not in related  # a bare surname is not offered

        only_zq = _ok(api.forget_entity("Zanzibar Quill", include_related=["zq"]))
        assert [r["name"] for r in only_zq["related"] if r["included"]] == ["ZQ"]
        assert only_zq["counts"]["tier2"]["episodes"] > preview["counts"]["tier2"]["episodes"]

        bad = api.forget_entity("Zanzibar Quill", include_related=["Nobody"])
        assert bad["meta"]["error_type"] == "invalid_input" and "ZQ" in bad["error"]

        _ok(api.forget_entity("Zanzibar Quill", confirm=True, include_related=True, confirm_large=True))
        text = _everything(api)
        for gone in ("zanzibar", "mr. quill", "zq"):
            assert not re.search(rf"(?<![\w.]){re.escape(gone)}(?!\w)", text), gone
        assert "quill pen" in text and "brooklyn" in text  # unrelated memory stays
        assert _ok(api.doctor())["clean"]


def test_without_include_related_the_other_names_stay(tmp_path: Path) -> None:
    _populate(tmp_path)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        _ok(api.forget_entity("Zanzibar Quill", confirm=True))
        text = _everything(api)
        assert "zanzibar quill" not in text
        assert "zanzibar's sister" in text and "mr. quill" in text  # the caller did not include them


def test_the_cli_shows_related_names_and_takes_include_related(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _populate(tmp_path)
    monkeypatch.setattr(_ops_commands, "open_api", lambda args: MemoryAPI(hermes_home=tmp_path, **SETTINGS))
    base = ["--hermes-home", str(tmp_path)]
    assert cli_main(["forget", "--entity", "Zanzibar Quill", *base]) == 0
    out = capsys.readouterr().out
    assert "related (alias_in_text, not included): ZQ" in out and "--include-related" in out
    assert cli_main(["forget", "--entity", "Zanzibar Quill", "--include-related", "ZQ", "--yes", *base]) == 0
    out = capsys.readouterr().out
    assert "related (alias_in_text, included): ZQ" in out


def test_the_memory_tool_takes_include_related(tmp_path: Path) -> None:
    _populate(tmp_path)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        ctx = ToolContext(api=api, session_id="sess-1", writable=True, after_write=lambda: None)

        def memory(**args: Any) -> dict[str, Any]:
            answer: dict[str, Any] = json.loads(
                call_tool(ctx, "nextlevel_memory", {"action": "forget", **args})
            )
            return answer

        preview = memory(name="Zanzibar Quill")["result"]
        assert {"Zanzibar", "Mr. Quill", "ZQ"} <= {r["name"] for r in preview["related"]}
        done = memory(name="Zanzibar Quill", confirm=True, include_related=True, confirm_large=True)["result"]
        assert done["confirmed"] and all(r["included"] for r in done["related"])
        assert "zanzibar" not in _everything(api)
