"""The memory browser beside a real Hermes: `hermes -z` processes (hermes-agent 0.19.0, the provider in
its default configuration, a fake LLM on 127.0.0.1) write to the store while the browser holds it open:
a correction made in the browser reaches the process's prefetch block, the browser reads the turn that
process wrote, and with ``ui.record_context`` on, the page "What the agent saw" shows that block. One
process (each ``hermes -z`` costs seconds of the suite): what it needs to find is stored beforehand
by the browser's own store.
"""

from __future__ import annotations

import http.client
import re
import time
from collections.abc import Iterator
from urllib.parse import quote_plus, urlencode, urlsplit

import pytest
from harness import Home, home_fixture, require_hermes

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench import ui_demo
from hermes_memory.hermes.settings import hermes_profile, load_settings

require_hermes()

SETTINGS = """\
provider:
  prefetch_wait_ms: 3000
memory:
  ui:
    record_context: true
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "ui_live", SETTINGS)


class Client:
    """A logged-in browser session, over plain HTTP."""

    def __init__(self, served: ui_demo.Served):
        self.served = served
        self.netloc = urlsplit(served.base).netloc
        status, headers, _ = self._request("GET", f"/?token={served.app.gate.token}", {})
        assert status == 303
        self.cookie = headers["set-cookie"].split(";")[0]

    def _request(self, method: str, path: str, headers: dict[str, str], body: str | None = None
                 ) -> tuple[int, dict[str, str], str]:  # fmt: skip
        conn = http.client.HTTPConnection(*self.netloc.split(":"), timeout=60)
        try:
            conn.request(method, path, body=body, headers={"Host": self.netloc, **headers})
            reply = conn.getresponse()
            return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read().decode()
        finally:
            conn.close()

    def get(self, path: str) -> str:
        status, _, body = self._request("GET", path, {"Cookie": self.cookie})
        assert status == 200, body
        return body

    def post(self, fields: dict[str, str]) -> str:
        csrf = re.search(r'name="csrf" value="([^"]+)"', self.get("/forget"))
        assert csrf is not None
        headers = {"Cookie": self.cookie, "Origin": self.served.base,
                   "Content-Type": "application/x-www-form-urlencoded"}  # fmt: skip
        status, _, body = self._request("POST", "/do", headers, urlencode({**fields, "csrf": csrf.group(1)}))
        assert status == 200, body
        return body


def test_a_correction_in_the_browser_reaches_the_next_prefetch(home: Home) -> None:
    settings = load_settings(home.path)
    # The browser holds the store for the whole test, as `hermes-memory ui` would, with its worker.
    api = MemoryAPI(settings.memory_config(str(home.path), hermes_profile(home.path)), actor="ui",
                    background=True)  # fmt: skip
    try:
        with ui_demo.serve(api, settings) as served:
            client = Client(served)
            teal = api.fact_store("The user's favourite colour is teal", category="preference")["data"]
            page = client.get("/facts?subject=" + quote_plus("the user"))
            assert teal["uuid"] in page, page
            fields = {"op": "correct", "id": teal["uuid"], "text": "The user's favourite colour is crimson"}
            assert "will be replaced by" in client.post({**fields, "step": "preview"})
            assert "Stored. The old statement is closed" in client.post({**fields, "step": "confirm"})

            question = "What is my favourite colour?"
            turn = home.hermes(question)
            block = turn.block or ""
            assert "crimson" in block, block
            stale = [line for line in block.splitlines() if "teal" in line.lower()]
            assert all("superseded" in line for line in stale), stale
            seen = client.get("/seen")
            assert question in seen and "crimson" in seen
            # Read live: a turn of the Hermes process's session shows up (once a worker has stored it);
            # the browser's own store wrote none.
            hermes_turn = re.compile(r"<td>turn, \d{8}_\d{6}_[0-9a-f]+</td>")
            deadline, page = time.monotonic() + 60, ""
            while time.monotonic() < deadline:
                page = client.get("/?q=" + quote_plus("favourite colour"))
                if hermes_turn.search(page):
                    break
                time.sleep(0.5)
            assert hermes_turn.search(page), page
    finally:
        api.close()
