"""Tier 1: Hermes' curated memory files, ``MEMORY.md`` and ``USER.md``, read and written exactly as
Hermes' built-in ``memory`` tool does.

Ported from hermes-agent 0.19.0 ``tools/memory_tool.py`` (``MemoryStore``): entries are stripped,
joined by ``"\\n§\\n"`` with no trailing newline, the limit counts characters of the joined text,
duplicates are dropped on every read, replace/remove address an entry by a unique substring, writes
hold an ``fcntl.flock`` on the sidecar ``<file>.lock`` (the same lock file Hermes uses, so the two
writers exclude each other) and land by temp file + fsync + ``os.replace``, and replace/remove refuse
to rewrite a file that an outside writer left in a shape that would not round-trip (a ``.bak.<ts>``
copy is written first). Where Hermes returns ``{"success": False, ...}`` this module raises.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_memory._fsync import fsync_dir
from hermes_memory.errors import ConfigError, ConflictError, NotFoundError, StorageError, ValidationError
from hermes_memory.security.permissions import private_dir, private_opener, write_private_text
from hermes_memory.security.threats import ensure_safe
from hermes_memory.validation import shown

ENTRY_DELIMITER: Final = "\n§\n"
STORE_FILES: Final = {"memory": "MEMORY.md", "user": "USER.md"}
STORES: Final = tuple(STORE_FILES)
DEFAULT_MEMORY_CHAR_LIMIT: Final = 2200
DEFAULT_USER_CHAR_LIMIT: Final = 1375

# Width of the one-line previews listed when a substring matches several entries (Hermes: 80).
_PREVIEW_WIDTH: Final = 80


# -- Errors that carry what the caller needs to recover ------------------------------------------


class CuratedLimitError(ConflictError):
    """The write would push the store past its character limit; ``current_entries`` lets the
    caller consolidate and retry."""

    def __init__(
        self,
        message: str,
        *,
        store: str,
        current_entries: Sequence[str],
        usage_chars: int,
        limit: int,
        attempted_chars: int,
    ) -> None:
        super().__init__(message)
        self.store = store
        self.current_entries = tuple(current_entries)
        self.usage_chars = usage_chars
        self.limit = limit
        self.attempted_chars = attempted_chars


class AmbiguousMatchError(ConflictError):
    """The substring matched several distinct entries; ``matches`` lists them in full."""

    def __init__(
        self, message: str, *, store: str, matches: Sequence[str], current_entries: Sequence[str]
    ) -> None:
        super().__init__(message)
        self.store = store
        self.matches = tuple(matches)
        self.current_entries = tuple(current_entries)


class EntryNotFoundError(NotFoundError):
    """No entry contains the substring; ``current_entries`` shows what there is."""

    def __init__(self, message: str, *, store: str, current_entries: Sequence[str]) -> None:
        super().__init__(message)
        self.store = store
        self.current_entries = tuple(current_entries)


class ExternalDriftError(ConflictError):
    """The file was edited outside the tool in a way a rewrite would lose; a copy is at
    ``backup_path`` and nothing was written."""

    def __init__(self, message: str, *, store: str, backup_path: Path) -> None:
        super().__init__(message)
        self.store = store
        self.backup_path = backup_path


# -- The file format ---------------------------------------------------------------------------


def parse_entries(raw: str) -> list[str]:
    """Split file text into stripped, non-empty entries (Hermes' ``_read_file``; no dedup)."""
    if not raw.strip():
        return []
    # Split on the full delimiter, not on "§" alone, so an entry may contain "§".
    return [entry for entry in (part.strip() for part in raw.split(ENTRY_DELIMITER)) if entry]


def serialize_entries(entries: Sequence[str]) -> str:
    """Join entries into the exact text Hermes writes: no header, no trailing newline."""
    return ENTRY_DELIMITER.join(entries) if entries else ""


def usage_percent(usage_chars: int, limit: int) -> int:
    """Whole percent of the limit in use, capped at 100, as Hermes displays it."""
    return min(100, int((usage_chars / limit) * 100)) if limit > 0 else 0


def check_store(store: object) -> str:
    """Return ``store`` if it names a curated store.

    Raises ValidationError for anything but "memory" or "user".
    """
    if not isinstance(store, str) or store not in STORE_FILES:
        raise ValidationError(f"Invalid target {shown(store)}. Use 'memory' or 'user'.")
    return store


def _clean_text(value: object, name: str, empty_message: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a str, got {type(value).__name__}")
    stripped = value.strip()
    if not stripped:
        raise ValidationError(empty_message)
    return stripped


def _previews(entries: Sequence[str]) -> list[str]:
    return [e[:_PREVIEW_WIDTH] + ("..." if len(e) > _PREVIEW_WIDTH else "") for e in entries]


@dataclass(frozen=True, slots=True)
class CuratedResult:
    """Outcome of a successful call: ``changed`` is False for a no-op (duplicate add)."""

    store: str
    changed: bool
    entries: tuple[str, ...]
    usage_chars: int
    limit: int
    message: str

    @property
    def percent(self) -> int:
        return usage_percent(self.usage_chars, self.limit)

    @property
    def usage(self) -> str:
        """Hermes' usage string, e.g. ``"12% — 264/2,200 chars"``."""
        return f"{self.percent}% — {self.usage_chars:,}/{self.limit:,} chars"

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "changed": self.changed,
            "entries": list(self.entries),
            "usage": self.usage,
            "usage_chars": self.usage_chars,
            "limit": self.limit,
            "message": self.message,
        }


# -- Locking and atomic writes -----------------------------------------------------------------


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    # A sidecar lock file, so the data file itself can be swapped by os.replace. Same name as
    # Hermes' (MEMORY.md.lock), so Hermes' own memory tool and this store serialise against each other.
    lock_path = path.with_suffix(path.suffix + ".lock")
    try:
        private_dir(lock_path.parent)
        handle = open(lock_path, "a+", encoding="utf-8", opener=private_opener)  # noqa: SIM115 -- closed below
    except OSError as exc:
        raise StorageError(f"cannot open lock file {lock_path}: {exc}") from exc
    try:
        try:
            if sys.platform == "win32":
                import msvcrt

                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        except OSError as exc:
            raise StorageError(f"cannot lock {lock_path}: {exc}") from exc
        try:
            yield
        finally:
            if sys.platform == "win32":
                # msvcrt wants an explicit unlock before close; flock is released by close below.
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    finally:
        handle.close()


def _atomic_write(path: Path, text: str) -> None:
    # A symlinked MEMORY.md (dotfiles repos) stays a symlink: write through to its target, with the
    # temp file next to the target so os.replace never crosses a filesystem.
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        private_dir(target.parent)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".tmp", prefix=".mem_")  # 0600
        try:
            # Text mode like Hermes, so both write the same bytes on every platform.
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            with suppress(OSError):  # best-effort cleanup; the original error is re-raised
                os.unlink(tmp_name)
            raise
        fsync_dir(target.parent)
    except OSError as exc:
        raise StorageError(f"failed to write memory file {path}: {exc}") from exc


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        # Hermes reads an unreadable file as empty; a following add would then overwrite it. Refuse.
        raise StorageError(f"cannot read memory file {path}: {exc}") from exc


