"""Pictures of the knowledge graph: a self-contained interactive HTML page and a static PNG.

HTML: vis-network (the library pyvis wraps) inlined from the installed pyvis package into our own small
page. pyvis's own template links Bootstrap from cdn.jsdelivr.net whatever ``cdn_resources`` says, so a
page it writes would not be fully offline; ours has no external ``src``/``href`` at all. Hover shows an
entity's details (built with ``textContent``, so names cannot inject HTML); wheel zooms, drag pans.

PNG: matplotlib's object API with the Agg canvas (no pyplot, no global backend switch).
Both need the ``viz`` extra; a missing package raises DependencyMissingError naming it.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

from hermes_memory.errors import DependencyMissingError, ValidationError
from hermes_memory.graph.persistence import write_atomically

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph

_EXTRA_HINT = "pip install 'hermes-memory-tiers[viz]'"
DEFAULT_HTML_MAX_NODES = 1000
DEFAULT_PNG_MAX_NODES = 300
_PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Scene:
    """Plain copies of what will be drawn, taken under the graph lock so drawing needs no lock."""

    nodes: list[tuple[str, dict[str, Any], int]]  # uuid, attributes, number of relations
    edges: list[tuple[str, str, str, dict[str, Any]]]  # from, to, relation uuid, attributes
    colours: dict[str, str]
    heading: str
    drawn: dict[str, Any]


def render_html(
    kg: KnowledgeGraph,
    path: Path | str,
    *,
    around: str | None = None,
    depth: int = 1,
    max_nodes: int = DEFAULT_HTML_MAX_NODES,
    title: str | None = None,
) -> dict[str, Any]:
    """Write an offline, interactive HTML page of the graph (or of the entities ``depth`` hops
    ``around`` one). Returns what was drawn. Raises DependencyMissingError (pyvis), ValidationError,
    EntityNotFoundError, AmbiguousEntityError, StorageError.
    """
    script, style = _vis_assets()
    scene = _scene(kg, around, depth, max_nodes)
    nodes = [
        {
            "id": uuid,
            "label": attrs["name"],
            "tip": _node_tip(uuid, attrs, degree),
            "color": scene.colours[attrs["entity_type"]],
            "value": 1 + degree,
        }
        for uuid, attrs, degree in scene.nodes
    ]
    edges = [
        {
            "id": key,
            "from": source,
            "to": target,
            "label": data["relation_type"],
            "tip": _edge_tip(key, data),
            "width": 1 + 4 * float(data["strength"]),
            "arrows": "" if data["bidirectional"] else "to",
        }
        for source, target, key, data in scene.edges
    ]
    legend = "".join(
        f'<span class="chip" style="background:{c}"></span>{html.escape(t)} '
        for t, c in sorted(scene.colours.items())
    )
    page = _PAGE.format(
        title=html.escape(title or scene.heading),
        style=style,
        script=script,
        legend=legend,
        data=_json_for_script({"nodes": nodes, "edges": edges}),
    )
    target = Path(path)
    write_atomically(target, lambda handle: handle.write(page.encode("utf-8")))
    return {"path": str(target), **scene.drawn}


# Relations drawn with their type written on them (more would cover the picture).
EDGE_LABELS = 40


def render_png(
    kg: KnowledgeGraph,
    path: Path | str,
    size: tuple[int, int] = (1200, 900),
    *,
    around: str | None = None,
    depth: int = 1,
    max_nodes: int = DEFAULT_PNG_MAX_NODES,
    labels: int = 60,
) -> dict[str, Any]:
    """Write a static PNG of exactly ``size`` pixels (width, height). Returns what was drawn.

    Raises DependencyMissingError (matplotlib; scipy when drawing 500+ entities), ValidationError,
    EntityNotFoundError, AmbiguousEntityError, StorageError.
    """
    width, height = _check_size(size)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise DependencyMissingError(f"render_png needs matplotlib: {_EXTRA_HINT}") from exc
    scene = _scene(kg, around, depth, max_nodes)
    links = [(s, t, d) for s, t, _, d in scene.edges if s != t]
    layout_graph: Any = nx.Graph()
    layout_graph.add_nodes_from(uuid for uuid, _, _ in scene.nodes)
    layout_graph.add_edges_from((s, t) for s, t, _ in links)
    try:
        # k spreads the nodes over the picture (the default packs a dense cluster into one corner
        # beside the far-flung unlinked ones)
        spread = 2.0 / math.sqrt(max(1, len(scene.nodes)))
        positions = nx.spring_layout(layout_graph, seed=42, k=spread, iterations=100) if scene.nodes else {}
    except ImportError as exc:  # NetworkX lays out 500+ nodes with scipy
        raise DependencyMissingError(
            f"drawing {len(scene.nodes)} entities needs scipy: {_EXTRA_HINT}"
        ) from exc
    dpi = 100
    figure = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(figure)  # attach the Agg canvas: no pyplot, no global backend
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    axes.set_axis_off()
    axes.add_collection(
        LineCollection(
            [(positions[s], positions[t]) for s, t, _ in links],
            linewidths=[0.5 + 2.0 * float(d["strength"]) for _, _, d in links],
            colors="#9a9a9a",
            alpha=0.6,
            zorder=1,
        )
    )
    for entity_type, colour in sorted(scene.colours.items()):
        members = [
            (uuid, degree) for uuid, attrs, degree in scene.nodes if attrs["entity_type"] == entity_type
        ]
        axes.scatter(
            [positions[u][0] for u, _ in members],
            [positions[u][1] for u, _ in members],
            s=[40 + 25 * math.sqrt(degree) for _, degree in members],
            c=colour,
            label=entity_type,
            zorder=2,
            edgecolors="white",
            linewidths=0.5,
        )
    with warnings.catch_warnings():
        # a name in a script the default font lacks draws as boxes; that is not worth failing a picture
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from", category=UserWarning)
        for uuid, attrs, _ in sorted(scene.nodes, key=lambda n: (-n[2], n[0]))[: max(0, labels)]:
            axes.annotate(
                attrs["name"], positions[uuid], fontsize=11, zorder=3, ha="center", va="bottom",
                xytext=(0, 6), textcoords="offset points",
            )  # fmt: skip
        # Each relation says what it is, at its middle, while there are few enough to read.
        labelled = links if len(links) <= EDGE_LABELS else []
        for one, other, data in labelled:
            middle = (positions[one] + positions[other]) / 2
            axes.annotate(
                str(data.get("relation_type", "")).replace("_", " "), middle, fontsize=9, color="#555555",
                ha="center", va="center", zorder=3,
            )  # fmt: skip
        if scene.colours:
            axes.legend(loc="lower left", fontsize=10, frameon=False)
        axes.margins(0.08)
        target = Path(path)
        write_atomically(target, lambda handle: figure.savefig(handle, format="png", dpi=dpi))
    return {"path": str(target), **scene.drawn, "relations_labelled": len(labelled)}


def _scene(kg: KnowledgeGraph, around: str | None, depth: int, max_nodes: int) -> _Scene:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValidationError(f"max_nodes must be a positive integer, got {max_nodes!r}")
    with kg.locked():
        graph = kg.around(around, depth) if around is not None else kg
        everything = list(graph.nx_graph.nodes)
        degree = {uuid: len(graph.links(uuid)) for uuid in everything}
        shown = everything
        if len(everything) > max_nodes:
            shown = sorted(everything, key=lambda u: (-degree[u], u))[:max_nodes]
        shown.sort()
        keep = set(shown)
        nodes = [(uuid, graph.entity_dict(uuid), degree[uuid]) for uuid in shown]
        edges = sorted(
            (
                (source, target, key, dict(data))
                for source, target, key, data in graph.nx_graph.edges(keys=True, data=True)
                if source in keep and target in keep
            ),
            key=lambda e: e[2],
        )
        drawn = {
            "entities_total": kg.entity_count,
            "relations_total": kg.relation_count,
            "entities_shown": len(shown),
            "relations_shown": len(edges),
        }
    types = sorted({str(attrs["entity_type"]) for _, attrs, _ in nodes})
    heading = f"hermes-memory knowledge graph: {len(shown)} entities, {len(edges)} relations"
    if around is not None:
        heading += f" around {around}"
    if len(shown) < len(everything):
        heading += f" (the {len(shown)} most connected of {len(everything)})"
    return _Scene(
        nodes=nodes,
        edges=edges,
        colours={t: _PALETTE[i % len(_PALETTE)] for i, t in enumerate(types)},
        heading=heading,
        drawn=drawn,
    )


def _vis_assets() -> tuple[str, str]:
    # find pyvis's files without importing it (its __init__ pulls in IPython and jinja2)
    spec = importlib.util.find_spec("pyvis")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyMissingError(f"render_html needs pyvis (for vis-network): {_EXTRA_HINT}")
    lib = Path(next(iter(spec.submodule_search_locations))) / "templates" / "lib"
    versions = sorted(
        lib.glob("vis-*/vis-network.min.js"),
        key=lambda p: tuple(int(x) for x in p.parent.name[4:].split(".") if x.isdigit()),
    )
    if not versions:
        raise DependencyMissingError(f"pyvis ships no vis-network files in {lib}; reinstall: {_EXTRA_HINT}")
    newest = versions[-1].parent
    try:
        script = (newest / "vis-network.min.js").read_text(encoding="utf-8")
        style = (newest / "vis-network.css").read_text(encoding="utf-8")
    except OSError as exc:
        raise DependencyMissingError(f"cannot read pyvis's vis-network files ({exc}): {_EXTRA_HINT}") from exc
    # inside <script>/<style> only a closing tag can end the element early
    return script.replace("</script", "<\\/script"), style.replace("</style", "<\\/style")


def _node_tip(uuid: str, attrs: dict[str, Any], degree: int) -> str:
    lines = [f"{attrs['name']} ({attrs['entity_type']})"]
    if attrs.get("aliases"):
        lines.append("aliases: " + ", ".join(attrs["aliases"]))
    if attrs.get("description"):
        lines.append(str(attrs["description"]))
    lines.append(f"seen {attrs['occurrence_count']}x, relations: {degree}")
    lines.append(f"uuid: {uuid}")
    return "\n".join(lines)


def _edge_tip(key: str, data: dict[str, Any]) -> str:
    lines = [f"{data['relation_type']} (strength {float(data['strength']):.2f})"]
    if data.get("evidence"):
        lines.append(f"evidence: {data['evidence']}")
    lines.append(f"uuid: {key}")
    return "\n".join(lines)


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    if (
        len(size) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in size)
        or not all(100 <= v <= 8000 for v in size)
    ):
        raise ValidationError(f"size must be (width, height) in pixels, each 100..8000, got {size!r}")
    return size[0], size[1]


def _json_for_script(data: Any) -> str:
    # escaping <, > and & keeps any entity text from closing the <script> element or forming a comment
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{style}</style>
<style>
html, body {{ margin: 0; height: 100%; font-family: system-ui, sans-serif; }}
header {{ padding: 6px 10px; font-size: 14px; border-bottom: 1px solid #ddd; }}
.chip {{ display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin: 0 3px 0 8px; }}
#graph {{ position: absolute; top: 58px; bottom: 0; left: 0; right: 0; }}
.tip {{ white-space: pre-line; max-width: 420px; }}
</style>
</head>
<body>
<header><strong>{title}</strong><br>
<small>{legend} &middot; wheel: zoom, drag: pan, hover: details</small></header>
<div id="graph"></div>
<script>{script}</script>
<script>
(function () {{
  var data = {data};
  function tip(text) {{
    var d = document.createElement("div"); d.className = "tip"; d.textContent = text; return d;
  }}
  data.nodes.forEach(function (n) {{ n.title = tip(n.tip); delete n.tip; }});
  data.edges.forEach(function (e) {{ e.title = tip(e.tip); delete e.tip; }});
  var network = new vis.Network(document.getElementById("graph"),
    {{ nodes: new vis.DataSet(data.nodes), edges: new vis.DataSet(data.edges) }},
    {{ nodes: {{ shape: "dot", scaling: {{ min: 8, max: 40 }}, font: {{ size: 14 }} }},
      edges: {{ font: {{ size: 10, align: "middle" }}, color: {{ color: "#999", highlight: "#333" }},
               smooth: false }},
      interaction: {{ hover: true, tooltipDelay: 120, navigationButtons: false }},
      physics: {{ stabilization: {{ iterations: 300 }}, barnesHut: {{ gravitationalConstant: -6000 }} }} }});
  network.once("stabilizationIterationsDone", function () {{ network.setOptions({{ physics: false }}); }});
}})();
</script>
</body>
</html>
"""

__all__ = ["DEFAULT_HTML_MAX_NODES", "DEFAULT_PNG_MAX_NODES", "render_html", "render_png"]
