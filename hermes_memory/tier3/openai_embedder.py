"""An embedder for any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, LM Studio...).

Stdlib ``urllib`` only, with a bounded timeout. The API key is read from an environment variable
whose *name* is configured, at request time, so the key never sits in config files or objects.
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.request
from typing import Any

from hermes_memory.errors import BackendError, ConfigError, EmbeddingError
from hermes_memory.tier3.embedder import BaseEmbedder, Kind

# Dimensions of well-known models, so the common case needs no ``dim`` option.
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_CHARS_PER_TOKEN = 4.0  # rough average for English BPE; no tokenizer dependency


class OpenAIEmbedder(BaseEmbedder):
    """Calls ``POST {base_url}/embeddings`` in batches and validates every answer."""

    name = "openai"

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str = "https://api.openai.com/v1",
        dim: int | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 10.0,
        batch_size: int = 64,
        max_tokens: int = 8191,
        send_dimensions: bool = False,
        cache_size: int = 1024,
    ) -> None:
        if dim is None:
            dim = KNOWN_DIMS.get(model)
        if dim is None or dim <= 0:
            raise ConfigError(f"openai embedder: set 'dim' for model {model!r} (no known default)")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"openai embedder: base_url must be http(s)://..., got {base_url!r}")
        if timeout <= 0 or batch_size <= 0 or max_tokens <= 0:
            raise ConfigError("openai embedder: timeout, batch_size and max_tokens must be > 0")
        super().__init__(cache_size=cache_size)
        self._model = model
        self._url = base_url.rstrip("/") + "/embeddings"
        self._dim = dim
        self._api_key_env = api_key_env
        self._timeout = timeout
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._send_dimensions = send_dimensions
        # with send_dimensions the server shortens its vectors to dim: other vectors than the model's own
        self.model_id = f"openai/{model}" + (f"@{dim}" if send_dimensions else "")

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    @property
    def url(self) -> str:
        return self._url

    def count_tokens(self, text: str) -> int:
        """An estimate (~4 characters per token); the server's tokenizer is not available here."""
        return math.ceil(len(text) / _CHARS_PER_TOKEN)

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._request(texts[start : start + self._batch_size]))
        return rows

    def _request(self, batch: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self._model, "input": batch, "encoding_format": "float"}
        if self._send_dimensions:
            body["dimensions"] = self._dim
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self._api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(
            self._url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace")
            raise BackendError(f"embedding endpoint {self._url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise BackendError(f"embedding endpoint {self._url} is unreachable: {exc}") from exc
        return self._parse(raw, len(batch))

    def _parse(self, raw: bytes, n: int) -> list[list[float]]:
        try:
            data = json.loads(raw)["data"]
            # the API may reorder items; "index" says where each belongs
            ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
            rows = [item["embedding"] for item in ordered]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"{self._url}: malformed embeddings response: {exc}") from exc
        if len(rows) != n:
            raise EmbeddingError(f"{self._url}: asked for {n} embeddings, got {len(rows)}")
        return rows


__all__ = ["KNOWN_DIMS", "OpenAIEmbedder"]
