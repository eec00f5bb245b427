"""The memory browser's record pages: one fact (its history, where it came from, its correction
forms), the list of entities (and the merge form), one entity (aliases, relations, mentions, timeline,
the graph around it)."""

from __future__ import annotations

import json
from typing import Any

from hermes_memory.ui import _queries as q
from hermes_memory.ui._html import (
    Html,
    esc,
    href,
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


def fact(view: View, params: Params) -> Html:
    origin = q.data(view.api.why(params.get("id", "")))
    f = origin["fact"]
    believed = f.get("status") in ("active", None) and not f.get("superseded_at") and not f.get("is_archived")
    rows: list[list[Html | str]] = [
        ["statement", tag("span", f["content"], class_="memory")],
        ["status", str(f.get("status"))],
        [
            "subject / attribute / value",
            f"{f.get('subject') or '-'} / {f.get('predicate') or '-'} / {f.get('object') or '-'}",
        ],
        ["true from", when(f.get("valid_from"))],
        ["true until", when(f.get("valid_to"))],
        ["learned", when(origin.get("learned_at"))],
        ["extractor", str(origin.get("extractor"))],
        ["confidence", str(origin.get("confidence"))],
        ["source", f"{origin['source'].get('type')} {origin['source'].get('id') or ''}"],
    ]
    by = origin.get("superseded_by")
    if by:
        rows.append(["replaced by", link(by.get("content") or by["uuid"], "/fact", id=by["uuid"])])
    for older in origin.get("supersedes") or []:
        rows.append(["replaced", link(older.get("content") or older["uuid"], "/fact", id=older["uuid"])])
    out: list[Html | str] = [table(["", ""], rows, class_="record")]
    if f.get("subject"):
        out.append(tag("p", link(f"every fact about {f['subject']}", "/facts", subject=f["subject"])))
    episodes = [
        tag(
            "li",
            [
                f"{e.get('speaker') or e.get('role') or ''} in session {e.get('session_id') or '-'} "
                f"({when(e.get('timestamp'))}): ",
                tag("q", e.get("text") or ""),
            ],
        )
        if not e.get("missing")
        else tag("li", f"{e['uuid']} (forgotten)")
        for e in origin.get("source_episodes") or []
    ]
    out += [tag("h2", "Learned from"), tag("ul", episodes) if episodes else notice("No source turn.")]
    if believed:
        out += [
            tag("h2", "Correct it"),
            tag("p", "A correction is a new fact that replaces this one (this one stays in the history)."),
            post_form(
                view.csrf,
                "correct",
                "preview",
                {"id": f["uuid"]},
                "Preview the correction",
                text_input("text", f["content"], label="Corrected statement", area=True),
            ),
            tag("h2", "Mark it wrong"),
            post_form(view.csrf, "wrong", "preview", {"id": f["uuid"]}, "Mark wrong…", danger=True),
        ]
    out += [
        tag("h2", "Forget it"),
        post_form(view.csrf, "forget_id", "preview", {"id": f"fact:{f['uuid']}"}, "Forget…", danger=True),
    ]
    audit = [
        [
            when(a.get("timestamp")),
            str(a.get("action")),
            str(a.get("actor")),
            json.dumps(a.get("diff"), ensure_ascii=False) if a.get("diff") else "",
        ]
        for a in origin.get("audit") or []
    ]
    out += [tag("h2", "Audit trail"), table(["when", "action", "by", "change"], audit)]
    return join(out)


def entities(view: View, params: Params) -> Html:
    name = params.get("q", "").strip()
    found = q.data(view.api.entity_query(name or None, limit=200))
    form = tag(
        "form",
        [text_input("q", name, label="Find"), tag("button", "Find", type="submit")],
        method="get",
        action="/entities",
        class_="search",
    )
    rows = [
        [
            link(e["name"], "/entity", name=e["uuid"]),
            e["entity_type"],
            ", ".join(e.get("aliases") or []),
            str(e.get("occurrence_count", "")),
            when(e.get("last_seen")),
        ]
        for e in found
    ]
    merge = [
        tag("h2", "Merge two entities"),
        tag(
            "p",
            "One thing under two names: the first is folded into "
            "the second (its relations, facts and timeline follow; its name becomes an alias).",
        ),
        post_form(
            view.csrf,
            "merge",
            "preview",
            {},
            "Preview the merge",
            text_input("merged", label="Merge") + text_input("kept", label="into"),
        ),
    ]
    return join([form, table(["name", "type", "aliases", "mentions", "last seen"], rows), *merge])


def entity(view: View, params: Params) -> Html:
    found = q.entity(view.api, params.get("name", ""))
    name = found["name"]
    picture = href("/graph.png", name=found["uuid"])
    relations = [[a, rel.replace("_", " "), b] for a, rel, b in q.relation_rows(view.api, found)]
    about = [
        tag("li", [tag("span", f["content"], class_="memory"), " ", link("history", "/fact", id=f["uuid"])])
        for f in _mentions(view, name)
    ]
    events = [
        [
            when(e.get("timestamp")),
            tag("span", e.get("title") or "", class_="memory"),
            e.get("description") or "",
        ]
        for e in q.data(view.api.timeline(name, limit=50))
    ]
    return join(
        [
            table(
                ["", ""],
                [
                    ["name", name],
                    ["type", found["entity_type"]],
                    ["aliases", ", ".join(found.get("aliases") or []) or "-"],
                    ["description", found.get("description") or "-"],
                    [
                        "first / last seen",
                        f"{when(found.get('first_seen'))} / {when(found.get('last_seen'))}",
                    ],
                    ["mentions", str(found.get("occurrence_count"))],
                ],
                class_="record",
            ),
            tag("h2", "Relations"),
            table(["from", "relation", "to"], relations),
            tag("h2", "Facts about it or naming it"),
            tag("ul", about) if about else notice("None."),
            tag("h2", "Timeline"),
            table(["when", "event", "details"], events),
            tag("h2", "Graph around it"),
            Html(f'<img class="graph" alt="graph around the entity" src="{esc(picture)}">'),
            tag("h2", "Forget"),
            tag("p", link(f"forget {name} (preview first)", "/forget", name=name)),
        ]
    )


def _mentions(view: View, name: str) -> list[dict[str, Any]]:
    """Facts about the entity (its history), then believed facts that name it (full text)."""
    found = {f["uuid"]: f for f in q.data(view.api.fact_history(name))}
    for f in q.data(view.api.fact_query(name, limit=30, min_confidence=0.0)):
        if name.lower() in str(f["content"]).lower():
            found.setdefault(f["uuid"], f)
    return list(found.values())


__all__ = ["entities", "entity", "fact"]
