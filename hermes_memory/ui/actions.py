"""The memory browser's writes. Each is two POSTs: ``preview`` shows what would change (and changes
nothing), ``confirm`` does it. They go through MemoryAPI (or ``_queries``, built on it), so a write the
store refuses — a threat in the text, Hermes' curated limits, a large forget, another process holding
the vector store or the write lock — comes back as the store's message, shown on the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_memory.errors import ValidationError
from hermes_memory.ui import _queries as q
from hermes_memory.ui._html import Html, join, link, notice, post_form, table, tag
from hermes_memory.ui._view import View

Form = Mapping[str, list[str]]


def one(form: Form, name: str) -> str:
    values = form.get(name) or [""]
    return values[0]


def _keep(form: Form, *names: str) -> dict[str, str]:
    return {name: one(form, name) for name in names}


def _confirm(
    view: View,
    op: str,
    form: Form,
    names: tuple[str, ...],
    what: Html,
    button: str,
    extra: Html | None = None,
) -> Html:
    return join(
        [
            what,
            post_form(view.csrf, op, "confirm", _keep(form, *names), button, extra, danger=True),
            tag("p", link("cancel", "/")),
        ]
    )


def correct(view: View, form: Form, confirmed: bool) -> Html:
    uuid, text = one(form, "id"), one(form, "text").strip()
    if not text:
        raise ValidationError("the corrected statement is empty")
    if not confirmed:
        old = q.data(view.api.fact_get(uuid))
        what = table(
            ["", ""],
            [
                ["now believed", tag("span", old["content"], class_="memory")],
                ["will be replaced by", tag("span", text, class_="memory")],
            ],
            class_="record",
        )
        return _confirm(view, "correct", form, ("id", "text"), what, "Store the correction")
    done = q.correct_fact(view.api, uuid, text)
    return join(
        [
            notice("Stored. The old statement is closed and kept in the history.", "ok"),
            tag(
                "p",
                [
                    link("the new fact", "/fact", id=done["fact"]["uuid"]),
                    " · ",
                    link("the old one", "/fact", id=uuid),
                ],
            ),
        ]
    )


def wrong(view: View, form: Form, confirmed: bool) -> Html:
    uuid = one(form, "id")
    if not confirmed:
        old = q.data(view.api.fact_get(uuid))
        what = join(
            [
                tag("p", ["Mark wrong: ", tag("span", old["content"], class_="memory")]),
                tag("p", "It is archived: recall stops using it; its history and audit trail stay."),
            ]
        )
        return _confirm(view, "wrong", form, ("id",), what, "Mark it wrong")
    q.mark_wrong(view.api, uuid)
    return join([notice("Marked wrong (archived).", "ok"), tag("p", link("the fact", "/fact", id=uuid))])


def _forget_preview(preview: Mapping[str, Any]) -> Html:
    counts = preview.get("counts") or {}
    rows = [
        [tier, ", ".join(f"{n} {kind}" for kind, n in (c or {}).items() if n) or "nothing"]
        for tier, c in counts.items()
        if isinstance(c, Mapping)
    ]
    parts: list[Html | str] = [table(["tier", "would go"], rows)]
    curated = preview.get("curated_entries") or {}
    entries = [f"{store}: {e}" for store, items in curated.items() for e in items or []]
    if entries:
        parts += [
            tag("h3", "Curated entries (MEMORY.md / USER.md)"),
            tag("ul", [tag("li", tag("span", e, class_="memory")) for e in entries]),
        ]
    if preview.get("warning"):
        parts.append(notice(str(preview["warning"]), "warn"))
    return join(parts)


def forget(view: View, form: Form, confirmed: bool) -> Html:
    name = one(form, "name").strip()
    related = [r for r in form.get("related", []) if r]
    large = one(form, "confirm_large") == "1"
    include: Any = related or False
    if not confirmed:
        preview = q.data(view.api.forget_entity(name, include_related=include))
        boxes = [
            tag(
                "label",
                [
                    Html(f'<input type="checkbox" name="related" value="{_attr(r["name"])}">'),
                    f" also {r['name']} ({r.get('rows', r.get('count', '?'))} rows)",
                ],
            )
            for r in preview.get("related") or []
            if isinstance(r, Mapping) and r.get("name")
        ]
        if preview.get("warning"):
            boxes.append(
                tag(
                    "label",
                    [
                        Html('<input type="checkbox" name="confirm_large" value="1">'),
                        " yes, this large forget",
                    ],
                )
            )
        what = join(
            [
                tag("p", ["Forget everything that mentions ", tag("strong", name), ":"]),
                _forget_preview(preview),
            ]
        )
        return _confirm(view, "forget", form, ("name",), what, "Forget it", join(boxes) if boxes else None)
    done = q.data(view.api.forget_entity(name, confirm=True, include_related=include, confirm_large=large))
    return join([notice(f"Forgot {name}.", "ok"), _forget_preview(done)])


def forget_id(view: View, form: Form, confirmed: bool) -> Html:
    ident = one(form, "id")
    if not confirmed:
        what = join(
            [
                tag("p", ["Forget record ", tag("code", ident), " everywhere:"]),
                _forget_preview(q.data(view.api.forget(ident))),
            ]
        )
        return _confirm(view, "forget_id", form, ("id",), what, "Forget it")
    done = q.data(view.api.forget(ident, confirm=True))
    return join([notice("Forgotten.", "ok"), _forget_preview(done)])


def merge(view: View, form: Form, confirmed: bool) -> Html:
    merged, kept = one(form, "merged").strip(), one(form, "kept").strip()
    if not confirmed:
        plan = q.merge_plan(view.api, merged, kept)
        what = table(
            ["", ""],
            [
                ["merge", f"{plan.merged['name']} ({plan.merged['entity_type']})"],
                ["into", f"{plan.kept['name']} ({plan.kept['entity_type']})"],
                ["relations that move", str(plan.relations)],
                [
                    "aliases afterwards",
                    ", ".join(
                        [*plan.kept.get("aliases", []), plan.merged["name"], *plan.merged.get("aliases", [])]
                    ),
                ],
            ],
            class_="record",
        )
        return _confirm(view, "merge", form, ("merged", "kept"), what, "Merge them")
    done = q.merge_entities(view.api, merged, kept)
    return join(
        [
            notice(
                f"Merged {done['merged']} into {done['kept']} ({done['relations_moved']} relations moved).",
                "ok",
            ),
            tag("p", link(done["kept"], "/entity", name=done["kept"])),
        ]
    )


def _curated(view: View, form: Form, confirmed: bool, op: str) -> Html:
    store = one(form, "store")
    old, new, content = one(form, "old"), one(form, "new"), one(form, "content")
    if not confirmed:
        rows: list[list[Html | str]] = [["file", "MEMORY.md" if store == "memory" else "USER.md"]]
        if op != "curated_add":
            rows.append(["entry", tag("span", old, class_="memory")])
        if op != "curated_remove":
            rows.append(
                ["new text", tag("span", new if op == "curated_replace" else content, class_="memory")]
            )
        names = {
            "curated_add": ("store", "content"),
            "curated_replace": ("store", "old", "new"),
            "curated_remove": ("store", "old"),
        }[op]
        return _confirm(view, op, form, names, table(["", ""], rows, class_="record"), "Write it")
    if op == "curated_add":
        result = q.data(view.api.curated_add(content, store))
    elif op == "curated_replace":
        result = q.data(view.api.curated_replace(old, new, store))
    else:
        result = q.data(view.api.curated_remove(old, store))
    return join(
        [
            notice(f"{result.get('message', 'Done')} ({result.get('usage', '')})", "ok"),
            tag("p", link("back to the curated files", "/curated")),
        ]
    )


def _attr(value: str) -> str:
    from hermes_memory.ui._html import esc

    return esc(value)


ACTIONS: dict[str, tuple[str, Callable[[View, Form, bool], Html]]] = {
    "correct": ("Correct a fact", correct),
    "wrong": ("Mark a fact wrong", wrong),
    "forget": ("Forget a name", forget),
    "forget_id": ("Forget a record", forget_id),
    "merge": ("Merge two entities", merge),
    "curated_add": ("Add a curated entry", lambda v, f, c: _curated(v, f, c, "curated_add")),
    "curated_replace": ("Replace a curated entry", lambda v, f, c: _curated(v, f, c, "curated_replace")),
    "curated_remove": ("Remove a curated entry", lambda v, f, c: _curated(v, f, c, "curated_remove")),
}

__all__ = ["ACTIONS", "Form"]
