"""A headless Chromium driven over the Chrome DevTools Protocol, for the memory browser's tests and its
screenshot script: one browser process, pages (targets) opened in it, every event of a page kept.

Needs the ``chromium`` command (Debian's package) and ``websocket-client`` (the dev extra). ``ensure``
installs Chromium with apt-get when it is missing and says why when it cannot.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

_START_S = 30.0


class BrowserError(RuntimeError):
    """Chromium could not be found, installed, started or talked to."""


def ensure() -> str:
    """The path of the ``chromium`` command, installed with apt-get first when it is missing.
    Raises BrowserError when it is missing and cannot be installed."""
    found = shutil.which("chromium")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        raise BrowserError(
            "chromium is not installed and apt-get is not available: install Debian's chromium"
        )
    done = subprocess.run(
        f"{apt} update -qq && {apt} install -y -qq chromium",
        shell=True, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )  # fmt: skip
    found = shutil.which("chromium")
    if done.returncode != 0 or not found:
        raise BrowserError(f"apt-get install chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return found


class Browser:
    """One headless Chromium process (its own profile directory, removed at ``close``)."""

    def __init__(self, command: str | None = None):
        import websocket  # websocket-client (dev extra)

        self._websocket = websocket
        self._profile = tempfile.mkdtemp(prefix="hm-chromium-")
        self._process = subprocess.Popen(
            [
                command or ensure(), "--headless=new", "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                "--no-sandbox", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-features=Translate,OptimizationHints,MediaRouter", "--hide-scrollbars",
                "--window-size=1280,900", "about:blank",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + _START_S
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self._process.poll() is not None:
                self.close()
                raise BrowserError("chromium did not open its DevTools port")
            time.sleep(0.05)
        self.port = int(port_file.read_text().split()[0])

    def _json(self, path: str, method: str = "GET") -> Any:
        import urllib.request

        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
        try:
            return json.loads(body)
        except ValueError:  # /json/close answers in words
            return body.decode("utf-8", "replace")

    def new_page(self) -> Page:
        target = self._json("/json/new?about:blank", method="PUT")
        return Page(self._websocket, target["webSocketDebuggerUrl"], target["id"], self)

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        shutil.rmtree(self._profile, ignore_errors=True)


class Page:
    """One tab: commands are sent and answered in order; events are kept in ``events``."""

    def __init__(self, websocket: Any, url: str, target_id: str, browser: Browser):
        self._ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._browser = browser
        self.target_id = target_id
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer (events meanwhile go to ``events``). Raises
        BrowserError for a protocol error."""
        with self._lock:
            ident = next(self._ids)
            self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
            while True:
                message = json.loads(self._ws.recv())
                if message.get("id") == ident:
                    if "error" in message:
                        raise BrowserError(f"{method}: {message['error']}")
                    result: dict[str, Any] = message.get("result", {})
                    return result
                if "method" in message:
                    self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        self.events.append(message)
        if message["method"] == "Page.javascriptDialogOpening":  # never leave a dialog blocking the page
            self._ws.send(json.dumps({"id": next(self._ids), "method": "Page.handleJavaScriptDialog",
                                      "params": {"accept": False}}))  # fmt: skip

    def pump(self, seconds: float) -> None:
        """Read events for ``seconds`` (what a page does after it loaded)."""
        with self._lock:
            end = time.monotonic() + seconds
            self._ws.settimeout(0.05)
            try:
                while time.monotonic() < end:
                    try:
                        message = json.loads(self._ws.recv())
                    except self._browser._websocket.WebSocketTimeoutException:
                        continue
                    if "method" in message:
                        self._event(message)
            finally:
                self._ws.settimeout(30)

    def goto(self, url: str, *, settle: float = 0.2, timeout: float = 30.0) -> None:
        """Navigate and wait for the load event."""
        start = len(self.events)
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired", since=start, timeout=timeout)
        self.pump(settle)

    def wait_for(self, method: str, *, since: int = 0, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.events[since:]:
                if message["method"] == method:
                    return message
            self.pump(0.05)
        raise BrowserError(f"no {method} within {timeout} s")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page. Raises BrowserError when it throws."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def submit(self, form_selector: str, *, settle: float = 0.2) -> None:
        """Submit a form the way a click on its button does, and wait for the next page."""
        start = len(self.events)
        self.evaluate(f"document.querySelector({json.dumps(form_selector)}).querySelector('button').click()")
        self.wait_for("Page.loadEventFired", since=start)
        self.pump(settle)

    def screenshot(self, path: Path, *, full_page: bool = True) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": 1280, "height": min(int(size[1]), 4000), "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def requests(self) -> list[str]:
        """Every URL the page asked for (``Network.requestWillBeSent``)."""
        return [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]

    def dialogs(self) -> list[dict[str, Any]]:
        return [e["params"] for e in self.events if e["method"] == "Page.javascriptDialogOpening"]

    def close(self) -> None:
        try:
            self._ws.close()
        finally:
            self._browser._json(f"/json/close/{self.target_id}")


__all__ = ["Browser", "BrowserError", "Page", "ensure"]
