"""Durable turn ingestion: queue, worker, and the writer that turns extraction results into Tier 2 rows."""

__all__: list[str] = []
