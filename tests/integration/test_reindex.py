"""Tier 2 is Tier 3's source of truth: `hermes-memory reindex` switches backends, or rebuilds a lost
vector store, without losing memory. Runs the real CLI entry point with the hashing embedder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.tier3.backend import BACKENDS

FACTS = [
    "The garage door code is 2580",
    "Grandma's birthday is on the ninth of May",
    "The project deadline moved to the end of the quarter",
    "Oat milk is the only milk the kids drink",
    "The sailing club meets on Thursday evenings",
]
NOTES = [("Call the plumber about the dripping kitchen tap", "s1"), ("Book the train to Hamburg", "s2")]
QUERIES = ["garage door code", "grandma birthday May", "sailing club Thursday", "kitchen tap plumber"]


def _write_config(tmp_path: Path, backend: str) -> Path:
    path = tmp_path / f"config-{backend}.yaml"
    path.write_text(f"tier3:\n  embedding_model: hashing\n  backend: {backend}\n  engine_min_vectors: 0\n")
    return path


def _fill(home: Path, config: Path) -> dict[str, str]:
    """Store facts, notes and an entity through the API and embed them; return the top hits per query."""
    with MemoryAPI(hermes_home=home, config_path=config) as api:
        for fact in FACTS:
            assert api.fact_store(fact)["success"]
        for text, session in NOTES:
            assert api.semantic_index(text, session_id=session, wait=False)["success"]
        assert api.entity_ensure("Hamburg", "place")["success"]
        assert api.embed_pending()["data"]["remaining"] == 0
        return _top_hits(api)


def _top_hits(api: MemoryAPI) -> dict[str, str]:
    """The best hit for each query and for each stored text (lower ranks may tie and reorder)."""
    out: dict[str, str] = {}
    for query in [*QUERIES, *FACTS, *(text for text, _ in NOTES)]:
        env = api.semantic_search(query, limit=1, min_score=0.0)
        assert env["success"], env["error"]
        out[query] = env["data"][0]["text"] if env["data"] else ""
    return out


def _cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("target", [name for name in BACKENDS if name != "memory"])
def test_reindex_switches_backend_without_losing_memory(
    tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    source_config = _write_config(tmp_path, "memory")
    expected = _fill(home, source_config)
    assert expected[QUERIES[0]] == FACTS[0]
    assert all(expected[text] == text for text in FACTS)

    code, out, err = _cli(
        "reindex", "--backend", target, "--home", str(home), "--config", str(source_config), capsys=capsys
    )
    total = len(FACTS) + len(NOTES) + 1  # chunks + the entity
    assert code == 0, err
    assert f"reindexed {total} vectors into {target} (0 embedded, the rest reused from Tier 2)" in out
    assert f"set tier3.backend: {target}" in out  # the config still names the old backend
    assert f"{total}/{total}" in err  # the progress bar reached the end

    target_config = _write_config(tmp_path, target)
    settings: dict[str, Any] = {"hermes_home": home, "config_path": target_config}
    with MemoryAPI(**settings) as api:
        assert _top_hits(api) == expected
        stats = api.stats()["data"]["tier3"]
        assert (stats["backend"], stats["memory_chunks"], stats["embed_pending"]) == (target, total - 1, 0)
        session = api.semantic_search("train", min_score=0.0, filters={"session_id": "s2"})
        assert [h["text"] for h in session["data"]] == ["Book the train to Hamburg"]

    code, out, err = _cli(
        "search", "garage door", "--home", str(home), "--config", str(target_config), capsys=capsys
    )
    assert code == 0, err
    assert FACTS[0] in out


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_deleted_vector_store_rebuilds_from_tier2_and_reindex_too(
    tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    config = _write_config(tmp_path, backend)
    expected = _fill(home, config)
    with MemoryAPI(hermes_home=home, config_path=config) as api:
        vectors = api.config.tier3_path / backend
    assert vectors.exists()
    shutil.rmtree(vectors)

    # The engine's files are gone, the vectors are not (Tier 2): the engine rebuilds when it opens.
    with MemoryAPI(hermes_home=home, config_path=config) as api:
        assert _top_hits(api) == expected
        assert api.embed_pending()["data"]["embedded"] == 0

    code, out, err = _cli("reindex", "--home", str(home), "--config", str(config), capsys=capsys)
    assert code == 0, err
    assert f"into {backend}" in out and "set tier3.backend" not in out
    with MemoryAPI(hermes_home=home, config_path=config) as api:
        assert _top_hits(api) == expected
        assert api.stats()["data"]["tier3"]["memory_chunks"] == len(FACTS) + len(NOTES)

    with MemoryAPI(hermes_home=home, config_path=config) as api:
        assert _top_hits(api) == expected


def test_reindex_with_an_unknown_backend_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["reindex", "--backend", "nosuch", "--home", str(tmp_path)])
    assert exc.value.code == 2
    assert "nosuch" in capsys.readouterr().err
