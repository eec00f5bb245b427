"""The memory browser's HTTP server: the standard library's ``ThreadingHTTPServer`` on 127.0.0.1, one
MemoryAPI for every request, the pages rendered on the server, two static files, a strict CSP.

Every response carries the CSP below (no inline script or style, nothing from another origin) and
``X-Content-Type-Options: nosniff``; pages are not cached. Requests are checked by ``auth.Gate``
before anything is read. A store error becomes the page's message (status 400/404/409/503), never a
traceback; a bug is logged and answered with a plain 500 page.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from hermes_memory.errors import (
    ConflictError,
    HermesMemoryError,
    NotFoundError,
    StorageError,
    ThreatDetectedError,
    ValidationError,
)
from hermes_memory.ui import _queries as q
from hermes_memory.ui._html import Html, link, notice, page, tag
from hermes_memory.ui._view import View
from hermes_memory.ui.actions import ACTIONS
from hermes_memory.ui.auth import Gate, is_loopback
from hermes_memory.ui.pages import PAGES

if TYPE_CHECKING:
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.hermes.settings import ProviderSettings

log = logging.getLogger(__name__)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_STATIC = {
    "/static/ui.css": ("ui.css", "text/css; charset=utf-8"),
    "/static/ui.js": ("ui.js", "text/javascript; charset=utf-8"),
}
_MAX_BODY = 1_000_000


class RemoteBindError(ValueError):
    """A non-loopback address was asked for without ``allow_remote``."""


@dataclass
class App:
    """What the handler threads share: the store, the provider settings, the gate, the write lock."""

    api: MemoryAPI
    settings: ProviderSettings
    gate: Gate
    tier3: bool
    # One write at a time from this browser (reads run side by side through the store's readers).
    write_lock: threading.Lock


def check_bind(host: str, allow_remote: bool) -> str | None:
    """None when ``host`` may be bound; else the warning to print (remote allowed) — or raises
    RemoteBindError when it is not loopback and ``allow_remote`` is off."""
    if is_loopback(host):
        return None
    if not allow_remote:
        raise RemoteBindError(
            f"refusing to listen on {host}: the memory browser shows and changes everything memory holds; "
            "it listens on 127.0.0.1 unless --allow-remote is given as well"
        )
    return (
        f"WARNING: listening on {host}: anyone who can reach this address and learns the token can read and "
        "change this memory. Prefer an SSH tunnel to 127.0.0.1."
    )


def make_server(app_args: dict[str, Any], host: str, port: int) -> tuple[ThreadingHTTPServer, App]:
    """Bind (port 0: any free port) and build the app. Raises OSError when the address is taken."""
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    gate = Gate(host, server.server_address[1])
    app = App(gate=gate, write_lock=threading.Lock(), **app_args)
    server.app = app  # type: ignore[attr-defined]
    return server, app


class Handler(BaseHTTPRequestHandler):
    server_version = "hermes-memory-ui"
    sys_version = ""

    @property
    def app(self) -> App:
        app: App = self.server.app  # type: ignore[attr-defined]
        return app

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("ui: " + format, *args)

    # -- the gate -----------------------------------------------------------------------------
    def _session(self) -> str | None:
        """The request's session, or None after the refusal/redirect was sent."""
        gate = self.app.gate
        if not gate.host_ok(self.headers.get("Host")):
            self._refuse("unexpected Host header")
            return None
        parts = urlsplit(self.path)
        token = parse_qs(parts.query).get("token", [None])[0]
        if token is not None:
            if not gate.token_ok(token):
                self._refuse("wrong token")
                return None
            sid = gate.start_session()
            rest = "&".join(p for p in parts.query.split("&") if not p.startswith("token="))
            self._send(
                HTTPStatus.SEE_OTHER,
                b"",
                "text/plain",
                {
                    "Location": parts.path + (f"?{rest}" if rest else ""),
                    "Set-Cookie": gate.cookie_header(sid),
                },
            )
            return None
        session = gate.session_of(self.headers.get("Cookie"))
        if session is None:
            self._refuse("open the link with the token that `hermes-memory ui` printed")
            return None
        return session

    def _refuse(self, why: str) -> None:
        body = page("Forbidden", notice(f"403: {why}.", "error"), "")
        self._send(HTTPStatus.FORBIDDEN, body)

    # -- GET ------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        sid = self._session()
        if sid is None:
            return
        parts = urlsplit(self.path)
        if parts.path in _STATIC:
            name, kind = _STATIC[parts.path]
            self._send(
                HTTPStatus.OK,
                resources.files("hermes_memory.ui").joinpath("static", name).read_bytes(),
                kind,
                {"Cache-Control": "no-cache"},
            )
            return
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/graph.png":
            self._graph(params.get("name", ""))
            return
        found = PAGES.get(parts.path)
        if found is None:
            self._send(HTTPStatus.NOT_FOUND, page("Not found", notice("No such page.", "error"), ""))
            return
        title, render = found
        view = self._view(sid)
        self._guarded(title, parts.path, lambda: render(view, params))

    def _graph(self, name: str) -> None:
        try:
            png = q.graph_png(self.app.api, name)
        except HermesMemoryError as exc:
            self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, png, "image/png")

    # -- POST -------------------------------------------------------------------------------------
    def do_POST(self) -> None:
        sid = self._session()
        if sid is None:
            return
        gate = self.app.gate
        if not gate.same_origin(self.headers.get("Origin"), self.headers.get("Referer")):
            self._refuse("a write must come from this browser's own pages (Origin)")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self._send(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, page("Too large", notice("Too large.", "error"), "")
            )
            return
        form = parse_qs(self.rfile.read(length).decode("utf-8", errors="replace"), keep_blank_values=True)
        if not gate.csrf_ok(sid, next(iter(form.get("csrf") or []), None)):
            self._refuse("the form's CSRF token is missing or stale; reload the page")
            return
        if urlsplit(self.path).path != "/do" or (form.get("op") or [""])[0] not in ACTIONS:
            self._send(HTTPStatus.NOT_FOUND, page("Not found", notice("No such action.", "error"), ""))
            return
        title, act = ACTIONS[form["op"][0]]
        confirmed = (form.get("step") or [""])[0] == "confirm"
        view = self._view(sid)
        if not confirmed:
            self._guarded(title, "", lambda: act(view, form, False))
            return
        with self.app.write_lock:
            self._guarded(title, "", lambda: act(view, form, True))

    # -- helpers -----------------------------------------------------------------------------------
    def _view(self, sid: str) -> View:
        app = self.app
        return View(app.api, app.settings, app.gate.csrf(sid), app.tier3)

    def _guarded(self, title: str, active: str, render: Any) -> None:
        try:
            body = render()
        except HermesMemoryError as exc:
            status = _status_of(exc)
            self._send(status, page(title, _error(exc), active))
            return
        except Exception:
            log.exception("ui: %s failed", self.path)
            self._send(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                page(
                    title,
                    notice(
                        "Internal error; the terminal running `hermes-memory ui` has the details.", "error"
                    ),
                    active,
                ),
            )
            return
        self._send(HTTPStatus.OK, page(title, body, active))

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        kind: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")  # "no-referrer" makes a form's Origin "null"
        self.send_header("X-Frame-Options", "DENY")
        if kind.startswith("text/html"):
            self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _status_of(exc: HermesMemoryError) -> HTTPStatus:
    kind = getattr(exc, "error_type", None) or getattr(exc, "code", "")
    if isinstance(exc, NotFoundError) or kind == "not_found":
        return HTTPStatus.NOT_FOUND
    if isinstance(exc, ConflictError | ThreatDetectedError) or kind in ("conflict", "threat_detected"):
        return HTTPStatus.CONFLICT
    if isinstance(exc, StorageError) or kind in ("storage_error", "vector_store_busy"):
        return HTTPStatus.SERVICE_UNAVAILABLE
    if isinstance(exc, ValidationError):
        return HTTPStatus.BAD_REQUEST
    return HTTPStatus.BAD_REQUEST


def _error(exc: HermesMemoryError) -> Html:
    busy = _status_of(exc) == HTTPStatus.SERVICE_UNAVAILABLE
    hint = (
        " Another process (a running Hermes) may hold the store; nothing was changed. Try again in a moment."
        if busy
        else ""
    )
    return notice(f"{exc}{hint}", "error") + tag("p", link("back", "/"))


__all__ = ["CSP", "App", "Handler", "RemoteBindError", "check_bind", "make_server"]
