"""The MiniLM encoder layers as an ONNX graph, written straight from the numpy weights (no torch, no onnx).

onnxruntime runs a model given as serialised ONNX bytes. Exporting one needs torch and the ``onnx``
package; the graph of a BERT encoder is small enough to write here instead, with a minimal protobuf
encoder for the handful of ONNX messages it uses. It is built in memory when the model loads, from the
same safetensors weights the numpy path uses, so there is no export step, no file and no cache.

The graph covers the encoder layers only: inputs ``hidden`` (N x 384, the embedding output of B
sequences of length L, N = B*L), ``bias`` (B x 1 x 1 x L, 0 or a large negative per key) and
``heads`` (the int64 shape [B, L, 3, 12, 32]); output ``out`` (N x 384). Embedding lookup and mean
pooling stay in numpy (cheap gathers and sums).

With ``quantized`` matrices the four weight products of each layer run in integer arithmetic: each
input row (one word piece) is divided by the matrix's smoothing vector, scaled to int8 by its own
largest value and multiplied by the int8 weights (``MatMulIntegerToFloat``), and the result is scaled
back by the row's and the column's scales. A row's scale depends on that row alone, so a text's vector
does not depend on the texts batched with it.

The products are exact on every CPU, so the vectors are the same everywhere. onnxruntime's uint8 × int8
kernels on x86 without VNNI add pairs of products in saturating 16-bit integers: errors of 10^5 in a
product of random int8 matrices (measured on AVX2), and the encoder's vectors at cosine 0.954 against
the float encoder's. There the weights go in as uint8 with the zero point 128 (``signed_weights``
False), which onnxruntime multiplies exactly on every CPU; where its uint8 × int8 kernels are exact
(``exact_signed_products`` tries a product built to saturate them; x86 with VNNI is such a CPU) the
weights stay int8, whose kernels are the faster there. Both forms give the same integers, hence the
same vectors.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from hermes_memory.tier3.minilm_embedder import _Layer

_OPSET = 17  # LayerNormalization arrived in opset 17
_IR_VERSION = 8
_FLOAT = 1
_UINT8 = 2
_INT8 = 3
_INT64 = 7
_TYPES = {
    np.dtype(t): code
    for t, code in ((np.float32, _FLOAT), (np.uint8, _UINT8), (np.int8, _INT8), (np.int64, _INT64))
}
# The weight products of a layer, by the field of ``_Layer`` that holds the float matrix.
WEIGHT_FIELDS = ("qkv_w", "attn_out_w", "ffn_in_w", "ffn_out_w")


@dataclass(frozen=True, slots=True)
class QuantMatrix:
    """A weight matrix for integer products: ``weights`` int8 (in x out) with one float scale per output
    column (``scale``), to be applied to inputs divided channel by channel by ``smoothing`` (in,)."""

    weights: npt.NDArray[np.int8]
    scale: npt.NDArray[np.float32]
    smoothing: npt.NDArray[np.float32]


_ATTR_FLOAT = 1
_ATTR_INT = 2
_ATTR_INTS = 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as ten bytes, as protobuf does
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


def _attr_int(name: str, value: int) -> bytes:
    return _str(1, name) + _int(3, value) + _int(20, _ATTR_INT)


def _attr_float(name: str, value: float) -> bytes:
    return _str(1, name) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, _ATTR_FLOAT)


def _attr_ints(name: str, values: Sequence[int]) -> bytes:
    return _str(1, name) + b"".join(_int(8, v) for v in values) + _int(20, _ATTR_INTS)


def _node(op: str, inputs: Sequence[str], outputs: Sequence[str], *attrs: bytes, domain: str = "") -> bytes:
    body = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
    body += _str(3, outputs[0]) + _str(4, op) + b"".join(_bytes(5, a) for a in attrs)
    return _bytes(1, body + (_str(7, domain) if domain else b""))


def _tensor(name: str, array: npt.NDArray[Any]) -> list[bytes | memoryview]:
    """A graph initialiser as pieces to join, the weights as a view: 42 MB are copied once, at the end."""
    data_type = _TYPES.get(array.dtype)
    if data_type is None:
        raise TypeError(f"graph initialiser {name!r} has unsupported dtype {array.dtype}")
    raw = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False)).data.cast("B")
    head = b"".join(_int(1, d) for d in array.shape) + _int(2, data_type) + _str(8, name)
    head += _varint(9 << 3 | 2) + _varint(raw.nbytes)
    return [_varint(5 << 3 | 2) + _varint(len(head) + raw.nbytes) + head, raw]


def _value_info(field: int, name: str, elem_type: int, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(field, _str(1, name) + _bytes(2, _bytes(1, tensor_type)))


def _integer_product(x: str, w: str, out: str, signed_weights: bool) -> list[bytes]:
    """``out = x @ w`` for the ``QuantMatrix`` stored by ``_integer_weights`` as ``w_q``, ``w_s`` and
    ``w_inv`` (see the module docstring): each row divided by its largest value, then symmetric int8
    carried as uint8 with the fixed zero point 128 (the weights too unless ``signed_weights``); the
    product is scaled back by 1/127, the columns' scales and the row's value."""
    return [
        _node("Mul", [x, w + "_inv"], [out + "_x"]),
        _node("Abs", [out + "_x"], [out + "_abs"]),
        _node("ReduceMax", [out + "_abs"], [out + "_max"], _attr_ints("axes", [1]), _attr_int("keepdims", 1)),
        _node("Max", [out + "_max", "tiny"], [out + "_m"]),  # an all-zero row divides by 1e-12, not 0
        _node("Div", [out + "_x", out + "_m"], [out + "_r"]),  # each row within [-1, 1]
        _node("QuantizeLinear", [out + "_r", "inv127", "zp128"], [out + "_q"]),  # round(127 r) + 128
        _node(
            "MatMulIntegerToFloat",
            [out + "_q", w + "_q", "inv127", w + "_s", "zp128", *([] if signed_weights else ["zp128"])],
            [out + "_f"],
            domain="com.microsoft",  # onnxruntime's: the integer product scaled back to float in one op
        ),
        _node("Mul", [out + "_f", out + "_m"], [out]),
    ]


# The constants ``_integer_product`` reads.
_INTEGER_CONSTANTS: tuple[tuple[str, npt.NDArray[Any]], ...] = (
    ("inv127", np.array(1.0 / 127.0, dtype=np.float32)),
    ("tiny", np.array(1e-12, dtype=np.float32)),
    ("zp128", np.array(128, dtype=np.uint8)),
)


def _integer_weights(name: str, matrix: QuantMatrix, signed_weights: bool) -> list[bytes | memoryview]:
    """The initialisers of ``_integer_product``: the weights (int8, or uint8 as int8 + 128: see the module
    docstring), their columns' scales and the inverse of the smoothing."""
    carried = matrix.weights if signed_weights else (matrix.weights.astype(np.int16) + 128).astype(np.uint8)
    return [
        *_tensor(name + "_q", carried),
        *_tensor(name + "_s", matrix.scale),
        *_tensor(name + "_inv", (1.0 / matrix.smoothing).astype(np.float32)),
    ]