# -- The store ---------------------------------------------------------------------------------


class CuratedStore:
    """``MEMORY.md`` ("memory") and ``USER.md`` ("user") in one directory, with Hermes' semantics.

    The constructor touches nothing on disk; the directory is created by the first write.
    """

    def __init__(
        self,
        memories_dir: Path | str,
        memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int = DEFAULT_USER_CHAR_LIMIT,
    ) -> None:
        """Raises ConfigError if a limit is not a non-negative int."""
        for key, value in (("memory_char_limit", memory_char_limit), ("user_char_limit", user_char_limit)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"tier1.{key} must be a non-negative integer, got {value!r}")
        self._dir = Path(memories_dir)
        self._limits = {"memory": memory_char_limit, "user": user_char_limit}

    @property
    def memories_dir(self) -> Path:
        return self._dir

    def remove_stale_temp_files(self) -> int:
        """Delete the temp files killed writes left beside the stores (each holds a full copy of a store,
        so after a forget it may still hold a forgotten entry). Holds every store's lock meanwhile, so no
        write of this process, another one or Hermes is in flight. Returns how many went. Raises
        StorageError."""
        removed = 0
        with _file_lock(self.path_for("memory")), _file_lock(self.path_for("user")):
            for tmp in sorted(self._dir.glob(".mem_*.tmp")):
                try:
                    tmp.unlink()
                except OSError as exc:
                    raise StorageError(f"cannot remove stale temp file {tmp}: {exc}") from exc
                removed += 1
        return removed

    def path_for(self, store: str) -> Path:
        """The file backing ``store``. Raises ValidationError for an unknown store."""
        return self._dir / STORE_FILES[check_store(store)]

    def limit_for(self, store: str) -> int:
        """The character limit of ``store``. Raises ValidationError for an unknown store."""
        return self._limits[check_store(store)]

    def entries(self, store: str) -> list[str]:
        """The live entries of ``store``, deduplicated in file order; [] if the file is missing.

        Raises ValidationError for an unknown store, StorageError if the file cannot be read.
        """
        raw = _read_text(self.path_for(store))
        return [] if raw is None else list(dict.fromkeys(parse_entries(raw)))

    def get(self, store: str) -> str:
        """The entries joined as Hermes would write them.

        Raises ValidationError for an unknown store, StorageError if the file cannot be read.
        """
        return serialize_entries(self.entries(store))

    def state(self, store: str) -> CuratedResult:
        """Entries and usage of ``store`` without changing it.

        Raises ValidationError for an unknown store, StorageError if the file cannot be read.
        """
        return self._result(store, self.entries(store), changed=False, message="")

    def add(self, store: str, content: str) -> CuratedResult:
        """Append an entry; an exact duplicate is a no-op (``changed=False``).

        Raises ValidationError (unknown store, empty or non-str content), ThreatDetectedError,
        CuratedLimitError (a ConflictError) if the joined text would exceed the limit, StorageError.
        """
        check_store(store)
        content = _clean_text(content, "content", "Content cannot be empty.")
        ensure_safe(content, scope="strict")
        path = self.path_for(store)
        limit = self.limit_for(store)
        with _file_lock(path):
            # Append never loses outside edits, so like Hermes add skips the drift guard.
            raw = _read_text(path)
            entries = [] if raw is None else list(dict.fromkeys(parse_entries(raw)))
            if content in entries:
                return self._result(
                    store, entries, changed=False, message="Entry already exists (no duplicate added)."
                )
            attempted = len(serialize_entries([*entries, content]))
            if attempted > limit:
                current = len(serialize_entries(entries))
                raise CuratedLimitError(
                    f"{store} at {current:,}/{limit:,} chars. Adding this entry ({len(content)} chars) "
                    f"would exceed the limit. Consolidate: replace overlapping entries with shorter "
                    f"ones or remove stale ones (see current_entries), then retry.",
                    store=store,
                    current_entries=entries,
                    usage_chars=current,
                    limit=limit,
                    attempted_chars=attempted,
                )
            entries.append(content)
            _atomic_write(path, serialize_entries(entries))
        return self._result(store, entries, changed=True, message="Entry added.")

    def replace(self, store: str, old_substring: str, new_content: str) -> CuratedResult:
        """Replace the one entry containing ``old_substring`` with ``new_content``.

        Raises ValidationError (unknown store, empty or non-str arguments), ThreatDetectedError,
        EntryNotFoundError (a NotFoundError), AmbiguousMatchError / CuratedLimitError /
        ExternalDriftError (ConflictErrors), StorageError.
        """
        check_store(store)
        old_substring = _clean_text(old_substring, "old_substring", "old_text cannot be empty.")
        new_content = _clean_text(
            new_content, "new_content", "new_content cannot be empty. Use 'remove' to delete entries."
        )
        ensure_safe(new_content, scope="strict")
        path = self.path_for(store)
        limit = self.limit_for(store)
        with _file_lock(path):
            entries = self._load_for_rewrite(store, path)
            index = self._match(store, entries, old_substring)
            updated = list(entries)
            updated[index] = new_content
            attempted = len(serialize_entries(updated))
            if attempted > limit:
                current = len(serialize_entries(entries))
                raise CuratedLimitError(
                    f"Replacement would put {store} at {attempted:,}/{limit:,} chars. Shorten the new "
                    f"content or remove other entries to make room (see current_entries), then retry.",
                    store=store,
                    current_entries=entries,
                    usage_chars=current,
                    limit=limit,
                    attempted_chars=attempted,
                )
            _atomic_write(path, serialize_entries(updated))
        return self._result(store, updated, changed=True, message="Entry replaced.")

    def remove(self, store: str, substring: str) -> CuratedResult:
        """Remove the one entry containing ``substring``.

        Raises ValidationError (unknown store, empty or non-str substring), EntryNotFoundError
        (a NotFoundError), AmbiguousMatchError / ExternalDriftError (ConflictErrors), StorageError.
        """
        check_store(store)
        substring = _clean_text(substring, "substring", "old_text cannot be empty.")
        path = self.path_for(store)
        with _file_lock(path):
            entries = self._load_for_rewrite(store, path)
            index = self._match(store, entries, substring)
            updated = entries[:index] + entries[index + 1 :]
            _atomic_write(path, serialize_entries(updated))
        return self._result(store, updated, changed=True, message="Entry removed.")

    # -- helpers ------------------------------------------------------------------------------

    def _result(self, store: str, entries: Sequence[str], *, changed: bool, message: str) -> CuratedResult:
        return CuratedResult(
            store=store,
            changed=changed,
            entries=tuple(entries),
            usage_chars=len(serialize_entries(entries)),
            limit=self._limits[store],
            message=message,
        )

    def _load_for_rewrite(self, store: str, path: Path) -> list[str]:
        """Read under the lock and refuse if a full rewrite would drop outside edits."""
        raw = _read_text(path)
        if raw is None or not raw.strip():
            return []
        parsed = parse_entries(raw)
        # Hermes' two drift signals: the file does not round-trip through parse+serialize, or one
        # "entry" is larger than the whole store may be (free text appended by another writer).
        drifted = raw.strip() != serialize_entries(parsed) or max(map(len, parsed)) > self._limits[store]
        if drifted:
            backup = path.with_suffix(path.suffix + f".bak.{int(time.time())}")
            try:
                write_private_text(backup, raw)
            except OSError as exc:
                raise StorageError(f"drift in {path} detected but backup {backup} failed: {exc}") from exc
            raise ExternalDriftError(
                f"Refusing to write {path.name}: it has content that would not round-trip through the "
                f"memory tool (a manual edit, shell append, or another writer). A copy was saved to "
                f"{backup}. Rewrite the file as a clean §-delimited list of entries, or move the extra "
                f"content out, then retry.",
                store=store,
                backup_path=backup,
            )
        return list(dict.fromkeys(parsed))

    @staticmethod
    def _match(store: str, entries: list[str], substring: str) -> int:
        indices = [i for i, entry in enumerate(entries) if substring in entry]
        if not indices:
            raise EntryNotFoundError(
                f"No entry in {store} matched '{substring}'. Check current_entries and retry with "
                f"text from the entry you mean.",
                store=store,
                current_entries=entries,
            )
        distinct = list(dict.fromkeys(entries[i] for i in indices))
        # Identical duplicates are one entry in effect: act on the first, as Hermes does.
        if len(distinct) > 1:
            listing = "; ".join(f"{n}) {p}" for n, p in enumerate(_previews(distinct), start=1))
            raise AmbiguousMatchError(
                f"Multiple entries in {store} matched '{substring}'. Be more specific. Matches: {listing}",
                store=store,
                matches=distinct,
                current_entries=entries,
            )
        return indices[0]


__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "ENTRY_DELIMITER",
    "STORES",
    "STORE_FILES",
    "AmbiguousMatchError",
    "CuratedLimitError",
    "CuratedResult",
    "CuratedStore",
    "EntryNotFoundError",
    "ExternalDriftError",
    "check_store",
    "parse_entries",
    "serialize_entries",
    "usage_percent",
]
