"""Pictures: an offline interactive HTML page and a PNG of the requested pixel size."""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from pathlib import Path

import pytest

from hermes_memory.errors import DependencyMissingError, ValidationError
from hermes_memory.graph import KnowledgeGraph, render_html, render_png
from hermes_memory.records import Entity, Relation

EVIL = "</script><script>alert(1)</script>"


def ent(uuid: str, name: str, entity_type: str = "person") -> Entity:
    return Entity(uuid, name, entity_type, ("Al",) if uuid == "a" else (), "likes tea", 1.0, 2.0, 1, {})


def rel(uuid: str, source: str, target: str, relation_type: str = "knows") -> Relation:
    return Relation(uuid, source, target, relation_type, 0.8, None, 1.0, 2.0)


@pytest.fixture
def kg() -> KnowledgeGraph:
    graph = KnowledgeGraph()
    graph.rebuild(
        [
            ent("a", "Alice"),
            ent("b", "Bob"),
            ent("c", "Carol"),
            ent("p", "Projekt Alpha", "project"),
            ent("x", EVIL, "tech"),
        ],
        [
            rel("r1", "a", "b"),
            rel("r2", "b", "c"),
            rel("r3", "a", "p", "works_on"),
            rel("r4", "c", "x", "uses"),
            rel("r5", "a", "a", "related_to"),
        ],
    )
    return graph


def test_html_is_self_contained_and_names_the_entities(kg: KnowledgeGraph, tmp_path: Path) -> None:
    pytest.importorskip("pyvis")
    out = tmp_path / "graph.html"
    info = render_html(kg, out)
    page = out.read_text(encoding="utf-8")
    for name in ("Alice", "Bob", "Carol", "Projekt Alpha", "works_on"):
        assert name in page
    assert "vis.Network" in page and "new vis.DataSet" in page
    assert re.search(r"<script[^>]*\bsrc\s*=", page, re.IGNORECASE) is None
    assert re.search(r"<link[^>]*\bhref\s*=", page, re.IGNORECASE) is None
    assert re.search(r"@import|url\(\s*['\"]?https?:", page, re.IGNORECASE) is None
    assert EVIL not in page  # entity text cannot close the script element
    assert info["entities_shown"] == 5 and info["relations_shown"] == 5
    assert info["path"] == str(out)


def test_html_around_one_entity_and_max_nodes(kg: KnowledgeGraph, tmp_path: Path) -> None:
    pytest.importorskip("pyvis")
    out = tmp_path / "around.html"
    info = render_html(kg, out, around="Projekt Alpha", depth=1)
    page = out.read_text(encoding="utf-8")
    assert "Alice" in page and "Carol" not in page
    assert info["entities_shown"] == 2
    capped = render_html(kg, tmp_path / "capped.html", max_nodes=2)
    assert capped["entities_shown"] == 2
    assert "most connected of 5" in (tmp_path / "capped.html").read_text(encoding="utf-8")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_png_has_the_requested_pixel_size(kg: KnowledgeGraph, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "graph.png"
    info = render_png(kg, out, size=(640, 480))
    assert png_size(out) == (640, 480)
    assert info["entities_shown"] == 5
    render_png(kg, tmp_path / "around.png", size=(300, 200), around="alice", depth=1)
    assert png_size(tmp_path / "around.png") == (300, 200)


def test_png_of_an_empty_graph(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    render_png(KnowledgeGraph(), tmp_path / "empty.png", size=(200, 100))
    assert png_size(tmp_path / "empty.png") == (200, 100)


def test_bad_sizes_are_rejected(kg: KnowledgeGraph, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    for size in ((0, 100), (100,), (100, 99999), (100.5, 200)):
        with pytest.raises(ValidationError):
            render_png(kg, tmp_path / "x.png", size=size)  # type: ignore[arg-type]
    assert not (tmp_path / "x.png").exists()


def test_missing_pyvis_names_the_extra(
    kg: KnowledgeGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyvis" else real_find_spec(name, *a)
    )
    with pytest.raises(DependencyMissingError, match=r"hermes-memory-tiers\[viz\]"):
        render_html(kg, tmp_path / "x.html")


def test_missing_matplotlib_names_the_extra(
    kg: KnowledgeGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("matplotlib.backends.backend_agg", "matplotlib.collections", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(DependencyMissingError, match=r"hermes-memory-tiers\[viz\]"):
        render_png(kg, tmp_path / "x.png")
