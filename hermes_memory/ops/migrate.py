"""``hermes-memory migrate``: this profile's Tier 2 store copied to another engine — from the SQLite file
into a PostgreSQL database, or back — all or nothing, with the counts checked (``tier2.copy_store``).
The store in use is left as it is; the settings switch to the copy when the user says so."""

from __future__ import annotations

from typing import Any

from hermes_memory.config import Config
from hermes_memory.errors import ValidationError
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.copy_store import copy_store
from hermes_memory.tier2.engines import engine_of, where


def migrate(config: Config, to: str) -> dict[str, Any]:
    """Copy the store ``config`` uses into ``to`` (a PostgreSQL URL, or ``sqlite``: the profile's SQLite
    file at ``tier2.db_path``), which must be empty. Returns where from, where to and the rows copied
    per table. Raises ValidationError for a target that is the source, ConflictError (target not empty,
    counts differ), ConfigError (unknown engine), StorageError (either store)."""
    target_url = None if to == "sqlite" else to
    engine_of(target_url)  # an unknown engine is refused before anything is opened
    source_url = config.tier2.url
    if (source_url or None) == target_url:
        raise ValidationError(f"the store is already at {where(config.db_path, source_url)}")
    options: dict[str, Any] = {"busy_timeout_ms": config.tier2.busy_timeout_ms, "profile": config.profile}
    source = Tier2.open(config.db_path, url=source_url, **options)
    try:
        source.ingest_queue.absorb()  # turns still in this host's inbox move with the store
        target = Tier2.open(config.db_path, url=target_url, **options)
        try:
            copied = copy_store(source.db, target.db)
        finally:
            target.close()
    finally:
        source.close()
    return {
        "from": where(config.db_path, source_url),
        "to": where(config.db_path, target_url),
        "copied": copied,
    }


__all__ = ["migrate"]
