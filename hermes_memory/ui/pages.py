"""The memory browser's read pages: each takes the request's parameters and returns the page's body.
Everything shown comes through MemoryAPI (or ``_queries``, built on it); every text through ``_html``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import HermesMemoryError
from hermes_memory.recall.render import replaced_since, superseded_note
from hermes_memory.ui import _queries as q
from hermes_memory.ui import _records as records
from hermes_memory.ui._html import (
    Html,
    join,
    link,
    notice,
    post_form,
    table,
    tag,
    text_input,
    when,
)
from hermes_memory.ui._view import Params, View

if TYPE_CHECKING:
    pass


_TIER_WORDS = {
    "tier1": "curated files (MEMORY.md/USER.md)",
    "tier2": "full-text search (BM25), timeline",
    "tier3": "meaning (vectors)",
    "graph": "knowledge graph (spreading activation)",
}
_WORD = re.compile(r"[\w']+")
# Words too common to say why a hit ranked.
_COMMON = frozenset(
    "the and for you your with that this what who where when was are is did does have has".split()
)


def ask(view: View, params: Params) -> Html:
    query = params.get("q", "").strip()
    form = tag(
        "form",
        [text_input("q", query, label="Ask memory", autofocus=True), tag("button", "Recall", type="submit")],
        method="get",
        action="/",
        class_="search",
    )
    if not query:
        return form + notice("Type a question: the hits recall ranks, why, and the block the model gets.")
    found = q.data(view.api.recall(query, limit=12))
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 2} - _COMMON
    rows = []
    for rank, hit in enumerate(found["hits"], 1):
        shared = sorted(words & {w.lower() for w in _WORD.findall(hit["text"])})
        meta = hit.get("metadata") or {}
        signals = [
            f"score {hit['score']:.3f}",
            f"found by {_TIER_WORDS.get(hit['tier'], hit['tier'])}",
            *([_parts(meta["signals"])] if isinstance(meta.get("signals"), Mapping) else []),
            *([f"shares words: {', '.join(shared)}"] if shared else ["no shared word (meaning or graph)"]),
            *([f"confidence {meta['confidence']}"] if "confidence" in meta else []),
            *([f"replaced {when(since)}"] if (since := replaced_since(meta)) is not None else []),
        ]
        record = _record_link(hit)
        rows.append(
            [
                str(rank),
                tag("span", hit["text"], class_="memory"),
                hit["kind"],
                hit["tier"],
                when(hit.get("timestamp")),
                hit.get("source") or "",
                tag("ul", [tag("li", s) for s in signals]),
                record,
            ]
        )
    try:
        block = q.provider_block(view.api, view.settings, query, tier3=view.tier3)
    except HermesMemoryError as exc:
        block = f"(the provider could not build its block: {exc})"
    return join(
        [
            form,
            tag("h2", f"{len(rows)} hits"),
            table(
                ["#", "memory", "kind", "tier", "date", "source", "why it ranked", ""], rows, class_="hits"
            ),
            tag("h2", "The block the provider hands the model for this message"),
            tag("pre", block or "(empty: nothing new to show, or a greeting)", class_="block"),
        ]
    )


def _parts(signals: Mapping[str, Any]) -> str:
    """Recall's parts of the score (``recall.signals``): ``keywords 0.60 · meaning 0.41 · context +0.10``."""
    numbers = {n: v for n, v in signals.items() if isinstance(v, int | float) and abs(v) >= 0.005}
    shown = [f"{n} {v:+.2f}" if n == "context" else f"{n} {v:.2f}" for n, v in numbers.items()]
    return " · ".join(shown)


def _record_link(hit: Mapping[str, Any]) -> Html:
    kind, _, uuid = str(hit["id"]).partition(":")
    if kind == "fact" and uuid:
        return link("history & edit", "/fact", id=uuid)
    if kind == "entity" and uuid:
        return link("entity", "/entity", name=uuid)
    return Html("")


def seen(view: View, params: Params) -> Html:
    from hermes_memory.hermes import seen as recorder

    config = view.api.config
    intro = (
        []
        if config.ui.record_context
        else [
            notice(
                "Recording is off (the default: records quote your conversations). To keep the last "
                f"{config.ui.record_limit} blocks and tool results, set ui.record_context: true under "
                f"memory: in {config.hermes_home}/nextlevel.yaml (memory: {{ui: {{record_context: true}}}}); "
                "Hermes sessions started after that are recorded.",
                "warn",
            )
        ]
    )
    records = recorder.read(config)
    items = [
        tag(
            "article",
            [
                tag("h3", f"{r.kind} · session {r.session_id} · {when(r.at)}"),
                tag("p", ["served: ", tag("q", r.served)]),
                tag("pre", r.text, class_="block"),
            ],
            class_="seen",
        )
        for r in records
    ]
    if not items:
        items = [notice("Nothing recorded yet.")]
    return join(
        [*intro, tag("p", f"{len(records)} records, newest first (kept: {config.ui.record_limit})."), *items]
    )


