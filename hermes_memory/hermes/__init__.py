"""The Hermes Agent integration: the ``nextlevel`` memory provider, its tools, installer and status.

Only this package imports Hermes, and only lazily (inside functions), so the core imports and runs
without Hermes installed. Hermes loads the provider through the shim ``hermes-memory install`` writes
to ``$HERMES_HOME/plugins/nextlevel/__init__.py``; the shim imports ``hermes_memory.hermes.provider``.
"""

from __future__ import annotations

PROVIDER_NAME = "nextlevel"
"""The plugin directory name and ``memory.provider`` value (Hermes matches on the directory name)."""

__all__ = ["PROVIDER_NAME"]
