"""Human-readable rendering of records for the CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hermes_memory.recall.render import superseded_note


def when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M")


def fact_line(f: dict[str, Any]) -> str:
    score = f" score={f['score']:.3f}" if "score" in f else ""
    state = ""
    if f.get("superseded_at"):
        state = " [superseded]"
    elif f.get("is_archived"):
        state = " [archived]"
    return (
        f"{f['uuid'][:8]}  {when(f['created_at'])}  [{f['category']}] {f['content']}"
        f"  (conf {f['confidence']:.2f}{score}){state}"
    )


def facts(rows: list[dict[str, Any]]) -> str:
    return "\n".join(fact_line(f) for f in rows) if rows else "(no facts)"


def entity_line(e: dict[str, Any]) -> str:
    aliases = f" aka {', '.join(e['aliases'])}" if e.get("aliases") else ""
    desc = f" — {e['description']}" if e.get("description") else ""
    return f"{e['uuid'][:8]}  {e['name']} ({e['entity_type']}){aliases}{desc}  seen {e['occurrence_count']}x"


def entities(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no entities)"
    lines = []
    for e in rows:
        lines.append(entity_line(e))
        for r in e.get("relations", []):
            lines.append(
                f"    {r['relation_type']} ({r['strength']:.2f}) {r['from_entity_id'][:8]} -> "
                f"{r['to_entity_id'][:8]}"
            )
    return "\n".join(lines)


def events(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no events)"
    return "\n".join(
        f"{e['uuid'][:8]}  {when(e['timestamp'])}  [{e['event_type']}] {e['title']}"
        f"{' — ' + e['description'] if e.get('description') else ''}  (importance {e['importance']:.2f})"
        f"{'  [' + note + ']' if (note := superseded_note(e)) else ''}"
        for e in rows
    )
