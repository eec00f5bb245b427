"""Recall's hits as built: a loaded turn (``Turn``), turns and facts as hits, entity cards, the
superseded marks, near-duplicates dropped, strings neutralised unless scanned clean when written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from hermes_memory.extract.wording import render
from hermes_memory.recall import query as cues
from hermes_memory.recall._reads import ReadsSnapshot
from hermes_memory.records import RESTATEMENT, Episode, Fact, Hit, hit_of
from hermes_memory.security.threats import neutralise, neutralise_data
from hermes_memory.tier2._util import loads_dict, normalise
from hermes_memory.tier2.episodes import TurnRow
from hermes_memory.tier2.verdicts import CLEAN


class Turn:
    """A cached turn and what recall reads from it, worked out once per version of its row (the read
    cache, ``_reads``, drops it when a commit changes the row). Ranking reads the row's fields
    (``uuid``, ``session_id``, ``role``, ``speaker``, ``text``, ``timestamp``); its ``Episode`` and its hit
    (with its strings neutralised unless scanned clean when written) are built on first use: only the
    few turns that make a recall's list need them, and neutralising a turn costs more than ranking it."""

    __slots__ = (
        "_answers", "_episode", "_hit", "_key", "chatter", "metadata", "plain", "question", "role", "scope",
        "session_id", "speaker", "speaker_key", "text", "threat", "timestamp", "uuid",
    )  # fmt: skip

    def __init__(
        self,
        uuid: str,
        session_id: str,
        role: str,
        speaker: str | None,
        text: str,
        timestamp: float,
        metadata: dict[str, Any],
        scope: str,
        threat: int | None,
    ):
        self.uuid = uuid
        self.session_id = session_id
        self.role = role
        self.speaker = speaker
        self.text = text
        self.timestamp = timestamp
        self.metadata = metadata
        self.scope = scope
        self.threat = threat
        self.chatter: str | None = cues.chatter_in(metadata, text, role)
        self.question: bool = cues.is_question_turn(text)
        self.speaker_key: str = (speaker or "").casefold()  # what the speaker priors compare
        # A person's statement: no chatter, no question, not the AI's (no prior of its kind applies).
        self.plain: bool = self.chatter is None and not self.question and role != "assistant"
        self._answers: tuple[bool, tuple[str, ...]] | None = None
        self._episode: Episode | None = None
        self._hit: Hit | None = None
        self._key: str | None = None

    @classmethod
    def of_row(cls, row: TurnRow) -> Turn:
        """The turn of a ``tier2.episodes.TurnRow``, its metadata parsed as ``Episode.metadata`` is."""
        _, uuid, session_id, role, speaker, text, timestamp, metadata, scope, threat = row
        return cls(uuid, session_id, role, speaker, text, timestamp, loads_dict(metadata), scope, threat)

    @classmethod
    def of_episode(cls, episode: Episode, threat: int | None) -> Turn:
        """The turn of ``episode`` (with its threat verdict); ``episode`` is the one it gives."""
        turn = cls(episode.uuid, episode.session_id, episode.role, episode.speaker, episode.text,
                   episode.timestamp, episode.metadata, episode.scope, threat)  # fmt: skip
        turn._episode = episode
        return turn

    @property
    def episode(self) -> Episode:
        """The turn as an ``Episode``, built on first use (two threads may build it side by side: both
        build the same)."""
        episode = self._episode
        if episode is None:
            episode = self._episode = Episode(self.uuid, self.session_id, self.role, self.speaker, self.text,
                                              self.timestamp, self.metadata, self.scope)  # fmt: skip
        return episode

    @property
    def answers(self) -> tuple[bool, tuple[str, ...]]:
        """``query.answer_cues`` of the text, worked out on first use: only a question asking for a name
        reads them, and a recall at scale loads a few hundred turns (two threads may work them out side
        by side: both get the same)."""
        answers = self._answers
        if answers is None:
            answers = self._answers = cues.answer_cues(self.text)
        return answers

    @property
    def hit(self) -> Hit:
        """The turn as a hit (score 0). Two threads may build it side by side: both build the same."""
        hit = self._hit
        if hit is None:
            hit = self._hit = episode_hit(self.episode, 0.0, self.threat)
        return hit

    @property
    def key(self) -> str:
        """``normalise`` of the hit's text: near-duplicates share it."""
        key = self._key
        if key is None:
            key = self._key = normalise(self.hit.text)
        return key


def rescored(hit: Hit, score: float, tier: str) -> Hit:
    """``hit`` with another score and tier (``dataclasses.replace`` without its generic field walk) and
    its own copy of the metadata (a cached hit's dict is never handed out)."""
    return hit_of(hit.id, score, hit.text, tier, hit.kind, hit.timestamp, hit.source_ids, dict(hit.metadata))


