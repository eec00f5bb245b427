"""Forgetting one record removes that record's own chunks and audit entries, found by their links (chunk
source ids, the next turn's window, audit target ids) — never other records that merely contain its text
(issue 14, defect 8: forgetting an episode "ok" removed every turn with b-ok-ed, Bro-ok-lyn in it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory.api.memory_api import MemoryAPI

TURNS = [
    ("I booked a table at a place in Brooklyn.", "Sounds lovely."),
    ("ok", "Great, anything else?"),
    ("I was cooking pasta and looked up a recipe.", "Nice choice."),
    ("My brother took the books back to the library.", "Good to know."),
    ("The bookshop in Brooklyn looked closed.", "Too bad."),
]


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def test_forgetting_an_episode_ok_leaves_every_other_turn(tmp_path: Path) -> None:
    with MemoryAPI(
        hermes_home=tmp_path, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    ) as api:
        for i, (user, assistant) in enumerate(TURNS):
            _ok(api.remember_turn(user, assistant, "s1", 1_700_000_000.0 + 60 * i))
        _ok(api.flush())
        _ok(api.embed_pending())
        q = api.tier2.db.query
        target = q("SELECT uuid, id FROM episodes WHERE text = 'ok'")[0]
        after = q("SELECT uuid FROM episodes WHERE id > ? ORDER BY id LIMIT 1", (target["id"],))[0]["uuid"]
        chunks = {r["uuid"]: (r["source_uuid"], r["source_kind"]) for r in q("SELECT * FROM chunks")}
        audit = {r["id"]: r["target_uuid"] for r in q("SELECT id, target_uuid FROM memory_audit_log")}
        own = {u for u, (src, _) in chunks.items() if src == target["uuid"]}
        window = {u for u, (src, kind) in chunks.items() if src == after and kind == "episode_window"}
        assert own and window

        preview = _ok(api.forget(target["uuid"]))
        assert preview["counts"]["tier2"]["episodes"] == 1
        assert preview["counts"]["tier2"]["chunks"] == len(own | window)
        _ok(api.forget(target["uuid"], confirm=True))

        left = {r["uuid"] for r in q("SELECT uuid FROM chunks")}
        assert left == set(chunks) - own - window  # every other turn's chunks stay
        redacted = {r["id"] for r in q("SELECT id FROM memory_audit_log WHERE diff LIKE '%\"redacted\"%'")}
        assert {audit[i] for i in redacted} <= {target["uuid"], *own, *window}
        texts = {r["text"] for r in q("SELECT text FROM episodes")}
        assert "ok" not in texts and len(texts) == 2 * len(TURNS) - 1
        for probe in (
            "booked a table in Brooklyn",
            "cooking pasta recipe",
            "books library",
            "bookshop closed",
        ):
            hits = _ok(api.semantic_search(probe, limit=3))
            assert hits, probe  # semantic search still finds those turns
        report = _ok(api.doctor())
        assert report["clean"], report["findings"]
