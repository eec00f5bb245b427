"""The hand-labelled extraction set: turn and conversation records, the loader that checks them, ``norm``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from hermes_memory.errors import ValidationError

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "extraction_bench.json"
ENTITY_TYPES = frozenset(
    {"person", "place", "org", "project", "tool", "tech", "concept", "event", "pet", "other"}
)
ROLES = frozenset({"user", "assistant", "human"})
KINDS = frozenset({"hermes", "human"})
_PUNCT = re.compile(r"[^\w\s']")


@dataclass(frozen=True, slots=True)
class Turn:
    """One labelled turn. Label tuples: entities (name, type), relations and facts (subject, predicate,
    object), dates (phrase, start, end) with ISO days, end exclusive."""

    index: int
    speaker: str
    role: str
    time: datetime
    text: str
    entities: tuple[tuple[str, str], ...]
    relations: tuple[tuple[str, str, str], ...]
    facts: tuple[tuple[str, str, str], ...]
    dates: tuple[tuple[str, str, str], ...]

    @property
    def is_empty(self) -> bool:
        return not (self.entities or self.relations or self.facts or self.dates)


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    kind: str
    turns: tuple[Turn, ...]
    user_name: str | None = None
    assistant_name: str = "Hermes"
    speakers: tuple[str, ...] = ()

    @property
    def participants(self) -> tuple[str, ...]:
        if self.kind == "hermes":
            return (
                "user",
                "the user",
                *([self.user_name] if self.user_name else []),
                *self._assistant_names(),
            )
        return self.speakers

    def _assistant_names(self) -> tuple[str, ...]:
        return (self.assistant_name, "assistant", "the assistant")

    @property
    def assistant_names(self) -> frozenset[str]:
        return frozenset(norm(n) for n in self._assistant_names()) if self.kind == "hermes" else frozenset()


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ValidationError(f"{where}: {what}")


def _strings(item: Any, keys: tuple[str, ...], where: str) -> tuple[str, ...]:
    _need(isinstance(item, dict) and set(item) == set(keys), where, f"expected an object with keys {keys}")
    values = tuple(item[k] for k in keys)
    _need(
        all(isinstance(v, str) and v.strip() for v in values), where, "every value must be a non-empty string"
    )
    return values


def _day(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ValidationError(f"{where}: {text!r} is not an ISO date (YYYY-MM-DD)") from exc


def _turn(raw: Any, index: int, where: str) -> Turn:
    keys = {"speaker", "role", "time", "text", "entities", "relations", "facts", "dates"}
    _need(isinstance(raw, dict) and set(raw) == keys, where, f"a turn has exactly the keys {sorted(keys)}")
    _need(raw["role"] in ROLES, where, f"role must be one of {sorted(ROLES)}, got {raw['role']!r}")
    _need(
        isinstance(raw["text"], str) and bool(raw["text"].strip()), where, "text must be a non-empty string"
    )
    _need(isinstance(raw["speaker"], str) and bool(raw["speaker"].strip()), where, "speaker must be a name")
    try:
        when = datetime.fromisoformat(str(raw["time"]).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValidationError(f"{where}: time {raw['time']!r} is not ISO 8601") from exc
    _need(when.tzinfo is not None, where, "time must carry a zone (UTC, 'Z')")
    for key in ("entities", "relations", "facts", "dates"):
        _need(isinstance(raw[key], list), where, f"{key} must be a list")
    entities = tuple(_strings(e, ("name", "type"), f"{where} entity") for e in raw["entities"])
    for name, etype in entities:
        _need(etype in ENTITY_TYPES, where, f"entity {name!r} has unknown type {etype!r}")
    relations = tuple(
        _strings(r, ("subject", "type", "object"), f"{where} relation") for r in raw["relations"]
    )
    facts = tuple(_strings(f, ("subject", "predicate", "object"), f"{where} fact") for f in raw["facts"])
    dates = tuple(_strings(d, ("phrase", "start", "end"), f"{where} date") for d in raw["dates"])
    for phrase, start, end in dates:
        _need(_day(start, where) < _day(end, where), where, f"date {phrase!r} must end after it starts")
        _need(phrase.lower() in raw["text"].lower(), where, f"date phrase {phrase!r} is not in the text")
    return Turn(
        index, raw["speaker"], raw["role"], when.astimezone(UTC), raw["text"],
        entities, relations, facts, dates,  # type: ignore[arg-type]
    )  # fmt: skip


def load_dataset(path: str | Path) -> list[Conversation]:
    """The labelled conversations of ``path``. Raises ValidationError naming the first bad place."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {exc}") from exc
    _need(isinstance(data, dict) and isinstance(data.get("conversations"), list), str(path),
          "expected an object with a 'conversations' list")  # fmt: skip
    out: list[Conversation] = []
    seen: set[str] = set()
    for raw in data["conversations"]:
        where = f"conversation {raw.get('id') if isinstance(raw, dict) else raw!r}"
        _need(isinstance(raw, dict) and isinstance(raw.get("id"), str), where, "needs a string 'id'")
        _need(raw["id"] not in seen, where, "duplicate id")
        seen.add(raw["id"])
        _need(raw.get("kind") in KINDS, where, f"kind must be one of {sorted(KINDS)}")
        _need(
            isinstance(raw.get("turns"), list) and bool(raw["turns"]), where, "needs a non-empty 'turns' list"
        )
        turns = tuple(_turn(t, i, f"{where} turn {i}") for i, t in enumerate(raw["turns"]))
        if raw["kind"] == "hermes":
            user_name, assistant = raw.get("user_name"), raw.get("assistant_name") or "Hermes"
            _need(
                user_name is None or isinstance(user_name, str), where, "user_name must be a string or null"
            )
            for turn in turns:
                expected = assistant if turn.role == "assistant" else (user_name or "user")
                _need(turn.role != "human", where, "a hermes conversation has user and assistant turns")
                _need(turn.speaker == expected, where, f"turn {turn.index} speaker should be {expected!r}")
            out.append(Conversation(raw["id"], "hermes", turns, user_name, assistant))
        else:
            speakers = raw.get("speakers")
            _need(isinstance(speakers, list) and len(speakers) >= 2, where, "needs a 'speakers' list")
            for turn in turns:
                _need(turn.role == "human" and turn.speaker in speakers, where,
                      f"turn {turn.index} must be role 'human' by one of the speakers")  # fmt: skip
            out.append(Conversation(raw["id"], "human", turns, speakers=tuple(speakers)))
    return out


# ----------------------------------------------------------------------------------------- normalising


def norm(text: str) -> str:
    """Lower case, "&" as "and", punctuation (but apostrophes) and a leading article dropped."""
    text = text.replace("’", "'").replace("&", " and ").casefold()
    text = " ".join(_PUNCT.sub(" ", text).split())
    for article in ("the ", "a ", "an "):
        if text.startswith(article):
            return text[len(article) :]
    return text


__all__ = [
    "DEFAULT_DATA",
    "ENTITY_TYPES",
    "KINDS",
    "ROLES",
    "Conversation",
    "Turn",
    "load_dataset",
    "norm",
]