def _product(x: str, w: str, out: str, integer: bool, signed_weights: bool) -> list[bytes]:
    return _integer_product(x, w, out, signed_weights) if integer else [_node("MatMul", [x, w], [out])]


def encoder_graph(
    layers: Sequence[_Layer],
    dim: int,
    heads: int,
    eps: float,
    quantized: Sequence[Mapping[str, QuantMatrix]] | None = None,
    signed_weights: bool = False,
) -> bytes:
    """Serialised ONNX model of the encoder layers (see the module docstring for its inputs).

    ``quantized``, one mapping per layer from a ``WEIGHT_FIELDS`` name to its ``QuantMatrix``: those
    products run in integers and the layer's float matrix of that name is not read; ``signed_weights``:
    their weights go in as int8 (only where ``exact_signed_products``), else as uint8.
    """
    if quantized is not None and len(quantized) != len(layers):
        raise ValueError(f"{len(quantized)} quantized layers for {len(layers)} layers")
    head_dim = dim // heads
    nodes: list[bytes] = []
    inits: list[bytes | memoryview] = []
    constants: list[tuple[str, npt.NDArray[Any]]] = [
        ("flat", np.array([-1, dim], dtype=np.int64)),
        ("scale", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32)),
        ("half", np.array(0.5, dtype=np.float32)),
        ("one", np.array(1.0, dtype=np.float32)),
        ("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32)),
        *((f"idx{i}", np.array(i, dtype=np.int64)) for i in range(3)),
        *_INTEGER_CONSTANTS,
    ]
    for name, value in constants:
        inits += _tensor(name, value)
    x = "hidden"
    for n, layer in enumerate(layers):
        p = f"l{n}_"
        integer = quantized[n] if quantized is not None else {}

        for field, matrix in integer.items():
            inits += _integer_weights(p + field, matrix, signed_weights)
        for field in (
            "qkv_w",
            "qkv_b",
            "attn_out_w",
            "attn_out_b",
            "attn_ln_w",
            "attn_ln_b",
            "ffn_in_w",
            "ffn_in_b",
            "ffn_out_w",
            "ffn_out_b",
            "ffn_ln_w",
            "ffn_ln_b",
        ):
            if field not in integer:
                inits += _tensor(p + field, getattr(layer, field))
        nodes += [
            *_product(x, p + "qkv_w", p + "qkv_mm", "qkv_w" in integer, signed_weights),
            _node("Add", [p + "qkv_mm", p + "qkv_b"], [p + "qkv"]),
            _node("Reshape", [p + "qkv", "heads"], [p + "qkv5"]),
            _node("Transpose", [p + "qkv5"], [p + "qkvT"], _attr_ints("perm", [2, 0, 3, 1, 4])),
            _node("Gather", [p + "qkvT", "idx0"], [p + "q"], _attr_int("axis", 0)),
            _node("Gather", [p + "qkvT", "idx1"], [p + "k"], _attr_int("axis", 0)),
            _node("Gather", [p + "qkvT", "idx2"], [p + "v"], _attr_int("axis", 0)),
            _node("Transpose", [p + "k"], [p + "kT"], _attr_ints("perm", [0, 1, 3, 2])),
            _node("MatMul", [p + "q", p + "kT"], [p + "qk"]),
            _node("Mul", [p + "qk", "scale"], [p + "scaled"]),
            _node("Add", [p + "scaled", "bias"], [p + "masked"]),
            _node("Softmax", [p + "masked"], [p + "probs"], _attr_int("axis", 3)),
            _node("MatMul", [p + "probs", p + "v"], [p + "ctx4"]),
            _node("Transpose", [p + "ctx4"], [p + "ctxT"], _attr_ints("perm", [0, 2, 1, 3])),
            _node("Reshape", [p + "ctxT", "flat"], [p + "ctx"]),
            *_product(p + "ctx", p + "attn_out_w", p + "ao_mm", "attn_out_w" in integer, signed_weights),
            _node("Add", [p + "ao_mm", p + "attn_out_b"], [p + "ao"]),
            _node("Add", [p + "ao", x], [p + "res1"]),
            _node(
                "LayerNormalization",
                [p + "res1", p + "attn_ln_w", p + "attn_ln_b"],
                [p + "h1"],
                _attr_int("axis", 1),
                _attr_float("epsilon", eps),
            ),
            *_product(p + "h1", p + "ffn_in_w", p + "fi_mm", "ffn_in_w" in integer, signed_weights),
            _node("Add", [p + "fi_mm", p + "ffn_in_b"], [p + "fi"]),
            # exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)); onnxruntime fuses the pattern
            _node("Mul", [p + "fi", "inv_sqrt2"], [p + "g0"]),
            _node("Erf", [p + "g0"], [p + "g1"]),
            _node("Add", [p + "g1", "one"], [p + "g2"]),
            _node("Mul", [p + "fi", p + "g2"], [p + "g3"]),
            _node("Mul", [p + "g3", "half"], [p + "gelu"]),
            *_product(p + "gelu", p + "ffn_out_w", p + "fo_mm", "ffn_out_w" in integer, signed_weights),
            _node("Add", [p + "fo_mm", p + "ffn_out_b"], [p + "fo"]),
            _node("Add", [p + "fo", p + "h1"], [p + "res2"]),
            _node(
                "LayerNormalization",
                [p + "res2", p + "ffn_ln_w", p + "ffn_ln_b"],
                [p + "out"],
                _attr_int("axis", 1),
                _attr_float("epsilon", eps),
            ),
        ]
        x = p + "out"
    nodes.append(_node("Identity", [x], ["out"]))
    inputs: list[tuple[str, int, list[int | str]]] = [
        ("hidden", _FLOAT, ["N", dim]), ("bias", _FLOAT, ["B", 1, 1, "L"]), ("heads", _INT64, [5])
    ]  # fmt: skip
    return _model("minilm_encoder", nodes, inits, inputs, ["N", dim])


