"""What the agent that opens a store first in this process does once: write the turns an earlier process
left queued, split a gateway's early turns by person, read the curated files into facts."""

from __future__ import annotations

import logging

from hermes_memory.api import _write_checks as checks
from hermes_memory.audience import Sharing
from hermes_memory.core import people_split
from hermes_memory.errors import HermesMemoryError
from hermes_memory.hermes.registry import SharedStore

log = logging.getLogger(__name__)

# How long initialize may spend writing turns an earlier process left queued (rule-based extraction
# takes milliseconds a turn; an LLM extractor may take longer, and the worker then finishes the rest).
_STARTUP_INGEST_S = 2.0


def first_open(shared: SharedStore, *, primary: bool) -> None:
    """The once-per-open duties of a store this process just opened; each failure is logged, not raised.

    Turns an earlier process queued and exited without waiting for are written now, so the first
    prefetch sees them (embeddings follow later).
    """
    try:
        shared.api.core.ingest.ingest_pending(checks.ingest_timeout(_STARTUP_INGEST_S))
    except HermesMemoryError as exc:
        log.warning("nextlevel: could not ingest the queued turns: %s", exc)
    if shared.audience.multi_user:
        _split_once(shared)
    if primary and not shared.audience.multi_user:
        # First activation (HMNL §14): the curated entries a user had before become facts, once.
        try:
            shared.api.core.mirror.migrate()
        except HermesMemoryError as exc:
            log.warning("nextlevel: could not read MEMORY.md/USER.md into facts: %s", exc)


def _split_once(shared: SharedStore) -> None:
    """The first time a gateway person's or group's store opens: move what a gateway stored in the
    local scope before people had scopes to their own scopes (``core.people_split``), once per store
    (a marker beside the database), logging the counts; ``hermes-memory people split`` runs it again."""
    api = shared.api
    marker = api.config.db_path.with_name(api.config.db_path.name + ".people-split")
    if marker.exists():
        return
    scope, local = api.config.scope, shared.local_scope
    try:
        report = people_split.split(api.tier2, local, Sharing.of(scope.people, scope.pools))
    except HermesMemoryError as exc:
        log.warning("nextlevel: could not split the gateway turns of scope %r by person: %s", local, exc)
        return
    moved = bool(report.moved)
    for line in report.lines():  # an operator must see what moved (and what is quarantined)
        log.log(logging.WARNING if moved else logging.DEBUG, "nextlevel: people split: %s", line)
    try:
        marker.write_text("\n".join(report.lines()) + "\n", encoding="utf-8")
    except OSError as exc:  # the split is done; without the marker the next open checks again
        log.warning("nextlevel: could not write %s: %s", marker, exc)


__all__ = ["first_open"]
