"""The LLM seam: a ``LLMClient`` protocol (HAEMA's ``generate_structured``) and one implementation for any
OpenAI-compatible ``/v1/chat/completions`` endpoint over the standard library (no new dependency).

The LLM is optional everywhere in hermes-memory: callers treat every ``LLMError`` as "fall back to the
rule-based result", so a client only has to say *whether* a failure is worth retrying.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol, runtime_checkable

from hermes_memory.errors import BackendError, ConfigError

JSONSchema = dict[str, Any]

# A reply bigger than this is not a structured answer to our prompts; refuse it instead of buffering it.
MAX_REPLY_BYTES = 4 * 1024 * 1024
_READ_CHUNK = 64 * 1024
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


class LLMError(BackendError):
    """An LLM call failed. ``kind`` says how; ``retryable`` whether asking again may help.

    Kinds: "timeout", "connection", "http", "reply" (not a JSON object), "schema" (valid JSON of the
    wrong shape, after refinement), "config" (e.g. the API key variable is unset), "client" (a
    third-party client raised something else).
    """

    def __init__(self, message: str, *, kind: str, retryable: bool):
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable


@runtime_checkable
class LLMClient(Protocol):
    """Structured output from a language model (HAEMA's adapter contract).

    ``response_model`` is a JSON schema (a dict) or a class with ``model_json_schema()`` (pydantic).
    Returns the parsed JSON object; the caller validates it. Provider failures are raised, preferably
    as ``LLMError`` (anything else is treated as a retryable client failure).
    """

    def generate_structured(
        self, system: str, user: str, response_model: type[Any] | JSONSchema
    ) -> dict[str, Any]: ...


def schema_of(response_model: type[Any] | JSONSchema) -> JSONSchema:
    """The JSON schema of a response model: the dict itself, or ``model_json_schema()`` of a class.

    Raises ConfigError for anything else (a programming error, not an LLM failure).
    """
    if isinstance(response_model, dict):
        return response_model
    build = getattr(response_model, "model_json_schema", None)
    if callable(build):
        schema = build()
        if isinstance(schema, dict):
            return schema
    raise ConfigError(
        "response_model must be a JSON schema dict or a class with model_json_schema(), "
        f"got {response_model!r}"
    )


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's reply (a ```json fence around it is tolerated).

    Raises LLMError(kind="reply") when the text is not one JSON object.
    """
    fenced = _FENCE.match(text)
    body = fenced.group("body") if fenced else text
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMError(
            f"the reply is not valid JSON ({exc.msg} at {exc.pos})", kind="reply", retryable=True
        ) from exc
    if not isinstance(value, dict):
        raise LLMError(
            f"the reply is JSON but not an object (got {type(value).__name__})", kind="reply", retryable=True
        )
    return value


def chat_completions_url(base_url: str) -> str:
    """The chat-completions endpoint of a base URL: ``http://h:p`` and ``http://h:p/v1`` both work.

    Raises ConfigError for a URL that is not http(s).
    """
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"config key 'llm.base_url' must be an http(s) URL, got {base_url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class OpenAICompatibleClient:
    """``LLMClient`` for an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp,
    Ollama's /v1, LM Studio...), asking for JSON output (``response_format: json_object``) with the
    schema spelled out in the system prompt, which every such server understands.

    The API key is read from the environment variable *named* by ``api_key_env`` at call time, so the
    key never sits in a config file; ``api_key`` (a value held in memory only, e.g. the key Hermes
    itself is configured with) takes precedence. ``timeout_s`` bounds connecting and every read, and the whole
    reply is read against a deadline of the same length. Raises ConfigError for a bad URL or model.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 20.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ):
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"config key 'llm.model' must be a non-empty string, got {model!r}")
        if not timeout_s > 0:
            raise ConfigError(f"config key 'llm.timeout_s' must be > 0, got {timeout_s!r}")
        self.url = chat_completions_url(base_url)
        self.model = model.strip()
        self.api_key_env = api_key_env
        self._api_key = api_key
        self.timeout_s = float(timeout_s)
        self.temperature = temperature
        self.max_tokens = max_tokens

    def generate_structured(
        self, system: str, user: str, response_model: type[Any] | JSONSchema
    ) -> dict[str, Any]:
        """One chat-completions request; the reply's JSON object.

        Raises LLMError: "timeout"/"connection" and HTTP 408/429/5xx are retryable, other HTTP
        statuses and a missing API key are not, a malformed reply is ("reply").
        """
        schema = schema_of(response_model)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": f"{system}\n\n{_schema_instruction(schema)}"},
                {"role": "user", "content": user},
            ],
            "temperature": self.temperature,
            "response_format": {"type": "json_object"},
            "stream": False,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        raw = self._post(json.dumps(body, ensure_ascii=False).encode("utf-8"))
        return parse_json_object(_message_content(raw))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        elif self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise LLMError(
                    f"the environment variable {self.api_key_env!r} (llm.api_key_env) is not set",
                    kind="config",
                    retryable=False,
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, data: bytes) -> bytes:
        request = urllib.request.Request(self.url, data=data, headers=self._headers(), method="POST")
        deadline = time.monotonic() + self.timeout_s
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return _read_bounded(response, deadline, self.timeout_s)
        except urllib.error.HTTPError as exc:
            status = exc.code
            detail = _error_detail(exc)
            exc.close()
            raise LLMError(
                f"{self.url} answered HTTP {status}{detail}",
                kind="http",
                retryable=status in (408, 409, 425, 429) or status >= 500,
            ) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise LLMError(
                    f"{self.url} timed out after {self.timeout_s:g}s", kind="timeout", retryable=True
                ) from exc
            raise LLMError(
                f"cannot reach {self.url}: {exc.reason}", kind="connection", retryable=True
            ) from exc
        except TimeoutError as exc:  # socket.timeout is TimeoutError since 3.10; also our read deadline
            raise LLMError(
                f"{self.url} timed out after {self.timeout_s:g}s", kind="timeout", retryable=True
            ) from exc
        except (OSError, http.client.HTTPException) as exc:  # reset mid-way, a garbled status line, ...
            raise LLMError(f"cannot reach {self.url}: {exc}", kind="connection", retryable=True) from exc


def _read_bounded(response: Any, deadline: float, timeout_s: float) -> bytes:
    # A server that trickles bytes would defeat a per-read socket timeout; check a total deadline too.
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"reply not complete after {timeout_s:g}s")
        chunk = response.read(_READ_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise LLMError(f"the reply exceeds {MAX_REPLY_BYTES} bytes", kind="reply", retryable=False)
        chunks.append(chunk)


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(500).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f": {text}" if text else ""


def _message_content(raw: bytes) -> str:
    """The assistant message text of a chat-completions response; LLMError(kind="reply") otherwise."""
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LLMError("the server's response is not JSON", kind="reply", retryable=True) from exc
    try:
        choice = payload["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError(
            "the server's response has no choices[0].message.content", kind="reply", retryable=True
        ) from exc
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        raise LLMError("the model returned an empty message", kind="reply", retryable=True)
    if choice.get("finish_reason") == "length":
        raise LLMError("the model's reply was cut off (finish_reason=length)", kind="reply", retryable=True)
    return content


def _schema_instruction(schema: JSONSchema) -> str:
    return (
        "Reply with exactly one JSON object and nothing else (no prose, no code fence). "
        "It must validate against this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False, sort_keys=True)
    )


def client_from_config(
    base_url: str | None, model: str | None, *, api_key_env: str | None, timeout_s: float
) -> OpenAICompatibleClient:
    """The configured OpenAI-compatible client. Raises ConfigError when base_url or model is missing."""
    if not base_url:
        raise ConfigError("config key 'llm.base_url' must be set when llm.enabled is true")
    if not model:
        raise ConfigError("config key 'llm.model' must be set when llm.enabled is true")
    return OpenAICompatibleClient(base_url, model, api_key_env=api_key_env, timeout_s=timeout_s)


__all__ = [
    "MAX_REPLY_BYTES",
    "JSONSchema",
    "LLMClient",
    "LLMError",
    "OpenAICompatibleClient",
    "chat_completions_url",
    "client_from_config",
    "parse_json_object",
    "schema_of",
]
