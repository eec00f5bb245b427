"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._constructor import merge_overrides, seed_overrides
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.core.memory import Memory
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.records import AsOf
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.security.secrets import redact_data
from hermes_memory.security.threats import ensure_safe, neutralise, neutralise_data
from hermes_memory.tier2 import Tier2

if TYPE_CHECKING:
    from hermes_memory.core.ingest import Flushed
    from hermes_memory.cron.context import JobContext
    from hermes_memory.cron.jobs import JobProgress
    from hermes_memory.graph.nx_store import KnowledgeGraph
    from hermes_memory.llm.client import LLMClient
    from hermes_memory.tier3.semantic import Progress

log = logging.getLogger(__name__)

# A rendered block larger than this is no longer a memory block (the largest context windows are ~1M
# tokens; Hermes asks for 300).
MAX_BUDGET_TOKENS = 100_000
_MAX_SEARCH_LIMIT = 1000


class MemoryAPI:
    """Unified interface for all memory tiers; every public method returns the seed's envelope.

    Construction opens Tier 2 (creating and migrating the DB) and freezes the Tier 1 snapshot.
    ``scope`` (default: config ``scope.name``) selects this agent's scope in a store shared by several
    agents; every store is bound to it, so nothing of another scope is read, counted or exported.
    The seed's keywords ``tier2_enabled``, ``tier3_enabled``, ``graph_enabled``, ``tier3_backend`` and
    ``embedding_model`` set ``tier2.enabled``, ``tier3.enabled``, ``graph.enabled``, ``tier3.backend``
    and ``tier3.embedding_model`` (ValidationError for a non-bool switch or an unregistered name).
    ``llm_client`` (any object with HAEMA's ``generate_structured(system, user, response_model)``,
    the ``hermes_memory.llm.LLMClient`` protocol) is the LLM of the optional LLM path; giving one
    switches that path on whatever config ``llm`` says.
    Raises ConfigError for bad configuration and StorageError when the store cannot be opened.
    """

    def __init__(
        self,
        config: Config | str | None = None,
        *,
        profile: str | None = None,
        hermes_home: str | os.PathLike[str] | None = None,
        config_path: str | os.PathLike[str] | None = None,
        actor: str = "user",
        scope: str | None = None,
        backend: str | None = None,
        background: bool = False,
        tier2_enabled: bool | None = None,
        tier3_enabled: bool | None = None,
        graph_enabled: bool | None = None,
        tier3_backend: str | None = None,
        embedding_model: str | None = None,
        llm_client: LLMClient | None = None,
        **overrides: Any,
    ):
        # Names given here are checked as input (ValidationError); the same names read from a config
        # file are checked there (ConfigError naming the key).
        if isinstance(config, str):  # the seed's signature: MemoryAPI("work") names the profile
            if profile is not None:
                raise ValidationError("the profile is given twice (first argument and profile=)")
            config, profile = None, config
        if profile is not None:
            v.profile_name("profile", profile)
        if scope is not None:
            check_scope_name(scope)
        # The seed's keywords (HMNL 8.1) are config overrides: tier2_enabled -> tier2.enabled, ...
        keywords = {
            "tier2_enabled": tier2_enabled, "tier3_enabled": tier3_enabled, "graph_enabled": graph_enabled,
            "tier3_backend": tier3_backend, "embedding_model": embedding_model,
        }  # fmt: skip
        given = [name for name, value in keywords.items() if value is not None]
        if config is not None and given:
            raise ConfigError(f"pass either a Config or the keywords {', '.join(given)}, not both")
        merge_overrides(overrides, seed_overrides(**keywords))
        if llm_client is not None and not callable(getattr(llm_client, "generate_structured", None)):
            raise ConfigError(
                "llm_client must implement generate_structured(system, user, response_model) "
                f"(hermes_memory.llm.LLMClient), got {type(llm_client).__name__}"
            )
        if config is None:
            if profile is not None:
                overrides["profile"] = profile
            config = load_config(config_path, hermes_home=hermes_home, **overrides)
        elif profile is not None or hermes_home is not None or config_path is not None or overrides:
            raise ConfigError("pass either a Config or profile/hermes_home/config_path/overrides, not both")
        self.config = config
        self.actor = actor
        self.view = _scope_view(config, scope)
        self.scope = self.view.own
        self._core = Memory(
            config, actor=actor, view=self.view, backend=backend, background=background, llm_client=llm_client
        )

    def _run(
        self, tier: str, fn: Callable[[], Any], *, tiers: Sequence[str] | None = None, **meta: Any
    ) -> Envelope:
        """The one envelope edge: ``fn``'s result (records turned into plain data) wrapped by ``run``,
        its data's credentials redacted when config ``security.redact_secrets`` is on (text stored
        before redaction existed, imported, or written with the switch off is never shown verbatim)."""
        envelope = run(tier, fn, tiers=tiers, **meta)
        if self.config.security.redact_secrets and envelope["success"]:
            envelope["data"] = redact_data(envelope["data"])
        return envelope

    @property
    def tier2(self) -> Tier2:
        """The Tier 2 stores, for code that works with records instead of envelopes."""
        return self._core.tiers.tier2()

    # -- cross-tier -----------------------------------------------------------------------------
    def stats(self) -> Envelope:
        """Counts and sizes of every enabled tier."""
        return self._run("multi", self._core.stats, tiers=self.enabled_tiers())

    def enabled_tiers(self) -> list[str]:
        return self._core.tiers.enabled()

    def close(self, drain_timeout: float = 5.0, *, build_indexes: bool = True) -> None:
        """Stop the background worker and close every store (``Memory.close``)."""
        self._core.close(drain_timeout, build_indexes=build_indexes)

    def wait_closed(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` s) until a close left to a background thread has finished; True when
        the stores are closed (a reopen in this process can then take the vector store again)."""
        return self._core.wait_closed(timeout)

    # == recall and search (Memory.recall, Memory.semantic) =========================================
    @property
    def core(self) -> Memory:
        """The composed core, for code that works with records instead of envelopes (the Hermes
        provider's prefetch reads ``core.recall``)."""
        return self._core

    def recall(
        self,
        query: str,
        tiers: Sequence[str] | None = None,
        limit: int | None = None,
        as_of: float | Mapping[str, Any] | str | None = None,
        budget_tokens: int | None = None,
        *,
        session_id: str | None = None,
        limit_per_tier: int | None = None,
    ) -> Envelope:
        """What memory knows about the query, from every tier, ranked; ``as_of`` answers what was
        believed then. Facts it returns are reinforced (access count).

        Every store answers: turns, facts, texts indexed with ``semantic_index``, timeline events,
        entity cards and curated entries, ranked by one fusion; each hit has its ``kind``, ``tier`` (the
        tier whose search found it) and ``source`` (in words; ``source_ids`` the records behind it).
        ``limit`` is the number of hits in all (default 10); ``limit_per_tier`` (the seed's form,
        ``recall(query, tiers=None, limit_per_tier=5)``) returns up to that many hits of each tier
        queried, still in the one fused order. Giving both is a ValidationError.

        ``meta.tiers_answered`` lists the tiers that answered; ``meta.tiers_unavailable`` maps each tier
        that could not (another process owns the vector store, the embedder or graph failed) to why, in
        words; the others still answer.

        With ``llm.query_decomposition`` on, the LLM splits the question into sub-queries whose hits
        are fused with the question's (``meta.sub_queries``); when it fails, the question is recalled as
        asked and ``meta.warnings`` says so."""
        from hermes_memory.core.recall import query_meta

        meta: dict[str, Any] = query_meta([], {})

        def call() -> dict[str, Any]:
            text, wanted, args = _recall_args(self._core.tiers.max_chars, query, tiers, limit, as_of,
                                              budget_tokens, session_id, limit_per_tier)  # fmt: skip
            meta.update(query_meta(self._core.recall.tiers_for(wanted), {}))  # said also if it fails
            found = self._core.recall.query(text, tiers=wanted, decompose=True, **args)
            meta.update(found.meta())
            return found.to_dict()

        envelope = self._run("multi", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_index(
        self,
        text: str,
        source_type: str = "session",
        session_id: str | None = None,
        message_id: int | None = None,
        *,
        category: str | None = None,
        timestamp: float | None = None,
        wait: bool = True,
    ) -> Envelope:
        """Chunk and index a text; with ``wait`` the embeddings are written before returning."""

        def call() -> dict[str, Any]:
            body = v.text("text", text, max_chars=self._core.tiers.max_chars).strip()
            ensure_safe(body)
            kind = v.choice("source_type", source_type, {"session", "memory", "tool", "fact", "document"})
            sid = v.optional_text("session_id", session_id, max_chars=200)
            if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int)):
                raise ValidationError(f"message_id must be an integer, got {type(message_id).__name__}")
            if category is not None:
                v.choice("category", category, v.FACT_CATEGORIES)
            when = v.optional_time("timestamp", timestamp)
            return self._core.semantic.index(
                body, source_type=kind, session_id=sid, message_id=message_id, category=category,
                timestamp=when, wait=wait,
            ).to_dict()  # fmt: skip

        return self._run("tier3", call)

    def semantic_search(
        self,
        query: str,
        limit: int = 10,
        min_score: float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Chunks nearest in meaning to the query (score in [0, 1], higher is closer)."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            floor = self._core.semantic.min_score()  # ConfigError first when Tier 3 is off
            floor = floor if min_score is None else v.unit_interval("min_score", min_score)
            if filters is not None and not isinstance(filters, Mapping):
                raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
            found = self._core.semantic.search(text, limit=lim, min_score=floor, filters=filters)
            meta.update(found.meta(), min_score=floor)
            return found.rows()

        envelope = self._run("tier3", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_hybrid(self, query: str, limit: int = 10) -> Envelope:
        """Full-text (BM25) and vector results fused by reciprocal rank fusion."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            found = self._core.semantic.hybrid(
                text, limit=v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            )
            meta.update(found.meta())
            return found.rows()

        envelope = self._run("multi", call, tiers=["tier2", "tier3"])
        envelope["meta"].update(meta)
        return envelope

    def embed_pending(self, max_items: int | None = None, progress: Progress | None = None) -> Envelope:
        """Drain the durable embed queue into the vector backend (the ``embed_queue`` job)."""

        def call() -> dict[str, int]:
            cap = None if max_items is None else v.positive_int("max_items", max_items)
            v.optional_callback("progress", progress)
            return self._core.semantic.embed_pending(cap, progress).to_dict()

        return self._run("tier3", call)

    def reindex(self, progress: Progress | None = None) -> Envelope:
        """Rebuild every vector collection from Tier 2 (after switching backend or embedder)."""

        def call() -> dict[str, Any]:
            v.optional_callback("progress", progress)
            report, search = self._core.semantic.reindex(progress)
            return {**report.to_dict(), "search": search}  # which path answers from now on

        return self._run("tier3", call)

    # == writes, ingest, tiers 1-3 (Memory.ingest, .curated, .mirror, .knowledge) ====================
    # -- remembering turns and the durable queues (Memory.ingest) ---------------------------------
    def remember_turn(
        self,
        user: str | None,
        assistant: str | None,
        session_id: str,
        time_: float | datetime | str | None = None,
        *,
        user_name: str | None = None,
        assistant_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Envelope:
        """Durably queue one exchange (one small insert) and return; the worker stores and extracts it."""

        def call() -> dict[str, Any]:
            checked = c.turn(user, assistant, session_id, time_, user_name=user_name,
                             assistant_name=assistant_name, metadata=metadata, turn_id=turn_id)  # fmt: skip
            return self._core.ingest.remember_turn(**checked).to_dict()

        return self._run("tier2", call)

    def remember_message(
        self,
        text: str,
        session_id: str,
        time_: float | datetime | str | None = None,
        *,
        role: str = "user",
        speaker: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Envelope:
        """Durably queue a single message (the one-sided form of ``remember_turn``)."""

        def call() -> dict[str, Any]:
            checked = c.message(text, session_id, time_, role=role, speaker=speaker, metadata=metadata,
                                turn_id=turn_id)  # fmt: skip
            return self._core.ingest.remember_message(**checked).to_dict()

        return self._run("tier2", call)

    def observe_many(self, items: Sequence[Mapping[str, Any]], session_id: str | None = None) -> Envelope:
        """Engram's batch remember: durably queue many messages or turns in one call, all or nothing.

        Each item is a message (``text``, optional ``role``, ``speaker``) or a turn (``user`` and/or
        ``assistant``, optional ``user_name``, ``assistant_name``), with optional ``session_id`` (default:
        the call's ``session_id``), ``time`` (Unix seconds, datetime or ISO-8601), ``metadata``, ``turn_id``.
        Every item is checked first (ValidationError naming ``items[i]``: nothing is queued), then all are
        committed in ONE transaction. data: ``queued`` (new turns), ``turns`` [{turn_id, queued, time}]."""

        def call() -> dict[str, Any]:
            turns = self._core.ingest.remember_many(c.observe_items(items, session_id))
            return {"queued": sum(q.queued for q in turns), "turns": [q.to_dict() for q in turns]}

        return self._run("tier2", call)

    def working_memory(self, session_id: str) -> Envelope:
        """The session's working memory (Engram's short-term store): the last messages remembered in it
        by this process (at most config ``limits.working_memory_items``), oldest first; empty after
        ``end_session``. The Hermes provider's session is Hermes' session id: its ``sync_turn`` fills the
        buffer and Hermes ending or switching the session clears it."""

        def call() -> dict[str, Any]:
            sid = v.text("session_id", session_id, max_chars=200)
            items = self._core.working.items(sid)
            return {"session_id": sid, "capacity": self._core.working.capacity,
                    "items": [o.to_dict() for o in items]}  # fmt: skip

        return self._run("tier2", call)

    def end_session(self, session_id: str) -> Envelope:
        """Clear the session's working memory (its messages stay remembered: queued and stored).
        data: ``cleared`` (how many observations the buffer held)."""

        def call() -> dict[str, Any]:
            sid = v.text("session_id", session_id, max_chars=200)
            return {"session_id": sid, "cleared": self._core.working.end(sid)}

        return self._run("tier2", call)

    def flush(self, timeout: float | None = 30.0) -> Envelope:
        """Wait until every queued turn and embedding is written (or ``timeout`` seconds pass).

        While another process holds the vector store, that process writes the embeddings: flush waits
        for them while the queue shrinks, and ``meta.degraded`` says why vectors may still be pending.
        """
        flushed: list[Flushed] = []

        def call() -> dict[str, Any]:
            flushed.append(self._core.ingest.flush(c.flush_timeout(timeout)))
            return flushed[0].to_dict()

        envelope = self._run("tier2", call, tiers=["tier2", "tier3"])
        if flushed and flushed[0].degraded:
            envelope["meta"]["degraded"] = list(flushed[0].degraded)
        return envelope

    def ingest_pending(self, timeout: float | None = 2.0) -> Envelope:
        """Write the queued turns now, in the caller's thread (up to ``timeout`` s), so a recall right
        after sees them (by keyword; their embeddings follow in the background). A process that exited
        left its turns in the durable queue: the next one calls this when it opens the store.
        data: ``written`` (turns) and ``pending`` (see ``pending``)."""
        return self._run(
            "tier2", lambda: self._core.ingest.ingest_pending(c.ingest_timeout(timeout)).to_dict()
        )

    def pending(self) -> Envelope:
        """Work queued but not yet written: ``turns`` (in the turn inbox and queue, not yet stored and
        extracted) and ``embeddings`` (vector writes waiting, 0 without Tier 3). A Hermes process exits
        without waiting for either; the next process (or a long-lived one) finishes them."""
        return self._run("tier2", lambda: self._core.ingest.pending().to_dict(), tiers=["tier2", "tier3"])

    def get_latest(self, count: int = 10, begin: float | None = None) -> Envelope:
        """The newest ``count`` episodes (before ``begin`` if given), oldest first (HAEMA's latest slice);
        their text is neutralised (memory is data, never instructions)."""

        def call() -> list[dict[str, Any]]:
            n, before = v.positive_int("count", count, maximum=1000), v.optional_time("begin", begin)
            return [neutralise_data(e.to_dict()) for e in self._core.ingest.latest(n, before)]

        return self._run("tier2", call)

    def latest(self, begin: int = 1, count: int = 10) -> Envelope:
        """HAEMA's ``get_latest(begin, count)``: the texts of the newest episodes, newest first, from
        the 1-indexed position ``begin`` (1 = the newest). ``count`` <= 0 and a ``begin`` past the end
        give ``[]``; ``begin`` < 1 is a ValidationError. Text is neutralised (memory is data)."""

        def call() -> list[str]:
            start = v.positive_int("begin", begin, maximum=1_000_000)
            if isinstance(count, bool) or not isinstance(count, int):
                raise ValidationError(f"count must be an integer, got {type(count).__name__}")
            n = count
            if n <= 0:
                return []
            n = min(n, 1000)
            episodes = self._core.ingest.latest(start - 1 + n)
            newest_first = list(reversed(episodes))[start - 1 : start - 1 + n]
            return [neutralise(e.text) for e in newest_first]

        return self._run("tier2", call)

    def add(
        self,
        contents: str | Sequence[str],
        *,
        category: str = "general",
        source_id: str | None = None,
        update_core: bool = True,
    ) -> Envelope:
        """HAEMA's single write API. A str is one raw message: with the LLM it is pre-split into memory
        units. Each unit is merged with its nearest stored facts (top ``llm.merge_top_k`` by vector,
        cosine distance <= ``llm.merge_distance_cutoff``) by one N:M reconstruction; the merged
        memories are stored as facts and the facts they replace retired (``superseded_by``, their
        source episodes carried over); then core memory is updated once (``update_core``). Without an
        LLM the contents are stored as facts as given. data: ``memories``, ``stored`` (uuids),
        ``related``, ``retired``, ``split``, ``fallback``/``reason``, ``core``."""

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            given: str | list[str]
            if contents is None:
                raise ValidationError("contents must be a string or a list of strings, got NoneType")
            if isinstance(contents, str):
                given = v.text("contents", contents, max_chars=limit).strip()
                ensure_safe(given)
            else:
                given = [item.strip() for item in v.string_list("contents", contents, max_chars=limit)]
                for item in given:
                    ensure_safe(item)
            kind = v.choice("category", category, v.FACT_CATEGORIES)
            sid = v.optional_text("source_id", source_id, max_chars=500)
            if not isinstance(update_core, bool):
                raise ValidationError("update_core must be true or false")
            return self._core.llm.add(given, category=kind, source_id=sid, update_core=update_core).to_dict()

        return self._run("tier2", call, tiers=["tier2", "tier3", "llm"])

    # -- the host's curated writes, mirrored as facts (Memory.mirror) ------------------------------
    def mirror_curated_write(
        self,
        action: str,
        store: str,
        content: str,
        old_text: str | None = None,
        *,
        speaker: str | None = None,
        source_id: str | None = None,
    ) -> Envelope:
        """Mirror one curated write (``add`` / ``replace`` / ``remove`` of an entry in ``store``).

        The new entry is stored as a fact (source ``memory``) and so are the statements extracted from it
        (as said by ``speaker``, the user); those supersede older facts they contradict. For replace and
        remove, the entry that ``old_text`` identifies (a substring, as the host's tool takes it) is found
        among the mirrored facts and the session-start snapshot, and every fact that came from it is
        closed: superseded by the new entry (replace) or archived (remove). data: ``stored``,
        ``superseded``, ``archived`` (fact uuids). Raises ValidationError for a bad action or store,
        ThreatDetectedError for unsafe content."""

        def call() -> dict[str, Any]:
            checked = c.mirror_write(action, store, content, old_text, speaker=speaker, source_id=source_id,
                                     max_chars=self._core.tiers.max_chars)  # fmt: skip
            return self._core.mirror.write(**checked).to_dict()

        return self._run("tier2", call)

    # -- Tier 1: Hermes' curated MEMORY.md / USER.md (Memory.curated) -----------------------------
    def curated_get(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store ("memory" or "user"), as Hermes' file text."""
        return self._run("tier1", lambda: self._core.curated.get(store))

    def curated_entries(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store as a list."""
        return self._run("tier1", lambda: self._core.curated.entries(store))

    def curated_add(self, content: str, store: str = "memory") -> Envelope:
        """Append an entry (exact duplicates are a no-op; over the limit is refused with the entries)."""
        return self._run("tier1", lambda: self._core.curated.add(store, _entry("content", content)).to_dict())

    def curated_replace(self, old: str, new: str, store: str = "memory") -> Envelope:
        """Replace the one entry containing ``old`` with ``new``."""

        def call() -> dict[str, Any]:
            old_text, new_text = _entry("old", old), _entry("new", new)
            return self._core.curated.replace(store, old_text, new_text).to_dict()

        return self._run("tier1", call)

    def curated_remove(self, substring: str, store: str = "memory") -> Envelope:
        """Remove the one entry containing ``substring``."""
        return self._run(
            "tier1", lambda: self._core.curated.remove(store, _entry("substring", substring)).to_dict()
        )

    def curated_migrate(self, force: bool = False) -> Envelope:
        """Read the existing MEMORY.md / USER.md entries into Tier 2 facts (source ``curated``), once per
        scope (HMNL §14; the Hermes provider runs it when it first opens a store): a user who had curated
        memory before keeps it searchable as facts. ``force`` runs it again; facts deduplicate, so nothing
        is stored twice. data: ran, entries, stored, flagged (entries the threat scan refused)."""

        def call() -> dict[str, Any]:
            if not isinstance(force, bool):
                raise ValidationError(f"force must be true or false, got {v.shown(force)}")
            return self._core.mirror.migrate(force=force).to_dict()

        return self._run("tier2", call, tiers=["tier1", "tier2"])

    def curated_snapshot(self) -> Envelope:
        """The frozen snapshot taken when this API was opened (what the system prompt shows)."""
        return self._run("tier1", lambda: self._core.curated.snapshot().to_dict())

    # -- Tier 2: facts (Memory.knowledge) ---------------------------------------------------------
    def fact_store(
        self,
        content: str,
        category: str = "general",
        confidence: float = 1.0,
        source: str = "user",
        *,
        source_id: str | None = None,
        expires_at: float | None = None,
        ttl_days: float | None = None,
        importance: float | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
    ) -> Envelope:
        """Store a fact (deduplicated by normalised content). ``subject``/``predicate``/``object`` say
        what it is about (all three: a newer object for the same subject and predicate supersedes the
        older fact); without them they are read from the text when it states them, so ``fact_history``
        finds the fact under its subject. Without ``importance`` the fact's salience on write (wording,
        explicit cues such as "remember this", novelty against the nearest facts) is stored as its
        importance, which recall ranks by and prune decays from."""

        def call() -> dict[str, Any]:
            stored = self._core.knowledge.store_fact(
                v.text("content", content, max_chars=self._core.tiers.max_chars).strip(),
                category=v.choice("category", category, v.FACT_CATEGORIES),
                confidence=v.unit_interval("confidence", confidence),
                source=v.choice("source", source, v.SOURCE_TYPES),
                source_id=v.optional_text("source_id", source_id, max_chars=500),
                importance=None if importance is None else v.unit_interval("importance", importance),
                expires_at=c.ttl_expiry(expires_at, ttl_days),
                triple=c.triple(subject, predicate, object),
            )
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return self._run("tier2", call)

    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        valid_from: float | datetime | str | None = None,
        valid_to: float | datetime | str | None = None,
        *,
        category: str | None = None,
        confidence: float = 1.0,
        source: str = "user",
        source_id: str | None = None,
        importance: float | None = None,
    ) -> Envelope:
        """Engram's triple with valid time: (subject, predicate, object) true from ``valid_from``
        (default now) until ``valid_to`` (default open; times as Unix seconds, datetime or ISO-8601).
        An older value of the same subject and predicate whose valid time overlaps is superseded (closed
        at ``valid_from``, kept for history and ``as_of``), as the fact store does for contradictions; a
        value already known to begin later makes this one the older value (it ends where that begins).
        data: the fact, ``created``, ``superseded`` (uuids)."""

        def call() -> dict[str, Any]:
            checked = c.asserted_triple(subject, predicate, object, valid_from, valid_to, category=category,
                               confidence=confidence, source=source, source_id=source_id,
                               importance=importance)  # fmt: skip
            stored = self._core.knowledge.assert_fact(**checked)
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return self._run("tier2", call)

    def fact_query(
        self,
        query: str | None = None,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.5,
        *,
        as_of: float | Mapping[str, Any] | str | None = None,
    ) -> Envelope:
        """Facts matching free text (BM25) and filters; without text, the newest. ``as_of``: a time
        (believed then), or ``{"valid": t, "known": t}`` (true at ``valid`` as known at ``known``)."""

        def call() -> list[dict[str, Any]]:
            max_chars = self._core.tiers.max_chars
            text = None if query is None else v.text("query", query, max_chars=max_chars, allow_empty=True)
            found = self._core.knowledge.query_facts(
                text.strip() if text else None,
                category=None if category is None else v.choice("category", category, v.FACT_CATEGORIES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
                min_confidence=v.unit_interval("min_confidence", min_confidence),
                as_of=c.as_of(as_of),
            )
            return [{**s.fact.to_dict(), "score": round(s.score, 6)} for s in found]

        return self._run("tier2", call)

    def fact_get(self, uuid: str) -> Envelope:
        """One fact by uuid."""
        return self._run(
            "tier2", lambda: self._core.knowledge.get_fact(v.text("uuid", uuid, max_chars=100)).to_dict()
        )

    def fact_update(self, uuid: str, **fields: Any) -> Envelope:
        """Change content, category, confidence, expires_at or importance of a fact."""

        def call() -> dict[str, Any]:
            ref = v.text("uuid", uuid, max_chars=100)
            checked = c.fact_fields(fields, self._core.tiers.max_chars)
            return self._core.knowledge.update_fact(ref, checked).to_dict()

        return self._run("tier2", call)

    def fact_delete(self, uuid: str, soft: bool = True) -> Envelope:
        """Archive (soft=True) or permanently remove a fact."""

        def call() -> dict[str, Any]:
            v.text("uuid", uuid, max_chars=100)
            if not isinstance(soft, bool):
                raise ValidationError(f"soft must be true or false, got {v.shown(soft)}")
            self._core.knowledge.delete_fact(uuid, soft=soft)
            return {"uuid": uuid, "deleted": True, "soft": soft}

        return self._run("tier2", call)

    # -- Tier 2: entities and relations (Memory.knowledge) ----------------------------------------
    def entity_ensure(
        self,
        name: str,
        entity_type: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> Envelope:
        """Create an entity or return the existing one with this name/alias and type."""

        def call() -> dict[str, Any]:
            ensured = self._core.knowledge.ensure_entity(
                v.text("name", name, max_chars=200).strip(),
                v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                aliases=v.string_list("aliases", aliases, max_chars=200),
                description=v.optional_text("description", description, max_chars=self._core.tiers.max_chars),
            )
            return {**ensured.entity.to_dict(), "created": ensured.created}

        return self._run("tier2", call)

    def entity_link(
        self,
        from_name: str,
        to_name: str,
        relation: str,
        strength: float = 1.0,
        *,
        evidence_fact_id: str | None = None,
    ) -> Envelope:
        """Relate two existing entities (by name, alias or uuid) with a typed, weighted edge."""

        def call() -> dict[str, Any]:
            return self._core.knowledge.link(
                v.text("from_name", from_name, max_chars=200).strip(),
                v.text("to_name", to_name, max_chars=200).strip(),
                v.text("relation", relation, max_chars=100).strip().lower().replace(" ", "_"),
                strength=v.unit_interval("strength", strength),
                evidence_fact_id=v.optional_text("evidence_fact_id", evidence_fact_id, max_chars=100),
            ).to_dict()

        return self._run("tier2", call)

    def entity_query(
        self, name: str | None = None, entity_type: str | None = None, limit: int = 10
    ) -> Envelope:
        """Entities by name/alias (case-insensitive, then full-text) and/or type."""

        def call() -> list[dict[str, Any]]:
            text = None if name is None else v.text("name", name, max_chars=200, allow_empty=True).strip()
            found = self._core.knowledge.query_entities(
                text or None,
                entity_type=None
                if entity_type is None
                else v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )
            return [match.to_dict() for match in found]

        return self._run("tier2", call)

    # -- Tier 2: timeline and audit (Memory.knowledge) --------------------------------------------
    def timeline_add(
        self,
        event_type: str,
        title: str,
        description: str | None = None,
        importance: float = 0.5,
        related_entities: Sequence[str] | None = None,
        *,
        timestamp: float | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """Record a dated event; related entities are given by name, alias or uuid."""

        def call() -> dict[str, Any]:
            checked = c.event(
                event_type, title, description, importance, related_entities,
                timestamp=timestamp, session_id=session_id, max_chars=self._core.tiers.max_chars,
            )  # fmt: skip
            return self._core.knowledge.add_event(**checked).to_dict()

        return self._run("tier2", call)

    def timeline_query(
        self,
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        limit: int = 20,
        *,
        entity: str | None = None,
    ) -> Envelope:
        """Events within [start, end], newest first; optionally of one type or about one entity."""

        def call() -> list[dict[str, Any]]:
            lo, hi = v.optional_time("start", start), v.optional_time("end", end)
            if lo is not None and hi is not None and lo > hi:
                raise ValidationError(f"start ({lo}) is after end ({hi})")
            events = self._core.knowledge.query_events(
                start=lo, end=hi,
                event_type=None if event_type is None else v.choice("event_type", event_type, v.EVENT_TYPES),
                entity=None if entity is None else v.text("entity", entity, max_chars=200).strip(),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )  # fmt: skip
            return [e.to_dict() for e in events]

        return self._run("tier2", call)

    def audit_log(self, limit: int = 50, target_uuid: str | None = None) -> Envelope:
        """The newest audit entries (what was written, by whom, when)."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=c.MAX_LIMIT)
            target = v.optional_text("target_uuid", target_uuid, max_chars=100)
            return [e.to_dict() for e in self._core.knowledge.audit_log(limit=lim, target_uuid=target)]

        return self._run("tier2", call)

    # == operations, maintenance, history, graph, LLM (Memory.forgetting, .transfer, ...) =============
    # -- forget (GDPR erasure) --------------------------------------------------------------------
    def forget(
        self, id: str, *, confirm: bool = False, include_related: Any = False, confirm_large: bool = False
    ) -> Envelope:
        """Forget one fact, episode, timeline event, relation, entity (every mention) or indexed chunk;
        ``id`` is its uuid or the id a recall hit carries ("episode:<uuid>", "fact:<uuid>", ...).

        Without ``confirm=True`` returns the preview (counts per tier, curated entries affected, and for
        an entity the ``related`` names it is also mentioned under) and changes nothing;
        ``include_related`` (True, or a list of related names) adds those. A forget of more than a few
        turns is large: its preview has a ``warning`` and it needs ``confirm_large=True`` as well. Raises
        (in the envelope)
        ValidationError for an empty id, a curated entry's id or a bad ``include_related``, NotFoundError
        for an unknown id;
        VectorStoreBusyError (nothing deleted) while another process holds the vector store.
        """

        def call() -> dict[str, Any]:
            sure, include = _confirm(confirm), _include(include_related)
            large = _confirm(confirm_large, "confirm_large")
            forgetting = self._core.forgetting
            return forgetting.forget(id, confirm=sure, include=include, confirm_large=large).to_dict()

        return self._run("multi", call, tiers=self.enabled_tiers())

    def forget_entity(
        self, name: str, *, confirm: bool = False, include_related: Any = False, confirm_large: bool = False
    ) -> Envelope:
        """Forget an entity by name or alias: every row, entry, vector, graph node and queued turn that
        mentions it. Preview unless ``confirm=True``; the preview's ``related`` lists other names it is
        mentioned under (first name, title + surname, possessives, aliases given in the text, related
        entities) with their row counts, and ``include_related`` (True, or a list of those names) forgets
        them too. A turn is never forgotten because of who spoke it; a forget of more than a few turns is
        large (a ``warning`` in the preview) and needs ``confirm_large=True`` as well. Raises
        ValidationError for an empty name, a bad ``include_related`` or a large forget without
        ``confirm_large``, NotFoundError
        when nothing mentions it, VectorStoreBusyError (nothing deleted) while another process holds the
        vector store."""

        def call() -> dict[str, Any]:
            sure, clean = _confirm(confirm), v.text("name", name, max_chars=200).strip()
            include, large = _include(include_related), _confirm(confirm_large, "confirm_large")
            return self._core.forgetting.forget_entity(
                clean, confirm=sure, include=include, confirm_large=large
            ).to_dict()

        return self._run("multi", call, tiers=self.enabled_tiers())

    def finish_erasures(self) -> Envelope:
        """Finish forgets a crash interrupted or another process's vector store held up (``doctor
        --repair`` calls this). data: [{id, target, left: [steps still to do]}]. Raises StorageError."""
        return self._run("multi", self._core.forgetting.finish_erasures, tiers=self.enabled_tiers())

    # -- export / import, backup / restore ----------------------------------------------------------
    def export_json(self, path: str | os.PathLike[str] | None = None) -> Envelope:
        """Export every tier as JSON; with ``path`` write it there (data: path and counts), else data is
        the document, with the chunks' stored vectors. Raises StorageError."""
        transfer = self._core.transfer

        def call() -> dict[str, Any]:
            if path is None:
                return transfer.export_document()
            return transfer.export_file(Path(v.path("path", path)))

        # Not through ``_run``: the document is redacted by the core itself (each changed row's
        # content_hash stays true, its base64 vectors untouched).
        return run("multi", call, tiers=self.enabled_tiers())

    def import_json(self, data: Any, merge: bool = True) -> Envelope:
        """Import an export (a dict, or a path to a file) all or nothing, into this scope only. ``merge``
        skips duplicates (same uuid or content hash); without it the home must be empty. Texts without a
        stored vector (the export's or this home's) are queued for embedding and the graph is rebuilt.
        Raises ValidationError (malformed; a reference outside this scope), ThreatDetectedError (a
        flagged curated entry), ConflictError (not empty, no merge; curated limits)."""

        def call() -> dict[str, Any]:
            if not isinstance(merge, bool):
                raise ValidationError("merge must be a boolean")
            return self._core.transfer.import_(data, merge=merge)

        return self._run("multi", call, tiers=self.enabled_tiers())

    def backup(self, dest: str | os.PathLike[str]) -> Envelope:
        """Hot backup (safe while writers run) of Tier 2, the curated files and the graph into the new
        directory ``dest``; vectors are re-derived on restore. Raises ConflictError if ``dest`` is not
        empty, StorageError."""
        transfer = self._core.transfer
        return self._run(
            "multi", lambda: transfer.backup(Path(v.path("dest", dest))), tiers=self.enabled_tiers()
        )

    @staticmethod
    def restore(
        src: str | os.PathLike[str],
        *,
        force: bool = False,
        config: Config | None = None,
        hermes_home: str | os.PathLike[str] | None = None,
        profile: str | None = None,
        **overrides: Any,
    ) -> Envelope:
        """Restore a backup into a home/profile that no MemoryAPI has open, all or nothing (the backup is
        checked completely, staged, then swapped in); refuses to overwrite existing memory unless
        ``force``. data: manifest + consistency check. Raises ValidationError (ThreatDetectedError for a
        flagged curated entry), ConflictError, StorageError (in the envelope)."""

        def call() -> dict[str, Any]:
            if profile is not None:
                overrides["profile"] = v.profile_name("profile", profile)
            from hermes_memory.core.transfer import Transfer

            cfg = config if config is not None else load_config(None, hermes_home=hermes_home, **overrides)
            return Transfer.restore(Path(v.path("src", src)), cfg, force=force)

        return run("multi", call)  # no store of its own: nothing is open to redact with

    # -- maintenance ----------------------------------------------------------------------------------
    def maintenance_context(self) -> JobContext:
        """The stores the maintenance jobs work on (for a Scheduler). Raises ConfigError if Tier 2 is off.

        Maintenance is store-wide: its Tier 2 is the admin view (every scope; the jobs group by scope
        and never merge across scopes). A removed fact's chunks are dropped through that view too.
        The graph is this agent's view's graph.
        """
        return self._core.maintenance.maintenance_context()

    def maintain(
        self, job: str | None = None, progress: JobProgress | None = None, *, now: float | None = None
    ) -> Envelope:
        """Run one maintenance job, or all of them in order (consolidate, prune, embed_queue,
        graph_refresh); each run is recorded. ``progress(job, done, total)`` follows each job.

        data: {"jobs": {name: run record}, "failed": [names]}; the envelope fails if any job failed.
        """

        def call() -> dict[str, Any]:
            from hermes_memory.cron.jobs import JOB_NAMES

            names = JOB_NAMES if job is None else (_job_name(job),)
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            return self._core.maintenance.run(names, progress, now=when).to_dict()

        return self._maintenance_envelope(call)

    def maintain_due(self, progress: JobProgress | None = None, *, now: float | None = None) -> Envelope:
        """Run the jobs whose cron schedule (config ``cron``) is due now — what a system crontab entry
        ``hermes-memory maintain --due`` does every few minutes. Same data shape as ``maintain``."""

        def call() -> dict[str, Any]:
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            return self._core.maintenance.run_due(progress, now=when).to_dict()

        return self._maintenance_envelope(call)

    def consolidate(self, *, now: float | None = None) -> Envelope:
        """Merge duplicate and near-duplicate facts and alias entities, resolve single-valued conflicts.

        data: counts (duplicates_merged, near_duplicates_merged, conflicts_resolved, entities_merged, ...).
        """
        return self._one_job("consolidate", now)

    def prune(self, *, now: float | None = None) -> Envelope:
        """Delete expired and long-archived facts, archive faded ones and, past ``tier2.max_facts``
        believed facts, the least important non-curated ones; superseded facts always stay.

        data: counts (expired_deleted, archived_deleted, faded_archived, over_cap_archived,
        over_cap_remaining, superseded_kept).
        """
        return self._one_job("prune", now)

    def maintenance_runs(self, limit: int = 20, job: str | None = None) -> Envelope:
        """The newest maintenance runs (what ran, when, how long, with what result), newest first."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            name = None if job is None else _job_name(job)
            return [r.to_dict() for r in self._core.maintenance.runs(limit=lim, job=name)]

        return self._run("tier2", call)

    def maintenance_status(self, now: float | None = None) -> Envelope:
        """Per job: its cron schedule, last run, next fire time and whether it is due now."""
        return self._run("tier2", lambda: self._core.maintenance.status(v.optional_time("now", now)))

    def _maintenance_envelope(self, call: Callable[[], dict[str, Any]]) -> Envelope:
        envelope = self._run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])
        failed = envelope["data"].get("failed") if envelope["success"] else None
        if failed:
            # The jobs that ran keep their results in data; the envelope says the call did not fully succeed.
            runs = envelope["data"]["jobs"]
            envelope["success"] = False
            envelope["error"] = "; ".join(f"{name} failed: {runs[name]['error']}" for name in failed)
            envelope["meta"]["error_type"] = runs[failed[0]]["result"]["error_type"]
        return envelope

    def _one_job(self, name: str, now: float | None) -> Envelope:
        envelope = self.maintain(name, now=now)
        if envelope["success"]:
            record = envelope["data"]["jobs"][name]
            envelope["data"] = record["result"]
            envelope["meta"]["run_id"] = record["id"]
            envelope["meta"]["duration_s"] = record["duration_s"]
        return envelope

    # -- doctor ---------------------------------------------------------------------------------------
    def doctor(self, repair: bool = False, progress: Callable[[str], None] | None = None) -> Envelope:
        """Check the stores (and with ``repair`` fix what can be fixed, then check again); ``progress``
        is told each step as it starts.

        data: {"clean", "findings": [{check, status ok|warn|error, detail, repairable}], "initial",
        "repairs"}. The envelope succeeds even when problems are found; ``clean`` says whether any were.
        """

        def call() -> dict[str, Any]:
            if not isinstance(repair, bool):
                raise ValidationError("repair must be a boolean")
            v.optional_callback("progress", progress)

            def flush() -> dict[str, Any]:  # draining the queues is the write path's; the doctor is handed it
                return _summary(self.flush(timeout=60.0))

            return self._core.doctor.run(repair=repair, flush=flush, progress=progress).to_dict()

        return self._run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])

    # -- history ----------------------------------------------------------------------------------------
    def why(self, fact_uuid: str) -> Envelope:
        """Where a fact came from: source episodes, extractor, confidence, when it was learned, and
        what superseded it (or what it superseded)."""

        def call() -> dict[str, Any]:
            return self._core.history.why(v.text("fact_uuid", fact_uuid, max_chars=100).strip()).to_dict()

        return self._run("tier2", call)

    def fact_history(self, subject: str, *, as_of: float | Mapping[str, Any] | str | None = None) -> Envelope:
        """Every fact about a subject, oldest first, superseded ones included with their validity; with
        ``as_of`` a time, those recorded by then; with ``{"valid": t, "known": t}``, those true at
        ``valid`` as known at ``known`` (default now)."""

        def call() -> list[dict[str, Any]]:
            name = v.text("subject", subject, max_chars=200).strip()
            point = c.as_of(as_of)
            at = point if isinstance(point, AsOf) or point is None else AsOf(None, point)
            return [f.to_dict() for f in self._core.history.fact_history(name, at)]

        return self._run("tier2", call)

    def as_of(
        self,
        valid: float | datetime | str | None = None,
        known: float | datetime | str | None = None,
        *,
        subject: str | None = None,
        query: str | None = None,
        limit: int = 50,
    ) -> Envelope:
        """Bitemporal: the facts that were true at ``valid`` (world time; default ``known``) according to
        what memory knew at ``known`` (system time; default now) — about ``subject`` (name or alias),
        matching ``query``, or the newest. Times as Unix seconds, datetime or ISO-8601. A fact
        superseded later was still open-ended as known before its supersession was recorded."""

        def call() -> list[dict[str, Any]]:
            point = AsOf(c.point_in_time("valid", valid), c.point_in_time("known", known))
            name = None if subject is None else v.text("subject", subject, max_chars=200).strip()
            limit_chars = self._core.tiers.max_chars
            text = None if query is None else v.text("query", query, max_chars=limit_chars).strip()
            lim = v.positive_int("limit", limit, maximum=c.MAX_LIMIT)
            return [f.to_dict() for f in self._core.history.as_of(point, subject=name, query=text, limit=lim)]

        return self._run("tier2", call)

    def contradictions(self, limit: int = 50) -> Envelope:
        """Facts that were superseded by a contradicting newer fact, newest first, with both sides."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            return [c.to_dict() for c in self._core.history.contradictions(lim)]

        return self._run("tier2", call)

    def timeline(self, entity: str, limit: int = 100) -> Envelope:
        """An entity's story: its timeline events and the facts about it, in time order."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            name = v.text("entity", entity, max_chars=200).strip()
            return [item.to_dict() for item in self._core.history.timeline(name, lim)]

        return self._run("tier2", call)

    # -- the knowledge graph (derived from Tier 2) --------------------------------------------------
    def knowledge_graph(self) -> KnowledgeGraph:
        """The loaded graph itself (for drawing and export). Raises ConfigError if the graph is off."""
        return self._core.graph.knowledge_graph()

    def graph_traverse(
        self, start_entity: str, depth: int = 2, relation_filter: str | None = None
    ) -> Envelope:
        """Entities reachable from an entity (name, alias or uuid) within ``depth`` hops, both directions."""

        def call() -> dict[str, Any]:
            start = v.text("start_entity", start_entity, max_chars=200).strip()
            if isinstance(depth, bool) or not isinstance(depth, int):
                raise ValidationError(f"depth must be an integer, got {type(depth).__name__}")
            rel = v.optional_text("relation_filter", relation_filter, max_chars=100)
            return self._core.graph.traverse(start, depth, rel)

        return self._run("graph", call)

    def graph_shortest_path(self, from_entity: str, to_entity: str) -> Envelope:
        """The fewest-hops path between two entities; an empty list when none exists."""

        def call() -> list[dict[str, Any]]:
            src = v.text("from_entity", from_entity, max_chars=200).strip()
            return self._core.graph.shortest_path(src, v.text("to_entity", to_entity, max_chars=200).strip())

        return self._run("graph", call)

    def graph_central_entities(self, limit: int = 10, algorithm: str | None = None) -> Envelope:
        """The most central entities (configured algorithm: betweenness, pagerank or degree)."""

        def call() -> list[dict[str, Any]]:
            from hermes_memory.core.graph import CENTRALITY_ALGORITHMS

            lim = v.positive_int("limit", limit, maximum=1000)
            algo = self.config.graph.centrality_algorithm if algorithm is None else algorithm
            return self._core.graph.central_entities(lim, v.choice("algorithm", algo, CENTRALITY_ALGORITHMS))

        return self._run("graph", call)

    def graph_communities(self) -> Envelope:
        """Communities of entities (Louvain, seeded: the same graph gives the same answer)."""
        return self._run("graph", self._core.graph.communities)

    def graph_rebuild(self) -> Envelope:
        """Rebuild the graph from Tier 2 and save it."""
        return self._run("graph", self._core.graph.rebuild)

    def graph_spread(self, seeds: list[str], max_hops: int = 3) -> Envelope:
        """Spreading activation from seed entities (names, aliases or uuids): related entities by score."""

        def call() -> list[dict[str, Any]]:
            refs = v.string_list("seeds", seeds, max_chars=200)
            if not refs:
                raise ValidationError("seeds must name at least one entity")
            hops = v.positive_int("max_hops", max_hops, maximum=6)
            return [a.to_dict() for a in self._core.graph.spread([ref.strip() for ref in refs], hops)]

        return self._run("graph", call)

    # -- the optional LLM path --------------------------------------------------------------------------
    def reconstruct(
        self,
        query: str,
        memories: Sequence[str] | None = None,
        *,
        limit: int = 10,
        tiers: Sequence[str] | None = None,
        as_of: float | Mapping[str, Any] | str | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """HAEMA's N:M reconstruction: ``memories`` (default: what ``recall`` returns for the query)
        consolidated by the LLM into statements citing their sources; unchanged when the LLM is off
        or fails (``fallback: true``)."""
        hits: list[dict[str, Any]] = []
        if memories is None:
            found = self.recall(query, tiers, limit, as_of, session_id=session_id)
            if not found["success"]:
                return found
            hits = list(found["data"]["hits"])

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            text = v.text("query", query, max_chars=limit).strip()
            given = None if memories is None else v.string_list("memories", memories, max_chars=limit)
            return self._core.llm.reconstruct(text, given, hits).to_dict()

        return self._run("multi", call, tiers=["llm"])

    def compress(
        self,
        session_id: str | None = None,
        before: float | datetime | str | None = None,
        *,
        batch_size: int = 20,
        limit: int = 200,
    ) -> Envelope:
        """Engram's compression (LLM): old episodes not summarised yet — of ``session_id`` (before
        ``before`` if given), else those before ``before`` (default: older than 7 days) — summarised by the
        LLM, ``batch_size`` turns of one session per summary, at most ``limit`` episodes a call. Each
        summary is a fact (extractor ``compress``) whose ``source_episodes`` are its turns (``why``
        shows them); the turns stay. data: ``facts``, ``episodes`` (read), ``failed`` (batches the LLM
        could not summarise, with why). Without the LLM: ConfigError saying it needs the LLM."""

        def call() -> dict[str, Any]:
            sid = v.optional_text("session_id", session_id, max_chars=200)
            return self._core.reflection.compress(
                session_id=sid, before=c.point_in_time("before", before),
                batch_size=v.positive_int("batch_size", batch_size, maximum=100),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            ).to_dict()  # fmt: skip

        return self._run("tier2", call, tiers=["tier2", "llm"])

    def reflect(self, session_id: str | None = None, *, limit: int = 50) -> Envelope:
        """Engram's explicit reflection (LLM): insights over the newest ``limit`` episodes (of
        ``session_id``) that no insight cites yet, each stored as a fact (extractor ``reflect``) citing
        the episodes it rests on. data: ``facts``, ``episodes`` (read), ``failed``. Without the LLM:
        ConfigError saying it needs the LLM."""

        def call() -> dict[str, Any]:
            sid = v.optional_text("session_id", session_id, max_chars=200)
            lim = v.positive_int("limit", limit, maximum=200)
            return self._core.reflection.reflect(session_id=sid, limit=lim).to_dict()

        return self._run("tier2", call, tiers=["tier2", "llm"])

    def list_agents(self) -> Envelope:
        """Engram's ``list_agents``: every agent scope holding memory in this store (and this agent's),
        by name, with ``own``, ``readable`` (its own, the shared fact pool, config ``scope.read_also``)
        and, for readable scopes only, its episode and fact counts."""
        return self._run("tier2", lambda: [a.to_dict() for a in self._core.agents.list()])

    def core_memory(self) -> Envelope:
        """The core memory: bullets per section, rendered markdown, budget and last update time."""
        return self._run("core", lambda: self._core.llm.core_memory().to_dict())

    def core_memory_update(self, candidates: Sequence[str] | None = None) -> Envelope:
        """Let the LLM propose a conservative core-memory update from ``candidates`` (default: facts
        learned since the last update) and apply it only if valid. Changes are audited; Hermes'
        MEMORY.md/USER.md are never written."""

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            given = None if candidates is None else v.string_list("candidates", candidates, max_chars=limit)
            return self._core.llm.core_memory_update(given).to_dict()

        return self._run("core", call, tiers=["core", "llm"])

    def __enter__(self) -> MemoryAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _recall_args(
    max_chars: int,
    query: str,
    tiers: Sequence[str] | None,
    limit: int | None,
    as_of: Any,
    budget_tokens: int | None,
    session_id: str | None,
    limit_per_tier: int | None = None,
) -> tuple[str, list[str] | None, dict[str, Any]]:
    """``recall``'s input checked (raises ValidationError): the query, the tiers asked for, the rest."""
    text = v.text("query", query, max_chars=max_chars).strip()
    if limit is not None and limit_per_tier is not None:
        raise ValidationError("give 'limit' (hits in all) or 'limit_per_tier' (hits per tier), not both")
    args: dict[str, Any] = {
        "limit": 10 if limit is None else v.positive_int("limit", limit, maximum=200),
        "limit_per_tier": None
        if limit_per_tier is None
        else v.positive_int("limit_per_tier", limit_per_tier, maximum=50),
        "as_of": c.as_of(as_of),
        "budget_tokens": None
        if budget_tokens is None
        else v.positive_int("budget_tokens", budget_tokens, maximum=MAX_BUDGET_TOKENS),
        "session_id": v.optional_text("session_id", session_id, max_chars=200),
    }
    if tiers is None:
        return text, None, args
    from hermes_memory.recall.engine import TIERS

    wanted = v.string_list("tiers", tiers, max_chars=20)
    unknown = sorted(set(wanted) - set(TIERS))
    if unknown:
        raise ValidationError(f"unknown tier(s) {', '.join(unknown)}; choose from {', '.join(TIERS)}")
    return text, wanted, args


def _entry(name: str, value: Any) -> str:
    # NUL bytes and lone surrogates cannot be written to a UTF-8 markdown file: refuse them here.
    return v.text(name, value).strip()


def _scope_view(config: Config, name: str | None) -> ScopeView:
    """The view from config ``scope`` (``name`` overrides ``scope.name``). Raises ConfigError."""
    try:
        return ScopeView.of(
            config.scope.name if name is None else name,
            facts=config.scope.facts,
            shared_pool=config.scope.shared_pool,
            read_also=config.scope.read_also,
        )
    except ValidationError as exc:
        raise ConfigError(f"scope: {exc}") from exc


# -- validation of the ops methods' inputs ------------------------------------------------------------
def _confirm(value: Any, name: str = "confirm") -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be a boolean")
    return value


def _include(value: Any) -> bool | list[str]:
    """Validate ``include_related``: a bool, or a list of names from the preview's ``related``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)) and value and len(value) <= 100:
        return [v.text("include_related item", item, max_chars=200).strip() for item in value]
    raise ValidationError(
        "include_related must be a boolean or a non-empty list of at most 100 related names"
    )


def _job_name(value: Any) -> str:
    """A maintenance job's name (ValidationError naming the jobs for any other)."""
    from hermes_memory.cron.jobs import check_job  # cron is imported only when maintenance runs

    return check_job(v.text("job", value, max_chars=50).strip())


def _summary(envelope: Envelope) -> dict[str, Any]:
    """What a doctor repair step reports of an envelope."""
    return {"success": envelope["success"], "data": envelope["data"], "error": envelope["error"]}


__all__ = ["MemoryAPI"]