def facts(view: View, params: Params) -> Html:
    subject = params.get("subject", "").strip()
    if not subject:
        rows: list[list[Html | str]] = [
            [link(name, "/facts", subject=name), str(n)] for name, n in q.subjects(view.api)
        ]
        return table(["subject", "facts believed"], rows) if rows else notice("No facts yet.")
    groups = q.attributes(view.api, subject)
    out: list[Html | str] = [tag("p", [link("all subjects", "/facts"), f" · {subject}"])]
    for group in groups:
        items = [
            tag(
                "li",
                [
                    tag("span", f["content"], class_="memory"),
                    f" (since {when(_since(f))}) ",
                    link("history & edit", "/fact", id=f["uuid"]),
                ],
                class_="current",
            )
            for f in group.current
        ]
        for f in group.replaced:
            why = (
                f"replaced {when(since)} by: "
                if (since := replaced_since(f)) is not None
                else "archived (marked wrong)"
                if f.get("is_archived")
                else f"ended {when(f.get('valid_to'))}"
            )
            items.append(
                tag(
                    "li",
                    [
                        tag("span", f["content"], class_="memory old"),
                        f" (from {when(_since(f))}) — {why}",
                        tag("span", f.get("replaced_by_text") or "", class_="memory"),
                        " ",
                        link("history", "/fact", id=f["uuid"]),
                    ],
                    class_="replaced",
                )
            )
        out.append(tag("section", [tag("h2", group.predicate.replace("_", " ")), tag("ul", items)]))
    if not groups:
        out.append(notice(f"No facts about {subject}."))
    return join(out)


def _since(fact: Mapping[str, Any]) -> float | None:
    value = fact.get("valid_from") or fact.get("recorded_at") or fact.get("created_at")
    return None if value is None else float(value)


def timeline(view: View, params: Params) -> Html:
    events = q.data(view.api.timeline_query(limit=200))
    names = q.entity_names(view.api, {str(u) for e in events for u in e.get("related_entities") or []})
    rows = [
        [
            when(e.get("timestamp")),
            e.get("event_type") or "",
            tag("span", e.get("title") or "", class_="memory"),
            " — ".join(t for t in (e.get("description"), superseded_note(e)) if t),
            _entity_links(names, [str(u) for u in e.get("related_entities") or []]),
            e.get("session_id") or "",
        ]
        for e in events
    ]
    return (
        table(["when", "type", "event", "details", "about", "session"], rows)
        if rows
        else notice("No events yet.")
    )


def _entity_links(names: Mapping[str, str], uuids: list[str]) -> Html:
    parts: list[Html | str] = []
    for uuid in uuids:
        parts += [", "] if parts else []
        parts.append(link(names[uuid], "/entity", name=uuid))
    return join(parts)


def curated(view: View, params: Params) -> Html:
    out: list[Html | str] = [
        tag(
            "p",
            "Hermes' own curated memory, shown in every session's system prompt "
            "(frozen at session start). Hermes' limits apply.",
        )
    ]
    for store in ("memory", "user"):
        entries = q.data(view.api.curated_entries(store))
        limit = (
            view.api.config.tier1.memory_char_limit
            if store == "memory"
            else view.api.config.tier1.user_char_limit
        )
        used = len("\n§\n".join(entries))
        items = [
            tag(
                "li",
                [
                    tag("span", e, class_="memory"),
                    post_form(
                        view.csrf,
                        "curated_remove",
                        "preview",
                        {"store": store, "old": e},
                        "Remove…",
                        danger=True,
                    ),
                    post_form(
                        view.csrf,
                        "curated_replace",
                        "preview",
                        {"store": store, "old": e},
                        "Replace…",
                        text_input("new", e, label="New text", area=True),
                    ),
                ],
            )
            for e in entries
        ]
        out += [
            tag("h2", f"{'MEMORY.md' if store == 'memory' else 'USER.md'} — {used}/{limit} characters"),
            tag("ul", items) if items else notice("(empty)"),
            post_form(
                view.csrf,
                "curated_add",
                "preview",
                {"store": store},
                "Add…",
                text_input("content", label="New entry", area=True),
            ),
        ]
    return join(out)


def forget(view: View, params: Params) -> Html:
    name = params.get("name", "")
    return join(
        [
            tag(
                "p",
                "Forget a name: every turn, fact, relation, event, vector, graph node and curated entry that "
                "mentions it. You see what would go before anything is deleted.",
            ),
            post_form(
                view.csrf, "forget", "preview", {}, "Preview", text_input("name", name, label="Name or alias")
            ),
        ]
    )


def health(view: View, params: Params) -> Html:
    from hermes_memory.hermes.status import collect, render

    report = collect(view.api.config.hermes_home, check=False)
    stats = view.api.stats()
    runs = view.api.maintenance_runs(limit=10)
    run_rows = [
        [
            str(r.get("job")),
            when(r.get("started_at")),
            f"{r.get('duration_s', 0) or 0:.2f}s",
            "ok" if r.get("ok", r.get("error") is None) else f"failed: {r.get('error')}",
        ]
        for r in (runs["data"] if runs["success"] else [])
    ]
    return join(
        [
            tag("h2", "hermes-memory status"),
            tag("pre", render(report), class_="status"),
            tag("h2", "Store sizes"),
            table(
                ["", ""],
                _flat(stats["data"]) if stats["success"] else [["error", str(stats["error"])]],
                class_="record",
            ),
            tag("h2", "Last maintenance runs"),
            table(["job", "started", "took", "result"], run_rows),
        ]
    )


def _flat(value: Any, prefix: str = "") -> list[list[Html | str]]:
    """A nested dict as rows of (dotted key, value)."""
    if isinstance(value, Mapping):
        return [row for key, item in value.items() for row in _flat(item, f"{prefix}{key} ")]
    shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return [[prefix.strip(), shown]]


PAGES: dict[str, tuple[str, Callable[[View, Params], Html]]] = {
    "/": ("Ask", ask),
    "/seen": ("What the agent saw", seen),
    "/facts": ("Facts", facts),
    "/fact": ("A fact and its history", records.fact),
    "/entities": ("People & things", records.entities),
    "/entity": ("Entity", records.entity),
    "/timeline": ("Timeline", timeline),
    "/curated": ("MEMORY.md / USER.md", curated),
    "/forget": ("Forget", forget),
    "/health": ("Health", health),
}

__all__ = ["PAGES", "Params", "View"]
