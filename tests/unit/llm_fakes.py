"""Fakes for the LLM tests (not collected): a scripted ``LLMClient`` object and a scripted
OpenAI-compatible chat-completions server on 127.0.0.1."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A scripted reply: a dict (returned), an exception (raised) or a callable (system, user) -> reply.
Reply = dict[str, Any] | BaseException | Callable[[str, str], Any] | Any


@dataclass
class Call:
    system: str
    user: str
    response_model: Any


class ScriptedLLM:
    """Implements the ``LLMClient`` protocol by replaying ``replies`` in order, then ``default``."""

    def __init__(self, *replies: Reply, default: Reply = None, on_call: Callable[[], None] | None = None):
        self.replies = list(replies)
        self.default = default
        self.on_call = on_call
        self.calls: list[Call] = []

    def generate_structured(self, system: str, user: str, response_model: Any) -> dict[str, Any]:
        self.calls.append(Call(system, user, response_model))
        if self.on_call is not None:
            self.on_call()
        reply = self.replies.pop(0) if self.replies else self.default
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(system, user)
        return copy.deepcopy(reply)


@dataclass
class Scripted:
    """One server answer: ``content`` (a dict is sent as JSON text; a callable is given the request's
    JSON body and returns the content) or a raw ``status``/``body``; ``delay`` seconds of silence first
    (released early when the server stops)."""

    content: Any = None
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0


@dataclass
class FakeChatServer:
    script: list[Scripted] = field(default_factory=list)
    default: Scripted = field(default_factory=lambda: Scripted({"facts": []}))
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                with fake._lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    answer = fake.script.pop(0) if fake.script else fake.default
                if answer.delay:
                    fake._release.wait(answer.delay)
                if answer.body is not None:
                    payload = answer.body
                else:
                    content = answer.content(body) if callable(answer.content) else answer.content
                    text = content if isinstance(content, str) else json.dumps(content)
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion",
                            "model": body.get("model"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop",
                                }
                            ],
                        }
                    ).encode("utf-8")
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def start(self) -> FakeChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def user_prompts(self) -> list[str]:
        return [r["body"]["messages"][-1]["content"] for r in self.requests]
