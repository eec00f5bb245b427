"""Where Tier 2 lives: the registry of its engines, chosen by the URL's scheme (config ``tier2.url``, or
``HERMES_MEMORY_TIER2_URL`` when the config leaves it null). No URL: the embedded SQLite file at
``tier2.db_path`` (the default).

Both engines are one object to the stores (``tier2.db.Database``'s methods); a new engine registers an
opener here and passes the same contract suite.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hermes_memory.errors import ConfigError
from hermes_memory.tier2.db import Database, SqliteDatabase

Opener = Callable[..., Any]


def _postgresql(url: str, local: str | os.PathLike[str], *, busy_timeout_ms: int, schema: str) -> Any:
    try:
        from hermes_memory.tier2.pg.database import PgDatabase
    except ImportError as exc:
        raise ConfigError(
            f"tier2.url names a PostgreSQL server, but its driver is not installed ({exc}); "
            "install it with: pip install 'hermes-memory-tiers[postgresql]'"
        ) from exc
    chosen = "search_path" in urlsplit(url).query  # the URL names its schema itself
    return PgDatabase(url, local, busy_timeout_ms=busy_timeout_ms, schema=None if chosen else schema)


ENGINES: dict[str, Opener] = {
    "postgresql": _postgresql,
    "postgres": _postgresql,
}


def safe_url(url: str) -> str:
    """``url`` without its password (for status lines, errors and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def with_schema(url: str, schema: str) -> str:
    """``url`` with its store in the PostgreSQL schema ``schema`` (which must exist): several stores in
    one database, each in its own schema."""
    if not schema.isidentifier():
        raise ConfigError(f"not a schema name: {schema!r}")
    parts = urlsplit(url)
    extra = f"options=-csearch_path%3D{schema}"
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra))


def profile_schema(profile: str) -> str:
    """The PostgreSQL schema that holds a profile's store (profiles never share one): ``hermes_`` and the
    profile's name folded to lower-case letters, digits and ``_``, with a digest of the exact name when
    folding changed it (``Work`` and ``work`` are two profiles)."""
    folded = re.sub(r"[^a-z0-9_]", "_", profile.lower())[:40]
    if folded != profile:
        folded += "_" + hashlib.sha256(profile.encode()).hexdigest()[:8]
    return f"hermes_{folded}"


def where(db_path: str | os.PathLike[str], url: str | None) -> str:
    """Where a store lives, as status lines name it: the SQLite file, or the engine and its URL without
    the password."""
    return str(db_path) if not url else f"{engine_of(url)} {safe_url(url)}"


def engine_of(url: str | None) -> str:
    """The engine a URL selects ("sqlite" without one). Raises ConfigError for an unknown scheme."""
    if not url:
        return "sqlite"
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ENGINES:
        known = ", ".join(sorted({"postgresql"}))
        raise ConfigError(f"tier2.url: unknown engine {scheme or url!r}; known: {known} (none: SQLite)")
    return "postgresql" if scheme == "postgres" else scheme


def open_database(
    path: str | os.PathLike[str],
    url: str | None,
    *,
    wal: bool = True,
    busy_timeout_ms: int = 30000,
    profile: str = "default",
) -> Database:
    """The database object of Tier 2: SQLite at ``path`` without ``url``, else the engine ``url``
    selects (``path`` is then where this host keeps its local files; the store is the profile's own
    schema, ``profile_schema``, unless the URL sets ``search_path`` itself)."""
    engine = engine_of(url)
    if engine == "sqlite" or url is None:
        return SqliteDatabase(path, wal=wal, busy_timeout_ms=busy_timeout_ms)
    schema = profile_schema(profile)
    opened: Database = ENGINES[engine](url, path, busy_timeout_ms=busy_timeout_ms, schema=schema)
    return opened


__all__ = ["ENGINES", "engine_of", "open_database", "profile_schema", "safe_url", "where", "with_schema"]
