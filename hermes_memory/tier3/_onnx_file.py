"""Read named initializers (weights) out of an ONNX file without the ``onnx`` package.

An ONNX file is one protobuf ``ModelProto``: its ``graph`` (field 7) holds ``initializer`` tensors
(field 5), each a ``TensorProto`` with ``dims`` (1), ``data_type`` (2), ``name`` (8) and ``raw_data``
(9). Only those fields are read; everything else is skipped by its length, so finding a tensor in a
23 MB file costs a few ms and the tensor comes back as a read-only view of the mapped file.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import EmbeddingError

# TensorProto.DataType codes of the tensors read here.
_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype("<f4"), 2: np.dtype("u1"), 3: np.dtype("i1"), 7: np.dtype("<i8"),
}  # fmt: skip
_GRAPH, _INITIALIZER = 7, 5
_DIMS, _DATA_TYPE, _NAME, _RAW_DATA = 1, 2, 8, 9
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(buf: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value or start, end) of each field in ``buf[start:end]``."""
    i = start
    while i < end:
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, i = _varint(buf, i)
            yield field, wire, value, i
        elif wire == _LEN:
            size, i = _varint(buf, i)
            if i + size > end:
                raise ValueError(f"field {field} runs past its message")
            yield field, wire, i, i + size
            i += size
        elif wire == _I64:
            i += 8
        elif wire == _I32:
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


class OnnxInitializers:
    """The initializers of one ONNX file, by name (the file is mapped read-only, never copied whole).

    Raises EmbeddingError (constructor) when the file cannot be read or is not a well-formed model.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with path.open("rb") as fh:
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot read the ONNX model {path}: {exc}") from exc
        buf = memoryview(self._map)
        self._tensors: dict[str, tuple[int, list[int], int, int]] = {}
        try:
            for field, wire, start, end in _fields(buf, 0, len(buf)):
                if field == _GRAPH and wire == _LEN:
                    for item, kind, begin, stop in _fields(buf, start, end):
                        if item == _INITIALIZER and kind == _LEN:
                            self._index(buf, begin, stop)
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            raise EmbeddingError(f"{path} is not a well-formed ONNX model: {exc}") from exc

    def _index(self, buf: memoryview, start: int, end: int) -> None:
        dims: list[int] = []
        name, dtype, raw = "", -1, (0, 0)
        for field, wire, value, stop in _fields(buf, start, end):
            if field == _DIMS and wire == _VARINT:
                dims.append(value)
            elif field == _DIMS and wire == _LEN:  # packed
                i = value
                while i < stop:
                    dim, i = _varint(buf, i)
                    dims.append(dim)
            elif field == _DATA_TYPE and wire == _VARINT:
                dtype = value
            elif field == _NAME and wire == _LEN:
                name = bytes(buf[value:stop]).decode("utf-8")
            elif field == _RAW_DATA and wire == _LEN:
                raw = (value, stop)
        self._tensors[name] = (dtype, dims, *raw)

    @property
    def names(self) -> list[str]:
        """The initializers' names, in the file's order."""
        return list(self._tensors)

    def read(self, name: str) -> npt.NDArray[Any]:
        """The tensor ``name`` as a read-only array over the mapped file.

        Raises EmbeddingError when it is absent, of a type not read here, or its bytes do not fit its shape.
        """
        spec = self._tensors.get(name)
        if spec is None:
            raise EmbeddingError(f"{self.path}: no initializer {name!r}")
        code, dims, start, end = spec
        dtype = _DTYPES.get(code)
        if dtype is None:
            raise EmbeddingError(f"{self.path}: initializer {name!r} has unsupported data type {code}")
        count = int(np.prod(dims)) if dims else 1
        if end - start != count * dtype.itemsize:
            raise EmbeddingError(f"{self.path}: initializer {name!r} does not hold {dims} raw values")
        return np.frombuffer(self._map, dtype=dtype, count=count, offset=start).reshape(dims)


__all__ = ["OnnxInitializers"]