class HitPool:
    """The best distinct candidates of one recall, in rank order, as the diversity pass reads them
    (``texts``, ``scores``, ``sessions``, ``tiers``); each becomes a hit only once chosen (``hit``): most of
    the pool never reaches the list, and a turn's hit costs a copy of its cached one."""

    __slots__ = ("_items", "scores", "sessions", "texts", "tiers")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.scores: list[float] = []
        self.sessions: list[Any] = []  # each hit's ``metadata["session_id"]``
        self.tiers: list[str] = []
        self._items: list[Turn | Hit] = []  # a turn (its hit made when chosen) or a hit built already

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: Turn | Hit, hit: Hit, score: float, tier: str) -> None:
        """``item`` (a turn, whose cached ``hit`` is given, or a hit built for this recall: ``hit`` itself)
        at ``score`` in ``tier``."""
        self._items.append(item)
        self.texts.append(hit.text)
        self.scores.append(score)
        self.sessions.append(hit.metadata.get("session_id"))
        self.tiers.append(tier)

    def hit(self, at: int, score: float) -> Hit:
        """The hit at position ``at``, with ``score``: a turn's cached hit copied (``rescored``); a hit
        built already as it is, or with the score when another."""
        item = self._items[at]
        if isinstance(item, Turn):
            return rescored(item.hit, score, self.tiers[at])
        if score == item.score:
            return item
        return hit_of(item.id, score, item.text, item.tier, item.kind, item.timestamp, item.source_ids,
                      item.metadata)  # fmt: skip


def build_hits(
    ranked: list[tuple[float, int, str, Any, str]],
    count: int,
    turns: dict[int, Turn],
    built: list[Hit],
    reads: ReadsSnapshot,
) -> tuple[HitPool, dict[str, int]]:
    """The first ``count`` candidates of ``ranked`` with distinct texts (near-duplicates dropped), from
    the turns, the facts (loaded in batches as they are reached, made hits) and the hits built already;
    and the row id of each turn among them, by its uuid (what later steps look a turn hit's turn up by)."""
    pool = HitPool()
    rows: dict[str, int] = {}
    seen: set[str] = set()
    facts: dict[str, tuple[Fact, int | None]] = {}
    start = 0
    while start < len(ranked) and len(pool) < count:
        batch = ranked[start : start + count + 10]
        start += len(batch)
        wanted = [key for _, _, kind, key, _ in batch if kind == "fact" and key not in facts]
        if wanted:
            facts.update(reads.facts_checked(wanted))
        for score, _, kind, key, tier in batch:
            if kind == "episode":
                turn = turns[key]
                text = turn.key
                if text in seen:
                    continue
                pool.add(turn, turn.hit, score, tier)
                rows[turn.uuid] = key
            else:
                if kind == "fact":
                    found = facts.get(key)
                    if found is None or found[0].extractor == RESTATEMENT:
                        continue  # gone, or a restatement found by its vector (a store of before)
                    hit = fact_hit(found[0], score, found[1], tier)
                else:
                    hit = built[key]
                text = dedupe_key(hit.text)
                if text in seen:
                    continue
                pool.add(hit, hit, score, tier)
            seen.add(text)
            if len(pool) == count:
                break
    return pool, rows


def mark_superseded(
    ranked: list[Hit], stale: dict[str, Fact], reads: ReadsSnapshot
) -> tuple[list[Hit], dict[str, Fact], dict[str, int | None]]:
    """Mark turns (``stale`` by turn uuid) and curated entries (by hit id) whose statement the memory
    has since superseded (``metadata.superseded_*``: by what, since when). Returns the hits and, by
    uuid, the current facts that replaced them and their threat verdicts."""
    out: list[Hit] = []
    replaced: dict[str, Fact] = {}
    marks: list[tuple[int, Fact, Fact | None]] = []
    olds = [(i, stale.get(h.source_ids[0] if h.kind == "episode" else h.id)) for i, h in enumerate(ranked)
            if (h.kind == "episode" and h.source_ids) or h.kind == "curated"]  # fmt: skip
    found = [(i, old) for i, old in olds if old is not None]
    currents = reads.current_of_many([old for _, old in found]) if found else {}
    for index, old in found:
        current = currents[old.uuid]
        marks.append((index, old, current))
        if current is not None:
            replaced[current.uuid] = current
    out.extend(ranked)
    threats = (
        {u: threat for u, (_, threat) in reads.facts_checked(list(replaced)).items()} if replaced else {}
    )
    for index, old, current in marks:
        hit = out[index]
        # When it stopped being true (the replacing statement's time) and when the memory learned it.
        meta = {**hit.metadata, "superseded_at": old.superseded_at, "valid_to": old.valid_to}
        if current is not None:
            shown = current.content
            if threats.get(current.uuid) != CLEAN:
                shown = neutralise(shown)
                if shown != current.content:
                    meta["neutralised"] = True
            meta["superseded_by"] = shown
            meta["superseded_by_id"] = f"fact:{current.uuid}"
        out[index] = replace(hit, metadata=meta)
    return out, replaced, threats


