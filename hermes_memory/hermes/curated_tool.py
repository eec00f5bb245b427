"""The curated actions of ``nextlevel_memory`` (HMNL §9.1): ``add``, ``replace``, ``remove``, ``read`` on
Hermes' own MEMORY.md / USER.md, with Hermes' memory-tool arguments (``action``, ``target`` = memory|user,
``content``, ``old_text``) and result shape: a success is terminal (``done``, ``usage``, ``entry_count``,
``message``, ``note``); a refusal (over the character limit, no or several matching entries, a missing
``old_text``, flagged content) carries ``current_entries`` and ``usage`` so the model can consolidate and
retry. A write is mirrored into Tier 2 facts as Hermes' own tool's writes are (``on_memory_write``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import HermesMemoryError, ValidationError
from hermes_memory.tier1.curated_store import STORES, serialize_entries

_NOTE = "Write saved. This update is complete — do not repeat it."


class CuratedRefusal(HermesMemoryError):
    """A curated action Hermes would refuse, with what the model needs to retry."""

    code = "invalid_input"

    def __init__(
        self, message: str, current_entries: list[str] | None = None, code: str = "invalid_input"
    ) -> None:
        super().__init__(message)
        self.current_entries = current_entries
        self.code = code


def target(args: Mapping[str, Any]) -> str:
    """``target``: "memory" (default; also for null, as Hermes takes it) or "user"."""
    value = args.get("target")
    if value is None or value == "":
        return "memory"
    if value not in STORES:
        raise ValidationError(f"Invalid target {v.shown(value)}. Use 'memory' or 'user'.")
    return str(value)


def _text(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"'{key}' must be a string, got {type(value).__name__}")
    return value.strip() or None


def run(
    api: MemoryAPI,
    action: str,
    args: Mapping[str, Any],
    *,
    source_id: str | None,
    check_write: Callable[[], None],
    check_text: Callable[[str], None],
) -> dict[str, Any]:
    """Run one curated action and return Hermes' result dict (never raises for bad input or a refusal).
    ``check_write`` refuses writes in a read-only agent context; ``check_text`` refuses flagged text."""
    store = "memory"
    try:
        store = target(args)
        if action == "read":
            entries = _data(api.curated_entries(store))
            return {"success": True, "action": action, "target": store, "entries": entries,
                    "entry_count": len(entries), "usage": _usage(api, store, entries)}  # fmt: skip
        check_write()
        content, old_text = _text(args, "content"), _text(args, "old_text")
        if action in ("replace", "remove") and old_text is None:
            raise CuratedRefusal(
                f"'{action}' needs old_text -- a short unique substring of the entry to {action}. None was "
                f"provided. Reissue the {action} with old_text set to part of one of the current_entries "
                "below.",
                _data(api.curated_entries(store)),
            )
        if action in ("add", "replace") and content is None:
            raise ValidationError(f"Content is required for '{action}' action.")
        if content is not None:
            check_text(content)
        if action == "add":
            envelope = api.curated_add(str(content), store=store)
        elif action == "replace":
            envelope = api.curated_replace(str(old_text), str(content), store=store)
        else:
            envelope = api.curated_remove(str(old_text), store=store)
        result = _data(envelope)
        if result["changed"]:
            # As Hermes' own tool triggers on_memory_write: the entry's facts follow it into Tier 2.
            _data(api.mirror_curated_write(action, store, content or "", old_text, source_id=source_id))
    except HermesMemoryError as exc:
        return _refusal(api, action, store, str(exc), getattr(exc, "current_entries", None), exc.code)
    return {"success": True, "done": True, "action": action, "target": store, "usage": result["usage"],
            "entry_count": len(result["entries"]), "message": result["message"], "note": _NOTE,
            "changed": result["changed"]}  # fmt: skip


def _data(envelope: Envelope) -> Any:
    """A successful envelope's data; a failed one raises CuratedRefusal with its error and entries."""
    if not envelope["success"]:
        data = envelope.get("data")
        entries = data.get("current_entries") if isinstance(data, dict) else None
        raise CuratedRefusal(str(envelope["error"]), entries, str(envelope["meta"].get("error_type")))
    return envelope["data"]


def _usage(api: MemoryAPI, store: str, entries: list[str]) -> str:
    tier1 = api.config.tier1
    limit = tier1.user_char_limit if store == "user" else tier1.memory_char_limit
    used = len(serialize_entries(entries))
    return f"{min(100, used * 100 // limit) if limit else 0}% — {used:,}/{limit:,} chars"


def _refusal(
    api: MemoryAPI, action: str, store: str, error: str, entries: list[str] | None, code: str
) -> dict[str, Any]:
    out: dict[str, Any] = {"success": False, "action": action, "target": store, "error": error,
                           "error_type": code}  # fmt: skip
    if entries is not None:
        out["current_entries"] = list(entries)
        out["usage"] = _usage(api, store, list(entries))
    return out


__all__ = ["CuratedRefusal", "run", "target"]
