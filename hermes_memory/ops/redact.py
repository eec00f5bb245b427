"""Credentials in an export document: redacted before it is written out or imported.

An export row keeps its ``content_hash`` (facts, episodes, chunks: the hash of its normalised text,
which dedup and the stored vectors are keyed on), so a row whose text changed gets the hash of its
redacted text: an import then dedups on what is stored, and the chunk is embedded anew instead of
joining the vector of the text that held the secret. The document's ``vectors`` are base64 numbers, not
text, and are never touched.
"""

from __future__ import annotations

from typing import Any

from hermes_memory.security.secrets import redact_data
from hermes_memory.tier2._util import content_hash

# Table -> the column its content_hash is computed from.
_HASHED_TEXT = {"facts": "content", "episodes": "text", "chunks": "text"}


def redact_document(doc: Any) -> tuple[Any, int]:
    """``doc`` (an export: ``tier1`` entries per store, ``tier2`` rows per table) with every credential
    in its text redacted, and how many rows or entries changed. Anything that is not shaped like an
    export is returned unchanged (the importer validates it and names what is wrong)."""
    if not isinstance(doc, dict):
        return doc, 0
    changed = 0
    out = dict(doc)
    tier1 = doc.get("tier1")
    if isinstance(tier1, dict):
        entries_out: dict[Any, Any] = {}
        for store, entries in tier1.items():
            redacted = redact_data(entries)
            if redacted is not entries and isinstance(entries, list):
                changed += sum(1 for a, b in zip(entries, redacted, strict=True) if a is not b)
            entries_out[store] = redacted
        out["tier1"] = entries_out
    tier2 = doc.get("tier2")
    if isinstance(tier2, dict):
        tables: dict[Any, Any] = {}
        for table, rows in tier2.items():
            if not isinstance(rows, list):
                tables[table] = rows
                continue
            new_rows = []
            for row in rows:
                new = _redacted_row(table, row)
                changed += new is not row
                new_rows.append(new)
            tables[table] = new_rows
        out["tier2"] = tables
    return out, changed


def redact_import_item(table: str, value: Any) -> Any:
    """The importer's ``transform``: one Tier 2 row of ``table`` (or the ``"tier1"`` entries) with its
    credentials redacted, its ``content_hash`` following a changed text."""
    return redact_data(value) if table == "tier1" else _redacted_row(table, value)


def _redacted_row(table: str, row: Any) -> Any:
    if not isinstance(row, dict):
        return row
    new = redact_data(row)
    if new is row:
        return row
    column = _HASHED_TEXT.get(table)
    if column is not None and isinstance(new.get(column), str) and new[column] != row.get(column):
        new["content_hash"] = content_hash(new[column])
    return new


__all__ = ["redact_document", "redact_import_item"]
