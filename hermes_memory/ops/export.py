"""Export every tier to one JSON document and import it back (exactly, or merged into existing memory).

Rows are exported column by column (all columns except the local autoincrement ``id``), ordered by
``id``, so an import into an empty home followed by an export yields the identical document. The stored
vectors of the exported chunks go along (``vectors``: model id, text hash, base64 float32), so an import
embeds only texts without one; entity vectors are re-derived (few, cheap).
The audit log and maintenance history stay with the home they describe and are not exported.

Both directions go through the Tier 2 store's ``ScopeView``: an export holds only the rows the view can
read, and an import writes every row into the view's scopes (episodes, their chunks and queued turns
into its own scope; facts, entities, relations, timeline events and fact chunks into its fact scope).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import struct
from typing import Any

from hermes_memory.errors import ValidationError
from hermes_memory.scoping import DEFAULT_SCOPE, ScopeView
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2, export_rows
from hermes_memory.tier2._util import dumps
from hermes_memory.tier2.schema import current_version

FORMAT = "hermes-memory/export"
VERSION = 1
# Parents before children, so foreign keys hold while importing.
TABLES = (
    "entities", "entity_aliases", "facts", "fact_entities", "relations", "timeline", "episodes", "chunks",
    "ingest_queue",
)  # fmt: skip


def _into_view(view: ScopeView, table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` moved into the view's write scopes (what an import writes)."""
    if table == "ingest_queue":
        payload = row.get("payload")
        if isinstance(payload, str):
            try:
                body = json.loads(payload)
            except ValueError as exc:
                raise ValidationError(f"export table 'ingest_queue': payload is not JSON: {exc}") from exc
            if isinstance(body, dict) and body.get("scope", DEFAULT_SCOPE) != view.write_own:
                return {**row, "payload": dumps({**body, "scope": view.write_own})}
        return row
    if "scope" not in row and table in ("entity_aliases", "fact_entities"):
        return row
    private = table == "episodes" or (table == "chunks" and row.get("source_kind") != "fact")
    return {**row, "scope": view.write_own if private else view.write_facts}


def export_data(tier2: Tier2, curated: CuratedStore | None) -> dict[str, Any]:
    """Every tier as plain JSON data (one consistent read transaction for Tier 2): the rows of the
    Tier 2 view only; the curated entries (Tier 1) are per Hermes home and shared by design."""
    tables: dict[str, list[dict[str, Any]]] = {}
    tier2.ingest_queue.absorb()  # queued turns still in the inbox belong in the export
    with tier2.db.atomic() as conn:
        for table in TABLES:
            names = [c.name for c in export_rows.columns(conn, table)]
            tables[table] = export_rows.read_rows(conn, tier2.view, table, names)
        vectors = [
            {"model_id": v.model_id, "text_hash": v.text_hash, "dim": v.dim,
             "vector": base64.b64encode(v.vector).decode()}
            for v in export_rows.chunk_vectors(conn, tier2.view)
        ]  # fmt: skip
    tier1 = {s: curated.entries(s) for s in ("memory", "user")} if curated is not None else {}
    return {
        "format": FORMAT,
        "version": VERSION,
        "schema_version": current_version(tier2.db),
        "vectors": vectors,
        "tier1": tier1,
        "tier2": tables,
    }


_HASH = re.compile(r"^[0-9a-f]{64}$")


def _vector_row(index: int, item: Any) -> tuple[str, str, int, bytes]:
    """One of the export's stored vectors as a row to insert. Raises ValidationError when malformed."""
    where = f"export 'vectors'[{index}]"
    if not isinstance(item, dict) or set(item) != {"model_id", "text_hash", "dim", "vector"}:
        raise ValidationError(f"{where} must be an object with model_id, text_hash, dim and vector")
    model, digest, dim, text = item["model_id"], item["text_hash"], item["dim"], item["vector"]
    if not isinstance(model, str) or not model or not isinstance(digest, str) or not _HASH.match(digest):
        raise ValidationError(f"{where}: model_id must be text and text_hash a sha256 hex digest")
    bad_dim = isinstance(dim, bool) or not isinstance(dim, int) or not 0 < dim <= 65536
    if bad_dim or not isinstance(text, str):
        raise ValidationError(f"{where}: dim must be a positive integer and vector base64 text")
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationError(f"{where}: vector is not base64: {exc}") from exc
    if len(blob) != 4 * dim or not all(math.isfinite(x) for x in struct.unpack(f"<{dim}f", blob)):
        raise ValidationError(f"{where}: vector must hold {dim} finite float32 values")
    return model, digest, dim, blob


def write_private(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600, also when the file existed).

    Memory exports hold everything the user ever said. Raises OSError.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fd = -1
            fh.write(text)
    finally:
        if fd != -1:
            os.close(fd)


__all__ = ["FORMAT", "TABLES", "VERSION", "export_data", "write_private"]