def product_graph(matrix: QuantMatrix, signed_weights: bool) -> bytes:
    """One integer product alone as a model: input ``x`` (N x in, float), output ``out`` (N x out), the
    arithmetic of every integer product of the encoder, its weights as int8 or as uint8."""
    rows, columns = matrix.weights.shape
    inits = [part for name, value in _INTEGER_CONSTANTS for part in _tensor(name, value)]
    inits += _integer_weights("w", matrix, signed_weights)
    nodes = _integer_product("x", "w", "out", signed_weights)
    return _model("product", nodes, inits, [("x", _FLOAT, ["N", rows])], ["N", columns])


def exact_product(session: Any, matrix: QuantMatrix, x: npt.NDArray[np.float32]) -> bool:
    """Whether ``session`` (a ``product_graph`` of ``matrix``) gives the exact product of ``x``: each row
    quantized as the graph does, multiplied in int64, scaled back (float32 rounding allowed)."""
    (got,) = session.run(["out"], {"x": x})
    smoothed = x * (1.0 / matrix.smoothing)
    largest = np.maximum(np.abs(smoothed).max(axis=1, keepdims=True), 1e-12)
    levels = np.rint(smoothed / largest * 127.0).astype(np.int64)
    exact = (levels @ matrix.weights.astype(np.int64)) * (matrix.scale / 127.0) * largest
    return bool(np.allclose(got, exact, rtol=1e-5, atol=1e-4 * float(np.abs(exact).max())))


