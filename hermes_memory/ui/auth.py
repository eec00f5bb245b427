"""Who may use the memory browser: the token printed at start, the session cookie it buys, the CSRF
token of every write, and the Host/Origin checks that keep other sites (and DNS rebinding) out.

* The start token (``secrets.token_urlsafe``) is in the printed URL. The first request carrying it gets
  a session cookie (HttpOnly, SameSite=Strict, Path=/) and a redirect to the same page without the
  token, so it does not stay in the address bar or the history.
* Every request needs that cookie (or the token); anything else is refused (403).
* The Host header must name the address the server listens on (``127.0.0.1:PORT``, ``localhost:PORT``,
  or the ``--host`` given): a page of another site that rebinds its name to 127.0.0.1 sends its own name.
* Every write is a POST with the session's CSRF token in a hidden field (compared in constant time)
  and an Origin (or, without one, a Referer) naming this server.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

COOKIE = "hm_ui"
# Sessions kept at once (a browser that lost its cookie gets a new one from the token link).
_MAX_SESSIONS = 64


@dataclass
class Gate:
    """The browser's secrets: the start token and the live sessions (cookie value -> CSRF token)."""

    host: str
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    _sessions: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def hosts(self) -> frozenset[str]:
        """The Host header values this server answers to."""
        names = {self.host, "127.0.0.1", "localhost"} if _loopback(self.host) else {self.host}
        return frozenset(f"{_bracketed(name)}:{self.port}" for name in names)

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def url(self, path: str = "/") -> str:
        """The URL printed at start: this server, with the token."""
        return f"http://{_bracketed(self.host)}:{self.port}{path}?token={self.token}"

    def host_ok(self, host_header: str | None) -> bool:
        return host_header is not None and host_header.lower() in self.hosts

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def start_session(self) -> str:
        """A new session (its cookie value); the oldest is dropped beyond the limit."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            while len(self._sessions) >= _MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[sid] = secrets.token_urlsafe(32)
        return sid

    def session_of(self, cookie_header: str | None) -> str | None:
        """The session a Cookie header carries, when it is a live one."""
        if not cookie_header:
            return None
        try:
            jar = SimpleCookie(cookie_header)
        except CookieError:
            return None
        morsel = jar.get(COOKIE)
        if morsel is None:
            return None
        with self._lock:
            for sid in self._sessions:
                if hmac.compare_digest(sid.encode(), morsel.value.encode()):
                    return sid
        return None

    def csrf(self, sid: str) -> str:
        with self._lock:
            return self._sessions[sid]

    def csrf_ok(self, sid: str, given: str | None) -> bool:
        with self._lock:
            expected = self._sessions.get(sid)
        return (
            expected is not None
            and given is not None
            and hmac.compare_digest(given.encode(), expected.encode())
        )

    def same_origin(self, origin: str | None, referer: str | None) -> bool:
        """A write comes from this server's own pages: its Origin (or its Referer's origin) is ours."""
        if origin is not None:
            return origin.lower() in self.origins
        if referer:
            parts = urlsplit(referer)
            return f"{parts.scheme}://{parts.netloc}".lower() in self.origins
        return False

    def cookie_header(self, sid: str) -> str:
        return f"{COOKIE}={sid}; HttpOnly; SameSite=Strict; Path=/"


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the browser on this machine."""
    return _loopback(host)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


__all__ = ["COOKIE", "Gate", "is_loopback"]
