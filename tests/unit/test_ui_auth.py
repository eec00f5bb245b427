"""The memory browser refuses what is not its own user: no token, a wrong Host (DNS rebinding), a write
from another origin or without the session's CSRF token; it does not listen beyond loopback unless told
to. And "what the agent saw" is kept only when switched on, bounded and redacted."""

from __future__ import annotations

import http.client
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench import ui_demo
from hermes_memory.cli import main as cli
from hermes_memory.hermes import seen
from hermes_memory.ui import CSP, RemoteBindError, check_bind


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ui_demo.Served]:
    api = MemoryAPI(hermes_home=tmp_path_factory.mktemp("ui"), tier3={"embedding_model": "hashing",
                    "backend": "memory"})  # fmt: skip
    api.fact_store("The user likes green tea")
    try:
        with ui_demo.serve(api) as running:
            yield running
    finally:
        api.close()


def request(served: ui_demo.Served, method: str, path: str, *, headers: dict[str, str] | None = None,
            body: str | None = None) -> tuple[int, dict[str, str], str]:  # fmt: skip
    conn = http.client.HTTPConnection("127.0.0.1", served.server.server_address[1], timeout=10)
    try:
        sent = {"Host": urlsplit(served.base).netloc, **(headers or {})}
        if body is not None:
            sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
        conn.request(method, path, body=body, headers=sent)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read().decode()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def session(served: ui_demo.Served) -> dict[str, str]:
    """A logged-in session: its cookie header and the CSRF token of its pages."""
    status, headers, _ = request(served, "GET", f"/facts?token={served.app.gate.token}")
    assert status == 303 and headers["location"] == "/facts"
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    cookie = headers["set-cookie"].split(";")[0]
    status, _, body = request(served, "GET", "/curated", headers={"Cookie": cookie})
    assert status == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', body)
    assert csrf is not None
    return {"cookie": cookie, "csrf": csrf.group(1)}


def test_without_the_token_every_page_is_refused(served: ui_demo.Served) -> None:
    for path in ("/", "/facts", "/health", "/static/ui.js", "/graph.png?name=x"):
        assert request(served, "GET", path)[0] == 403
    assert request(served, "GET", "/?token=wrong")[0] == 403
    assert request(served, "GET", "/", headers={"Cookie": "hm_ui=made-up"})[0] == 403


def test_a_session_reads_under_a_strict_csp(served: ui_demo.Served, session: dict[str, str]) -> None:
    status, headers, body = request(served, "GET", "/facts", headers={"Cookie": session["cookie"]})
    assert status == 200 and "the user" in body
    assert headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP and headers["x-content-type-options"] == "nosniff"


def test_another_host_header_is_refused(served: ui_demo.Served, session: dict[str, str]) -> None:
    port = served.server.server_address[1]
    for host in (f"evil.example:{port}", "127.0.0.1:1", "localhost"):
        assert request(served, "GET", "/", headers={"Cookie": session["cookie"], "Host": host})[0] == 403


def _post(served: ui_demo.Served, session: dict[str, str], fields: dict[str, str], **headers: str) -> int:
    body = urlencode(fields)
    return request(served, "POST", "/do", headers={"Cookie": session["cookie"], **headers}, body=body)[0]


def test_writes_need_our_origin_and_the_csrf_token(served: ui_demo.Served, session: dict[str, str]) -> None:
    add = {"op": "curated_add", "step": "confirm", "store": "memory", "content": "Written by a test"}
    ours = {"Origin": served.base}
    assert _post(served, session, add, Origin="http://evil.example") == 403
    assert _post(served, session, add, Origin="null") == 403
    assert _post(served, session, add) == 403  # neither Origin nor Referer
    assert _post(served, session, add, **ours) == 403  # no CSRF token
    assert _post(served, session, {**add, "csrf": "x" + session["csrf"]}, **ours) == 403
    assert served.app.api.curated_entries("memory")["data"] == []
    assert _post(served, session, {**add, "csrf": session["csrf"]}, **ours) == 200
    assert served.app.api.curated_entries("memory")["data"] == ["Written by a test"]


def test_a_preview_changes_nothing(served: ui_demo.Served, session: dict[str, str]) -> None:
    fact = served.app.api.fact_query("green tea")["data"][0]
    fields = {"op": "wrong", "step": "preview", "id": fact["uuid"], "csrf": session["csrf"]}
    assert _post(served, session, fields, Origin=served.base) == 200
    assert served.app.api.fact_get(fact["uuid"])["data"]["is_archived"] is False


def test_a_store_error_is_a_message_not_a_traceback(served: ui_demo.Served, session: dict[str, str]) -> None:
    status, _, body = request(served, "GET", "/fact?id=no-such-fact", headers={"Cookie": session["cookie"]})
    assert status == 404 and "no fact" in body.lower() and "Traceback" not in body


def test_only_loopback_unless_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_bind("127.0.0.1", False) is None and check_bind("::1", False) is None
    with pytest.raises(RemoteBindError):
        check_bind("0.0.0.0", False)
    assert "WARNING" in (check_bind("0.0.0.0", True) or "")
    assert cli(["ui", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_what_the_agent_saw_is_kept_only_when_on(open_api: Callable[..., MemoryAPI], tmp_path: Path) -> None:
    off = open_api()
    seen.record(off.config, session_id="s", scope="default", kind=seen.PREFETCH, served="q", text="block")
    assert not off.config.seen_path.exists()
    on: Any = open_api(ui={"record_context": True, "record_limit": 3})
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    for n in range(5):
        seen.record(on.config, session_id="s1", scope="default", kind=seen.TOOL, served=f"q{n}",
                    text=f"result {n} with key {key}")  # fmt: skip
    kept = seen.read(on.config)
    assert [r.served for r in kept] == ["q4", "q3", "q2"]
    assert all(key not in r.text and "[REDACTED" in r.text for r in kept)
    assert on.config.seen_path.stat().st_mode & 0o077 == 0
