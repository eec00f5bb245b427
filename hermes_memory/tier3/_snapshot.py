"""The exact index's snapshot file: its arrays as they are in memory, so a cold process maps them instead
of reading every vector of Tier 2 (at 259k vectors: ~7 s from SQLite, a fraction of a second mapped).

A snapshot is a cache, never the truth. The file is checked whole when opened (magic, format version,
its size, a CRC-32 of the header and of every section) and then by the index against the store it is
about to serve (``ExactIndex``: model, dim, the store's identity, the change-feed marks it was written
at and a fingerprint of the store at those marks), and caught up from the change feed like any
index; a file failing any check is ignored (the index loads from Tier 2) and replaced by the next write.

Layout: ``MAGIC``, the header's length (uint64 LE), its CRC-32 (uint32 LE), 4 bytes of padding, the
header (UTF-8 JSON: the index's metadata and each section's dtype, shape, offset and CRC-32), then the
sections at ``ALIGN``-byte offsets. Opened copy-on-write (``mmap.ACCESS_COPY``): arrays are views of the
mapping, pages are read on first touch, a write to one (the index growing in place) stays private to
the process, and the file never changes after its rename.

Writes go to a temp file created 0600 in the same folder and are renamed over the snapshot: a reader
sees the old file or the new one, whole; several processes may write, the last rename wins. No fsync:
a file a crash left short or zeroed fails its size or CRC check and is ignored.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import secrets
import struct
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from hermes_memory.security.permissions import FILE_MODE, private_dir

if TYPE_CHECKING:  # numpy is imported where used: a read that touches no vector never loads it
    import numpy.typing as npt


MAGIC = b"HMXSNAP\x00"
FORMAT = 2
ALIGN = 64
_PREFIX = struct.Struct("<8sQI4x")
# The dtypes a section may have (anything else in a header is a foreign or corrupt file).
_DTYPES = frozenset(("|i1", "|b1", "<u8", "<i8", "<i4", "<f4", "<f8"))
_SUFFIX = ".snapshot"
_TEMP = ".tmp"


class SnapshotError(Exception):
    """A snapshot file that cannot be used (missing parts, corrupt, foreign or of another format)."""


def snapshot_path(folder: Path, model_id: str) -> Path:
    """The snapshot of ``model_id``'s exact index in the store's tier3 ``folder``."""
    digest = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:16]
    return folder / f"exact-{digest}{_SUFFIX}"


def remove_snapshots(folder: Path) -> int:
    """Delete every exact-index snapshot (and temp file of one) in ``folder``; returns how many went.

    Raises OSError when one cannot be removed."""
    if not folder.is_dir():
        return 0
    gone = 0
    for path in sorted(folder.glob(f"exact-*{_SUFFIX}")) + sorted(folder.glob(f".exact-*{_SUFFIX}.*{_TEMP}")):
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # another process removed or replaced it meanwhile
        gone += 1
    return gone


Sections: TypeAlias = "Mapping[str, tuple[str, tuple[int, ...], Iterable[npt.NDArray[Any]]]]"


def write(path: Path, meta: Mapping[str, Any], sections: Sections) -> int:
    """Write a snapshot of ``meta`` (JSON-able) and ``sections`` (name -> dtype, shape, the array parts
    in order) to ``path`` atomically; returns the file's size. Raises OSError (the temp file is removed)."""
    import numpy as np

    layout: list[dict[str, Any]] = []
    offset = 0
    for name, (dtype, shape, _) in sections.items():
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        layout.append({"name": name, "dtype": np.dtype(dtype).str, "shape": list(shape), "offset": offset,
                       "nbytes": nbytes, "crc": 0})  # fmt: skip
        offset += -(-nbytes // ALIGN) * ALIGN
    # CRCs are known only after the data is written: the header is written last, at a reserved size.
    crcs = [0] * len(layout)
    private_dir(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMP}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            reserve = len(_header(meta, layout, 0)) + 32 * len(layout) + 64  # room for CRCs and the size
            start = -(-(_PREFIX.size + reserve) // ALIGN) * ALIGN
            fh.seek(start)
            for i, (name, (dtype, _, parts)) in enumerate(sections.items()):
                crc, written = 0, 0
                for part in parts:
                    data = np.ascontiguousarray(part, dtype=dtype).data.cast("B")
                    crc = zlib.crc32(data, crc)
                    fh.write(data)
                    written += len(data)
                if written != layout[i]["nbytes"]:
                    expected = layout[i]["nbytes"]
                    raise ValueError(f"snapshot section {name} has {written} bytes, expected {expected}")
                crcs[i] = crc
                fh.write(b"\x00" * (-written % ALIGN))
            size = fh.tell()
            for entry, crc in zip(layout, crcs, strict=True):
                entry["crc"] = crc
                entry["offset"] += start
            header = _header(meta, layout, size)
            if _PREFIX.size + len(header) > start:
                raise ValueError("snapshot header outgrew its reserved room")
            fh.seek(0)
            fh.write(_PREFIX.pack(MAGIC, len(header), zlib.crc32(header)))
            fh.write(header)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return size


def _header(meta: Mapping[str, Any], layout: list[dict[str, Any]], size: int) -> bytes:
    doc = {"format": FORMAT, "size": size, "meta": meta, "sections": layout}
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


def read(path: Path) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """The metadata and sections (writable copy-on-write views) of the snapshot at ``path``, every
    section's CRC checked. Raises FileNotFoundError when there is none, SnapshotError when it is not a
    whole snapshot of this format, OSError when it cannot be read."""
    import numpy as np

    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        prefix = fh.read(_PREFIX.size)
        if len(prefix) != _PREFIX.size:
            raise SnapshotError(f"{path} is too short to be a snapshot ({size} bytes)")
        magic, length, crc = _PREFIX.unpack(prefix)
        if magic != MAGIC:
            raise SnapshotError(f"{path} is not an exact-index snapshot")
        if length > size - _PREFIX.size:
            raise SnapshotError(f"{path} is truncated (header of {length} bytes, file of {size})")
        header = fh.read(length)
        if zlib.crc32(header) != crc:
            raise SnapshotError(f"{path}: the header's checksum does not match")
        try:
            doc = json.loads(header)
        except ValueError as exc:
            raise SnapshotError(f"{path}: unreadable header ({exc})") from exc
        version = doc.get("format") if isinstance(doc, dict) else None
        if version != FORMAT:
            raise SnapshotError(f"{path}: snapshot format {version!r}, this version reads {FORMAT}")
        if doc.get("size") != size:
            raise SnapshotError(f"{path} has {size} bytes, its header says {doc.get('size')}")
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    sections: dict[str, npt.NDArray[Any]] = {}
    try:
        for entry in doc["sections"]:
            name, dtype = str(entry["name"]), str(entry["dtype"])
            shape = tuple(int(s) for s in entry["shape"])
            offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
            if dtype not in _DTYPES or any(s < 0 for s in shape):
                raise SnapshotError(f"{path}: section {name} has a bad dtype or shape")
            count = int(np.prod(shape, dtype=np.int64))
            if count * np.dtype(dtype).itemsize != nbytes or offset < 0 or offset + nbytes > size:
                raise SnapshotError(f"{path}: section {name} does not fit the file")
            if zlib.crc32(memoryview(mapped)[offset : offset + nbytes]) != int(entry["crc"]):
                raise SnapshotError(f"{path}: section {name}'s checksum does not match")
            sections[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"{path}: malformed section table ({exc!r})") from exc
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise SnapshotError(f"{path}: no metadata")
    return meta, sections


__all__ = ["FORMAT", "SnapshotError", "read", "remove_snapshots", "snapshot_path", "write"]
