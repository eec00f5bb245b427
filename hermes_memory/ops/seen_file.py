"""The file behind the memory browser's "What the agent saw" (``hermes.seen`` appends to it, a forget
scrubs it): JSON lines, one record each. Several processes share it: every rewrite holds an exclusive
``flock`` on a sidecar lock file and replaces the file atomically (a temp file written and fsynced,
renamed over the file, the directory fsynced), so a crash leaves the old file or the new one whole.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_memory._fsync import fsync_dir
from hermes_memory.security.permissions import private_dir, private_opener, tighten


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the file's exclusive lock (every writer of it takes this one). Raises OSError."""
    private_dir(path.parent)
    with open(path.with_name(path.name + ".lock"), "a", opener=private_opener) as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def rewrite(path: Path, lines: Sequence[str], *, durable: bool = True) -> None:
    """Replace the file with ``lines`` (each ends with a newline); call under ``locked``. ``durable``:
    the new file survives a power loss (a scrub must; a new record may be lost, and is not worth an
    fsync on every turn). Raises OSError."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temp, "w", encoding="utf-8", opener=private_opener) as fh:
        fh.write("".join(lines))
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(temp, path)
    tighten(path)
    if durable:
        fsync_dir(path.parent)


def scrub(
    path: Path,
    *,
    terms: Sequence[str],
    texts: Sequence[str],
    scope: str | None,
    matches: Callable[[str], bool] | None = None,
) -> int:
    """Drop every record whose text or served query mentions one of ``terms`` (whole words, any case,
    as forget matches), contains one of ``texts`` (a forgotten record's text, any case and spacing),
    ``matches`` (an erasure's hashed words, ``ops.erasure_words``) or was kept for ``scope``; also every
    line that is not a record, and temp files a killed rewrite left.
    Returns how many lines were dropped; nothing is written when none is. Raises OSError."""
    from hermes_memory.ops.forget import mention_pattern

    pattern = mention_pattern(terms) if any(t.strip() for t in terms) else None
    needles = [n for n in (_folded(t) for t in texts) if n]
    if not path.exists():
        return 0
    with locked(path):
        for stale in path.parent.glob(f".{path.name}.*.tmp"):
            stale.unlink(missing_ok=True)  # under the lock no rewrite is under way: a killed one's copy
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        kept = [line for line in lines if not _drops(line, pattern, needles, scope, matches)]
        if len(kept) != len(lines):
            rewrite(path, kept)
    return len(lines) - len(kept)


def _drops(
    line: str,
    pattern: re.Pattern[str] | None,
    needles: list[str],
    scope: str | None,
    matches: Callable[[str], bool] | None,
) -> bool:
    try:
        record: Any = json.loads(line)
        said = f"{record['served']}\n{record['text']}"
    except (ValueError, KeyError, TypeError):
        return bool(line.strip())  # not a record (a torn write): it is never shown, and may quote a name
    if scope is not None and record.get("scope") == scope:
        return True
    if pattern is not None and pattern.search(said):
        return True
    if matches is not None and matches(said):
        return True
    folded = _folded(said)
    return any(n in folded for n in needles)


def _folded(text: str) -> str:
    return " ".join(str(text).split()).casefold()


__all__ = ["locked", "rewrite", "scrub"]
