"""Tier 2 on a PostgreSQL server (``tier2.url``): the engine beside the embedded SQLite default."""

__all__: list[str] = []
