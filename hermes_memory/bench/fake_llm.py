"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving the real Hermes agent
(the e2e tests and the one-shot benchmarks).

Every request is kept in ``server.requests`` and, when the server was started with a ``log`` path,
appended to that file as one JSON line (one server and one log per HERMES_HOME). Replies follow a
*script*: a JSON file (``script`` path, re-read on every request so a test can change it between two
``hermes -z`` processes) or, without one, ``DEFAULT_SCRIPT``::

    {
      "rules": [                                   # first match wins; "match" is a regex searched
        {"match": "please note", "tool_calls": [   # (case-insensitive) in the user's own words
            {"name": "memory", "arguments": {"action": "add", "target": "user", "content": "..."}}]},
        {"match": "^where", "reply": "a fixed text"},
        {"match": "lisbon", "echo": true}          # "Noted: <the user's own words>"
      ],
      "default": {"reply": "..."} | {"echo": true} | {"status": true},
      "after_tools": {"reply": "Done."} | {"quote": true},
      "structured": [                              # JSON-mode requests (response_format json_object,
        {"match": "core memory", "reply": {...}}   # no tools: memory's own LLM calls): the first rule
      ]                                            # whose regex is in the system prompt; else {}
    }

The user's own words are the last user message without the ``<memory-context>`` block Hermes
appends to it. ``{"status": true}`` answers ``Plain answer (memory context attached: <bool>)``; after
tool results the default (``quote``) answer quotes them. Requests without ``tools`` (titles,
summaries) get a short text. Tool-call ids are unique per response (Hermes drops calls whose ids
repeat). JSON and SSE (``stream: true``) responses are both supported.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FENCE = "<memory-context>"
# How the block Hermes appends to the API copy of the current user message starts.
HERMES_BLOCK = FENCE + "\n[System note:"
_ids = itertools.count(1)

DEFAULT_SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": "please note in your notes",
            "tool_calls": [
                {
                    "name": "memory",
                    "arguments": {"action": "add", "target": "user", "content": "User prefers window seats."},
                }
            ],
        },
        {
            "match": "search your memory for",
            "tool_calls": [{"name": "nextlevel_search", "arguments": {"query": "Biscuit beagle"}}],
        },
        {
            "match": "store the fact",
            "tool_calls": [
                {
                    "name": "nextlevel_remember",
                    "arguments": {"kind": "fact", "content": "Dana's sister Lena lives in Porto."},
                }
            ],
        },
    ],
    "default": {"status": True},
    "after_tools": {"quote": True},
}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call in the OpenAI shape, with an id no other call of this test run has."""
    return {
        "id": f"call_{next(_ids):06d}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def split_user_text(text: str) -> tuple[str, str | None]:
    """(the user's own words, the fenced block Hermes appended or None).

    Hermes appends ``\\n\\n<memory-context>\\n[System note: …]\\n\\n<block>\\n</memory-context>`` at the
    end; a fence the user typed earlier in the message stays part of the user's words.
    """
    start = text.rfind(HERMES_BLOCK)
    if start < 0 or not text.rstrip().endswith("</memory-context>"):
        return text, None
    return text[:start].rstrip("\n"), text[start:]


def own_words(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return split_user_text(text_of(users[-1].get("content")))[0] if users else ""


def _reply(spec: dict[str, Any], words: str, attached: bool) -> str:
    if spec.get("echo"):
        return f"Noted: {words}"
    if spec.get("status"):
        return f"Plain answer (memory context attached: {attached})"
    return str(spec.get("reply", ""))


def plan(
    body: dict[str, Any], script: dict[str, Any] | None = None
) -> tuple[str | None, list[dict[str, Any]]]:
    """(text, tool_calls) for one request."""
    script = script or DEFAULT_SCRIPT
    messages = body.get("messages") or []
    if not body.get("tools") and (body.get("response_format") or {}).get("type") == "json_object":
        system = " ".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
        for rule in script.get("structured") or []:
            if re.search(str(rule["match"]), system, re.IGNORECASE):
                return json.dumps(rule.get("reply") or {}), []
        return "{}", []
    if not body.get("tools"):
        return "Fake session title", []
    if messages and messages[-1].get("role") == "tool":
        after = script.get("after_tools") or {"quote": True}
        if not after.get("quote"):
            return str(after.get("reply", "")), []
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.append(text_of(message.get("content")))
        return "Tool results: " + " || ".join(reversed(results)), []
    users = [m for m in messages if m.get("role") == "user"]
    last = text_of(users[-1].get("content")) if users else ""
    words, block = split_user_text(last)
    for rule in script.get("rules") or []:
        if re.search(str(rule["match"]), words, re.IGNORECASE):
            if rule.get("tool_calls"):
                return None, [call(c["name"], c.get("arguments") or {}) for c in rule["tool_calls"]]
            return _reply(rule, words, block is not None), []
    return _reply(script.get("default") or {"status": True}, words, block is not None), []


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
            model = {"id": "fake-model", "object": "model", "owned_by": "bench", "context_length": 128000}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.server.record({"method": "POST", "path": self.path, "body": body})
            self._send_json(404, {"error": {"message": "not found"}})
            return
        text, calls = plan(body, self.server.script())
        self.server.record({"method": "POST", "path": self.path, "body": body, "reply": text, "calls": calls})
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
        for index, one in enumerate(calls):
            head = {"index": index, "id": one["id"], "type": "function"}
            chunks.append(
                {"tool_calls": [{**head, "function": {"name": one["function"]["name"], "arguments": ""}}]}
            )
            chunks.append(
                {"tool_calls": [{"index": index, "function": {"arguments": one["function"]["arguments"]}}]}
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
    """The server; ``with FakeLLM(...) as llm`` serves on a thread until the block ends. Without a
    script file, ``fixed`` (a script dict) or else ``DEFAULT_SCRIPT`` answers."""

    daemon_threads = True

    def __init__(
        self,
        port: int = 0,
        *,
        log: Path | None = None,
        script: Path | None = None,
        fixed: dict[str, Any] | None = None,
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.log = log
        self.script_file = script
        self._fixed = fixed
        self._lock = threading.Lock()

    def __enter__(self) -> FakeLLM:
        threading.Thread(target=self.serve_forever, name="fake-llm", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self) -> dict[str, Any] | None:
        """The scenario's script (re-read on every request), else ``fixed``, else None (DEFAULT_SCRIPT)."""
        if self.script_file is None or not self.script_file.exists():
            return self._fixed
        loaded: dict[str, Any] = json.loads(self.script_file.read_text(encoding="utf-8"))
        return loaded

    def record(self, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"t": time.time(), **request}) + "\n")

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


def read_log(path: Path) -> list[dict[str, Any]]:
    """The requests a server logged to ``path`` (JSON lines), in order."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def start(port: int = 0, *, log: Path | None = None, script: Path | None = None) -> FakeLLM:
    """A server already serving on a thread; ``stop()`` it when done."""
    return FakeLLM(port, log=log, script=script).__enter__()


__all__ = [
    "DEFAULT_SCRIPT",
    "FENCE",
    "FakeLLM",
    "call",
    "own_words",
    "plan",
    "read_log",
    "split_user_text",
    "start",
    "text_of",
]
