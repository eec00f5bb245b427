"""The maintenance jobs' names, kept apart from the jobs so that building the command line's parser
(``hermes-memory --help``) does not load them."""

from __future__ import annotations

JOB_NAMES: tuple[str, ...] = ("consolidate", "prune", "embed_queue", "graph_refresh")

__all__ = ["JOB_NAMES"]
