"""The names this project is installed under: its distribution, its import package and its commands.

Another project on the public index is called ``hermes-memory`` and ships an import package
``hermes_memory`` and a ``hermes-memory`` command too, so this one is distributed under a name of its
own. Its first command keeps the name every document and Hermes hint uses; the second can never be
another project's script.
"""

from __future__ import annotations

DIST_NAME = "hermes-memory-tiers"
PACKAGE = "hermes_memory"
COMMAND = "hermes-memory"
SECOND_COMMAND = "hermes-memory-tiers"
# pyproject's description: an install of this project under its earlier distribution name carries it.
SUMMARY = (
    "Tiered, local-first memory for Hermes Agent: curated markdown, SQLite knowledge, semantic search, "
    "knowledge graph."
)

__all__ = ["COMMAND", "DIST_NAME", "PACKAGE", "SECOND_COMMAND", "SUMMARY"]