def exact_signed_products(session_of: Callable[[bytes], Any]) -> bool:
    """Whether onnxruntime multiplies uint8 by int8 weights exactly on this CPU: a product built to
    saturate 16-bit sums of pairs (every input and weight at full range) and a random one, each run by
    ``session_of(graph)``."""
    rng = np.random.default_rng(0)
    full = QuantMatrix(np.full((64, 16), 127, np.int8), np.ones(16, np.float32), np.ones(64, np.float32))
    mixed = QuantMatrix(rng.integers(-127, 128, (64, 16)).astype(np.int8), full.scale, full.smoothing)
    x = np.vstack([np.ones((1, 64), np.float32), rng.standard_normal((7, 64)).astype(np.float32)])
    return all(exact_product(session_of(product_graph(m, True)), m, x) for m in (full, mixed))


def _model(
    name: str,
    nodes: Sequence[bytes],
    inits: Sequence[bytes | memoryview],
    inputs: Sequence[tuple[str, int, Sequence[int | str]]],
    out_shape: Sequence[int | str],
) -> bytes:
    """A serialised ONNX model of these nodes and initialisers, its float output named ``out``."""
    graph: list[bytes | memoryview] = [*nodes, _str(2, name), *inits]
    graph += [_value_info(11, input_name, elem_type, dims) for input_name, elem_type, dims in inputs]
    graph.append(_value_info(12, "out", _FLOAT, out_shape))
    graph_len = sum(part.nbytes if isinstance(part, memoryview) else len(part) for part in graph)
    opset = _bytes(8, _str(1, "") + _int(2, _OPSET)) + _bytes(8, _str(1, "com.microsoft") + _int(2, 1))
    head = _int(1, _IR_VERSION) + _str(2, "hermes-memory") + opset + _varint(7 << 3 | 2) + _varint(graph_len)
    return b"".join([head, *graph])


__all__ = [
    "WEIGHT_FIELDS",
    "QuantMatrix",
    "encoder_graph",
    "exact_product",
    "exact_signed_products",
    "product_graph",
]
