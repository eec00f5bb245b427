"""Read a safetensors file (an 8-byte little-endian header length, a JSON header, raw little-endian
buffers) by tensor name, without the ``safetensors`` package: copied, or memory-mapped for large tables."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import EmbeddingError

_HEADER_LIMIT = 100 * 1024 * 1024  # a safetensors header larger than this is not a model we ship
_DTYPES: dict[str, np.dtype[Any]] = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "I64": np.dtype("<i8")}


class SafetensorsFile:
    """The tensors of one safetensors file, read or memory-mapped by name.

    Raises EmbeddingError (constructor) when the file is missing, truncated, or its header is malformed.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            size = path.stat().st_size
            with path.open("rb") as fh:
                prefix = fh.read(8)
                if len(prefix) != 8:
                    raise EmbeddingError(f"{path}: too short to be a safetensors file")
                (header_len,) = struct.unpack("<Q", prefix)
                if header_len > min(_HEADER_LIMIT, size - 8):
                    raise EmbeddingError(f"{path}: safetensors header of {header_len} bytes is implausible")
                header = json.loads(fh.read(header_len))
        except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise EmbeddingError(f"cannot read safetensors weights {path}: {exc}") from exc
        if not isinstance(header, dict):
            raise EmbeddingError(f"{path}: safetensors header is not a JSON object")
        self._data_start = 8 + header_len
        data_len = size - self._data_start
        self._specs: dict[str, tuple[np.dtype[Any], tuple[int, ...], int]] = {}
        for name, spec in header.items():
            if name == "__metadata__":
                continue
            try:
                dtype = _DTYPES[spec["dtype"]]
                shape = tuple(int(d) for d in spec["shape"])
                start, end = (int(o) for o in spec["data_offsets"])
            except (KeyError, TypeError, ValueError) as exc:
                raise EmbeddingError(f"{path}: tensor {name!r} has a malformed header entry: {exc}") from exc
            if not 0 <= start <= end <= data_len or end - start != dtype.itemsize * math.prod(shape):
                raise EmbeddingError(f"{path}: tensor {name!r} does not fit its data offsets")
            self._specs[name] = (dtype, shape, start)

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def _spec(self, name: str) -> tuple[np.dtype[Any], tuple[int, ...], int]:
        try:
            return self._specs[name]
        except KeyError as exc:
            raise EmbeddingError(f"{self.path}: no tensor {name!r}") from exc

    def read(self, name: str) -> npt.NDArray[Any]:
        """The tensor copied into memory. Raises EmbeddingError when absent or unreadable."""
        dtype, shape, start = self._spec(name)
        try:
            arr = np.fromfile(self.path, dtype=dtype, count=math.prod(shape), offset=self._data_start + start)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot read tensor {name!r} from {self.path}: {exc}") from exc
        return arr.reshape(shape)

    def mapped(self, name: str) -> npt.NDArray[Any]:
        """The tensor as a read-only memory map: only the pages used are loaded (large tables)."""
        dtype, shape, start = self._spec(name)
        try:
            return np.memmap(self.path, dtype=dtype, mode="r", offset=self._data_start + start, shape=shape)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot map tensor {name!r} from {self.path}: {exc}") from exc


__all__ = ["SafetensorsFile"]
