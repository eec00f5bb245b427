"""The staging phase of an import (see ``importer``): the document, read piece by piece, checked row by
row and written to a scratch database beside the store in batches; nothing of the memory is touched."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_memory.errors import ThreatDetectedError, ValidationError
from hermes_memory.ops._jsonstream import JsonStream
from hermes_memory.ops.export import FORMAT, TABLES, VERSION, _into_view, _vector_row
from hermes_memory.scoping import ScopeView
from hermes_memory.security.threats import first_threat
from hermes_memory.tier2 import verdicts
from hermes_memory.tier2._util import loads_dict, loads_list
from hermes_memory.tier2.staging import BATCH, StagingDb

_MAX_TIER1_CHARS = 1 << 20

Transform = Callable[[str, Any], Any]


class Stage:
    """The staging database of one import and what the document said besides its rows."""

    def __init__(
        self, path: Path, columns: dict[str, list[str]], required: dict[str, set[str]], view: ScopeView,
        transform: Transform | None,
    ):  # fmt: skip
        self.path = path
        self.db = StagingDb(path)
        self.columns = columns
        self.required = required
        self.view = view
        self.transform = transform
        self.meta: dict[str, Any] = {}
        self.tier1: dict[str, list[str]] = {}
        self.rows: dict[str, int] = dict.fromkeys(TABLES, 0)
        self.flagged = {"episodes": 0, "facts": 0}
        self.vectors = 0
        self._saw_tier2 = False

    # -- staging ------------------------------------------------------------------------------------
    def add_meta(self, key: str, value: Any) -> None:
        if key == "tier1":
            self.tier1 = _tier1(value if self.transform is None else self.transform("tier1", value))
        else:
            self.meta[key] = value
            if key == "format" and value != FORMAT:
                raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")

    def add_row(self, table: str, raw: Any) -> None:
        self._saw_tier2 = True
        if table not in TABLES:
            raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
        if not isinstance(raw, dict):
            raise ValidationError(f"export table {table!r} must be a list of objects")
        if self.transform is not None:
            raw = self.transform(table, raw)
        index = self.rows[table]
        _check_row(self.columns[table], self.required[table], table, index, raw)
        row = _into_view(self.view, table, raw)
        if table in ("episodes", "facts"):
            row["threat"] = _verdict(table, index, row)
            self.flagged[table] += row["threat"] == verdicts.FLAGGED
        self.db.add_row(table, json.dumps(row, ensure_ascii=False))
        self.rows[table] += 1

    def saw_table(self) -> None:
        self._saw_tier2 = True

    def add_vector(self, index: int, item: Any) -> None:
        self.db.add_vector(_vector_row(index, item))
        self.vectors += 1

    def finish(self) -> None:
        """Checks that need the whole document. Raises ValidationError."""
        if self.meta.get("format") != FORMAT:
            raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")
        if self.meta.get("version") != VERSION:
            found = self.meta.get("version")
            raise ValidationError(f"unsupported export version {found!r} (this release reads {VERSION})")
        if not self._saw_tier2:
            raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
        self.db.commit()

    # -- reading back --------------------------------------------------------------------------------
    def staged(self, table: str) -> Iterator[tuple[int, dict[str, Any]]]:
        for index, body in enumerate(self.db.rows(table)):
            yield index, json.loads(body)

    def remap(self, old: str, new: str) -> None:
        self.db.remap(old, new)

    def mapped(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        new = self.db.mapped(value)
        return value if new is None else new

    def close(self) -> None:
        self.db.close()


def _tier1(value: Any) -> dict[str, list[str]]:
    """The curated entries of the document after the write-time checks. Raises ValidationError,
    ThreatDetectedError."""
    if not isinstance(value, dict) or not all(
        s in ("memory", "user") and isinstance(e, list) and all(isinstance(x, str) for x in e)
        for s, e in value.items()
    ):
        raise ValidationError("export 'tier1' must map 'memory'/'user' to lists of strings")
    if sum(len(x) for e in value.values() for x in e) > _MAX_TIER1_CHARS:
        raise ValidationError(f"export 'tier1' holds more than {_MAX_TIER1_CHARS} characters")
    out: dict[str, list[str]] = {}
    for store, entries in value.items():
        clean = [e.strip() for e in entries]
        for i, entry in enumerate(clean):
            if not entry:
                raise ValidationError(f"export 'tier1' {store!r} entry {i}: an entry cannot be empty")
            finding = first_threat(entry, "strict")
            if finding is not None:
                raise ThreatDetectedError(f"export 'tier1' {store!r} entry {i}: {finding.message}")
        out[store] = list(dict.fromkeys(clean))
    return out


def _check_row(columns: list[str], required: set[str], table: str, index: int, row: dict[str, Any]) -> None:
    unknown = set(row) - set(columns)
    if unknown:
        raise ValidationError(f"export table {table!r} row {index}: unknown columns {sorted(unknown)}")
    missing = required - set(row)
    if missing:
        raise ValidationError(f"export table {table!r} row {index}: missing columns {sorted(missing)}")
    for key, value in row.items():
        if value is not None and not isinstance(value, (str, int, float)):
            raise ValidationError(f"export table {table!r} row {index}: column {key!r} is not a scalar")


def _verdict(table: str, index: int, row: dict[str, Any]) -> int:
    def text(key: str) -> str:
        value = row.get(key)
        return "" if value is None else str(value)

    try:
        if table == "episodes":
            meta = loads_dict(row.get("metadata") if isinstance(row.get("metadata"), str) else None)
            return verdicts.episode_verdict(
                text("text"), text("speaker"), text("session_id"), text("role"), meta
            )
        sources = loads_list(
            row.get("source_episodes") if isinstance(row.get("source_episodes"), str) else None
        )
        return verdicts.fact_verdict(
            text("content"), text("category"), text("source_type"), text("source_id"), sources
        )
    except ValueError as exc:
        raise ValidationError(
            f"export table {table!r} row {index}: a JSON column is not JSON: {exc}"
        ) from exc


# -- feeding the stage ------------------------------------------------------------------------------


def feed_stream(stream: JsonStream, stage: Stage) -> None:
    for key in stream.members():
        if key == "tier2":
            if not stream.at("{"):
                raise ValidationError(
                    f"export 'tier2' must be an object with tables among {', '.join(TABLES)}"
                )
            for table in stream.members():
                if table not in TABLES:
                    raise ValidationError(
                        f"export 'tier2' must be an object with tables among {', '.join(TABLES)}"
                    )
                if not stream.at("["):
                    raise ValidationError(f"export table {table!r} must be a list of objects")
                stage.saw_table()
                for _ in stream.items():
                    stage.add_row(table, stream.value())
            stage.saw_table()
        elif key == "vectors" and stream.at("["):
            for index, _ in enumerate(stream.items()):
                stage.add_vector(index, stream.value())
        else:
            stage.add_meta(key, stream.value())
    stream.end()


def feed_data(data: Any, stage: Stage) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValidationError(f"not a hermes-memory export (expected format {FORMAT!r})")
    for key in ("format", "version", "schema_version"):
        if key in data:
            stage.add_meta(key, data[key])
    if data.get("version") != VERSION:
        raise ValidationError(
            f"unsupported export version {data.get('version')!r} (this release reads {VERSION})"
        )
    stage.add_meta("tier1", data.get("tier1", {}))
    tier2 = data.get("tier2")
    if not isinstance(tier2, dict) or set(tier2) - set(TABLES):
        raise ValidationError(f"export 'tier2' must be an object with tables among {', '.join(TABLES)}")
    for table, rows in tier2.items():
        if not isinstance(rows, list):
            raise ValidationError(f"export table {table!r} must be a list of objects")
        stage.saw_table()
        for row in rows:
            stage.add_row(table, row)
    stage.saw_table()
    items = data.get("vectors")
    if isinstance(items, list):
        for index, item in enumerate(items):
            stage.add_vector(index, item)


__all__ = ["BATCH", "Stage", "Transform", "feed_data", "feed_stream"]
