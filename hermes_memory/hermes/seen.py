"""What the agent saw: the memory blocks the provider handed the model and its memory tools' results,
kept for the memory browser's page of the same name.

Off by default (config ``ui.record_context``): a record quotes what the user said. When on, each record
(the session, the query or tool call it served, the time, the text) is appended to
``Config.seen_path`` (0600, beside the Tier 2 database) with credentials redacted
(``security.redact_secrets``, whatever ``security.redact_secrets`` says: this file is a copy, not the
memory), and the file keeps the newest ``ui.record_limit`` records. Several processes share a store:
every rewrite goes through ``ops.seen_file`` (locked, atomic), as a forget's scrub of the file does.

``record`` never raises into Hermes: a failure to keep a record is logged and the turn goes on.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.ops import seen_file
from hermes_memory.security.secrets import redact_secrets

if TYPE_CHECKING:
    from hermes_memory.config import Config

log = logging.getLogger(__name__)

PREFETCH = "prefetch"
TOOL = "tool"
# A record's text beyond this is cut (a tool result can be long; the page is for reading).
MAX_TEXT_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class SeenRecord:
    """One thing the agent was shown: a prefetch block, or a tool's result."""

    at: float
    session_id: str
    scope: str
    kind: str  # PREFETCH | TOOL
    served: str  # the user's message the block was recalled for, or "tool_name {arguments}"
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "session_id": self.session_id,
            "scope": self.scope,
            "kind": self.kind,
            "served": self.served,
            "text": self.text,
        }


def record(config: Config, *, session_id: str, scope: str, kind: str, served: str, text: str) -> None:
    """Keep one record when ``ui.record_context`` is on (else nothing; no file is touched). An empty
    ``text`` (nothing was shown) is not kept."""
    if not config.ui.record_context or not text:
        return
    entry = SeenRecord(
        at=time.time(),
        session_id=redact_secrets(str(session_id)),
        scope=str(scope),
        kind=kind,
        served=redact_secrets(served[:MAX_TEXT_CHARS]),
        text=redact_secrets(text[:MAX_TEXT_CHARS]),
    )
    try:
        _append(config.seen_path, entry, config.ui.record_limit)
    except OSError as exc:  # a full disk must not cost the user their turn
        log.warning("nextlevel: could not keep what the agent saw in %s: %s", config.seen_path, exc)


def tool_served(tool_name: str, arguments: Any) -> str:
    """How a tool call is shown as what its result served: its name and arguments."""
    try:
        args = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):  # a hostile call's arguments must not fail the tool
        try:
            args = repr(arguments)[:MAX_TEXT_CHARS]
        except RecursionError:
            args = "(arguments nested too deep to show)"
    return f"{tool_name} {args}"


def read(config: Config) -> list[SeenRecord]:
    """The kept records, newest first (none when the file does not exist). A line that is not a
    record (a torn write of another program) is skipped. Raises OSError when the file cannot be read."""
    path = config.seen_path
    if not path.exists():
        return []
    return list(reversed(_records(path.read_text(encoding="utf-8", errors="replace"))))


def _records(text: str) -> list[SeenRecord]:
    out = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
            out.append(
                SeenRecord(
                    at=float(data["at"]),
                    session_id=str(data["session_id"]),
                    scope=str(data.get("scope", "")),
                    kind=str(data["kind"]),
                    served=str(data["served"]),
                    text=str(data["text"]),
                )
            )
        except (ValueError, KeyError, TypeError):
            continue
    return out


def _append(path: Path, entry: SeenRecord, limit: int) -> None:
    with seen_file.locked(path):
        kept = _records(path.read_text(encoding="utf-8", errors="replace")) if path.exists() else []
        kept = [*kept, entry][-limit:]
        lines = [json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in kept]
        seen_file.rewrite(path, lines, durable=False)


__all__ = ["PREFETCH", "TOOL", "SeenRecord", "read", "record", "tool_served"]