def episode_hit(episode: Episode, score: float, threat: int | None) -> Hit:
    """A turn as a hit; a turn not scanned clean when written has its strings neutralised."""
    meta = {"speaker": episode.speaker, "session_id": episode.session_id, "role": episode.role,
            **{k: v for k, v in episode.metadata.items() if k in ("dia_id", "chatter") and v}}  # fmt: skip
    hit = Hit(
        id=f"episode:{episode.uuid}", score=score, text=episode.text, tier="tier2", kind="episode",
        timestamp=episode.timestamp, source_ids=(episode.uuid,), metadata=meta,
    )  # fmt: skip
    return hit if threat == CLEAN else neutralised(hit)


def fact_hit(fact: Fact, score: float, threat: int | None, tier: str = "tier2") -> Hit:
    """A fact as a hit; a fact not scanned clean when written has its strings neutralised (its source
    turn ids are ids: scanned when written, never per hit)."""
    when = fact.valid_from if fact.valid_from is not None else fact.created_at
    meta = {"category": fact.category, "confidence": fact.confidence, "source_type": fact.source_type,
            "session_id": fact.source_id if fact.source_type == "session" else None}  # fmt: skip
    # ``hit_of``: a recall makes a hit of each fact it reaches (the dataclass's __init__ costs twice as much).
    hit = hit_of(f"fact:{fact.uuid}", score, fact.content, tier, "fact", when, fact.source_episodes, meta)
    return hit if threat == CLEAN else neutralised(hit)


def entity_card(name: str, kind: str, aliases: Sequence[str], description: str | None,
          links: Sequence[tuple[str, str]]) -> str:  # fmt: skip
    """An entity card: ``Name (type; also: a, b): description; Name relation Other; Other relation Name``,
    each relation worded as a fact is ("the user has Biscuit", "Alice is working on Orion")."""
    head = f"{name} ({kind}" + (f"; also: {', '.join(aliases)}" if aliases else "") + ")"
    parts = [description] if description else []
    for relation, other in links:
        if relation.startswith("<-"):
            parts.append(render(other, relation.removeprefix("<-"), name, False, kind))
        else:
            parts.append(render(name, relation, other, False, ""))
    return head + (": " + "; ".join(parts) if parts else "")


def neutralised(hit: Hit) -> Hit:
    """``hit`` with every string in it neutralised; ``metadata.neutralised`` when that changed any."""
    text = neutralise(hit.text)
    meta: dict[str, Any] = neutralise_data(hit.metadata)
    sources = tuple(neutralise(s) for s in hit.source_ids)
    if text != hit.text or meta != hit.metadata or sources != hit.source_ids:
        meta["neutralised"] = True
    return replace(hit, text=text, metadata=meta, source_ids=sources)


def current_first(
    hits: list[Hit], replaced: dict[str, Fact], threats: dict[str, int | None], limit: int
) -> list[Hit]:
    """Every superseded line after the current fact that replaced it: moved behind it when both are
    hits, else the current fact is put in front of it (and the list cut back to ``limit``)."""
    out: list[Hit] = []
    for hit in hits:
        by = hit.metadata.get("superseded_by_id")
        if by is None or by in {h.id for h in out}:
            out.append(hit)
            continue
        later = next((h for h in hits if h.id == by), None)
        if later is None:
            fact = replaced.get(by.removeprefix("fact:"))
            if fact is None:
                out.append(hit)
                continue
            later = fact_hit(fact, hit.score, threats.get(fact.uuid))
        else:
            later = replace(later, score=hit.score)
        out.extend((later, hit))
    ordered: dict[str, Hit] = {}
    for hit in out:  # a fact moved forward is not shown again at its old place
        ordered.setdefault(hit.id, hit)
    return list(ordered.values())[:limit]


@lru_cache(maxsize=4096)
def dedupe_key(text: str) -> str:
    return normalise(text)


__all__ = [
    "HitPool",
    "Turn",
    "build_hits",
    "current_first",
    "dedupe_key",
    "entity_card",
    "episode_hit",
    "fact_hit",
    "mark_superseded",
    "neutralised",
    "rescored",
]
