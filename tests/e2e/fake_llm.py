"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving the real Hermes agent.

Replies are decided by ``plan``: a request whose last message is a tool result gets a final answer that
quotes the tool results; otherwise the *user's own words* (the text before any ``<memory-context>``
block Hermes appends) are matched against ``ROUTES`` and the first match's tool calls are returned.
Requests without ``tools`` (titles, summaries) get a short text. Every request is recorded in
``server.requests``; JSON and SSE (``stream: true``) responses are both supported.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FENCE = "<memory-context>"
_ids = itertools.count(1)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # Hermes drops tool calls whose ids repeat within a response: number them globally.
    return {
        "id": f"call_{next(_ids):06d}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


# (trigger phrase in the user's own words, tool calls to make). First match wins.
ROUTES: list[tuple[str, Callable[[], list[dict[str, Any]]]]] = [
    (
        "please note in your notes",
        lambda: [
            _call("memory", {"action": "add", "target": "user", "content": "User prefers window seats."})
        ],
    ),
    ("search your memory for", lambda: [_call("nextlevel_search", {"query": "Biscuit beagle"})]),
    (
        "store the fact",
        lambda: [
            _call("nextlevel_remember", {"kind": "fact", "content": "Dana's sister Lena lives in Porto."})
        ],
    ),
]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def plan(body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """(text, tool_calls) for one request."""
    messages = body.get("messages") or []
    if not body.get("tools"):
        return "Fake session title", []
    if messages and messages[-1].get("role") == "tool":
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.append(text_of(message.get("content")))
        return "Tool results: " + " || ".join(reversed(results)), []
    users = [m for m in messages if m.get("role") == "user"]
    own_words = text_of(users[-1].get("content")).split(FENCE)[0].lower() if users else ""
    for trigger, calls in ROUTES:
        if trigger in own_words:
            return None, calls()
    attached = bool(users) and FENCE in text_of(users[-1].get("content"))
    return f"Plain answer (memory context attached: {attached})", []


class _Handler(BaseHTTPRequestHandler):
    server: FakeLLM

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.record({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": "fake-model", "object": "model", "owned_by": "tests", "context_length": 128000}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        self.server.record({"method": "POST", "path": self.path, "body": body})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": "not found"}})
            return
        text, calls = plan(body)
        ident, created = f"chatcmpl-{next(_ids)}", int(time.time())
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            payload = {"id": ident, "object": "chat.completion", "created": created, "model": "fake-model"}
            self._send_json(200, {**payload, "choices": [choice], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if text:
            chunks.append({"content": text})
        for index, call in enumerate(calls):
            head = {"index": index, "id": call["id"], "type": "function"}
            chunks.append(
                {"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]}
            )
            chunks.append(
                {"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]}
            )
        for i, delta in enumerate([*chunks, {}]):
            last = i == len(chunks)
            event: dict[str, Any] = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": "fake-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish if last else None}],
            }
            if last:
                event["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class FakeLLM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self.shutdown()
        self.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        """Main-agent chat requests (those that offer tools), in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["body"].get("tools")]


def start(port: int = 0) -> FakeLLM:
    server = FakeLLM(port)
    threading.Thread(target=server.serve_forever, name="fake-llm", daemon=True).start()
    return server
