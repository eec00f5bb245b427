"""HTML building blocks of the memory browser. Every stored text is untrusted (memory can hold anything a
conversation said), so every value reaches the page through ``esc`` (text and quoted attributes), and
every link is a relative path this module builds from a fixed path and url-encoded parameters: no
stored text ever becomes a URL scheme, a tag, an attribute name or an inline script or style.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

NAV = (
    ("/", "Ask"),
    ("/seen", "What the agent saw"),
    ("/facts", "Facts"),
    ("/entities", "People & things"),
    ("/timeline", "Timeline"),
    ("/curated", "MEMORY.md / USER.md"),
    ("/forget", "Forget"),
    ("/health", "Health"),
)


@dataclass(frozen=True)
class Html:
    """Markup built here (already escaped); anything else given to these helpers is text."""

    markup: str

    def __str__(self) -> str:
        return self.markup

    def __add__(self, other: Html) -> Html:
        return Html(self.markup + other.markup)


def esc(value: object) -> str:
    """Text for an element's content or a double-quoted attribute's value."""
    if isinstance(value, Html):
        return value.markup
    return html.escape("" if value is None else str(value), quote=True)


def join(parts: Iterable[Html | str]) -> Html:
    return Html("".join(esc(p) for p in parts))


def tag(element: str, body: Html | str | Iterable[Html | str] = "", /, **attrs: object) -> Html:
    """``<name attrs>body</name>``; attribute names are ours (``class_`` -> class), values escaped."""
    opened = "".join(
        f' {key.rstrip("_").replace("_", "-")}="{esc(value)}"'
        for key, value in attrs.items()
        if value is not None
    )
    inner = esc(body) if isinstance(body, Html | str) else join(body).markup
    return Html(f"<{element}{opened}>{inner}</{element}>")


def href(path: str, **params: object) -> str:
    """A relative link to one of our pages: ``path`` is ours (starts with "/"), parameters encoded."""
    if not path.startswith("/") or path.startswith("//"):
        raise ValueError(f"not a path of this server: {path!r}")
    shown = {k: str(v) for k, v in params.items() if v is not None}
    return path + (f"?{urlencode(shown)}" if shown else "")


def link(text: object, path: str, **params: object) -> Html:
    return tag("a", str(text), href=href(path, **params))


def when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M UTC")


def table(head: Sequence[str], rows: Iterable[Sequence[Html | str]], **attrs: object) -> Html:
    """A table of text cells (``Html`` cells are markup built here)."""
    header = tag("tr", [tag("th", h) for h in head]) if any(head) else Html("")
    body = [tag("tr", [tag("td", cell) for cell in row]) for row in rows]
    return tag("table", [header, *body], **attrs)


def hidden(fields: Mapping[str, object]) -> Html:
    return join(Html(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">') for k, v in fields.items())


def post_form(
    csrf: str,
    op: str,
    step: str,
    fields: Mapping[str, object],
    button: str,
    inputs: Html | None = None,
    *,
    danger: bool = False,
) -> Html:
    """A write: POST to /do with the session's CSRF token; ``step`` preview shows what would change,
    ``confirm`` does it."""
    return tag(
        "form",
        [
            hidden({"csrf": csrf, "op": op, "step": step, **fields}),
            inputs or Html(""),
            tag("button", button, type="submit", class_="danger" if danger else None),
        ],
        method="post",
        action="/do",
        class_="write",
    )


def text_input(
    name: str, value: str = "", *, label: str, area: bool = False, autofocus: bool = False
) -> Html:
    field = (
        tag("textarea", value, name=name, rows="3", required="required")
        if area
        else Html(
            f'<input type="text" name="{esc(name)}" value="{esc(value)}" required'
            + (" autofocus" if autofocus else "")
            + ">"
        )
    )
    return tag("label", [label, field])


def notice(text: str, kind: str = "info") -> Html:
    return tag("p", text, class_=f"notice {kind}")


def page(title: str, body: Html, active: str) -> bytes:
    nav = tag(
        "nav",
        [tag("a", label, href=path, class_="active" if path == active else None) for path, label in NAV],
    )
    doc = (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(title)} · hermes-memory</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js" defer></script>'
        "</head><body>"
        f'<header><span class="brand">hermes-memory</span>{nav.markup}</header>'
        f"<main><h1>{esc(title)}</h1>{body.markup}</main></body></html>"
    )
    return doc.encode("utf-8")


__all__ = [
    "NAV",
    "Html",
    "esc",
    "hidden",
    "href",
    "join",
    "link",
    "notice",
    "page",
    "post_form",
    "table",
    "tag",
    "text_input",
    "when",
]
