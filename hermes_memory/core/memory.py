"""``Memory``: the composed core. It opens the tiers of one profile and scope, wires the collaborators
(stores, semantic index, graph, ingestor, recall engine) and owns their lifecycle; its services return
records. ``MemoryAPI`` is the envelope around it."""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_memory.config import Config
from hermes_memory.core.tiers import Tiers
from hermes_memory.graph.service import GraphService
from hermes_memory.ops import recovery
from hermes_memory.records import Fact
from hermes_memory.scoping import ScopeView
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3 import shared as shared_tier3

if TYPE_CHECKING:
    from hermes_memory.core.agents import Agents
    from hermes_memory.core.curated import Curated
    from hermes_memory.core.doctor import Doctor
    from hermes_memory.core.forgetting import Forgetting
    from hermes_memory.core.graph import GraphQueries
    from hermes_memory.core.history import History
    from hermes_memory.core.ingest import Ingest
    from hermes_memory.core.knowledge import Knowledge
    from hermes_memory.core.llm import LLMPath
    from hermes_memory.core.maintenance import AutoMaintenance, Maintenance
    from hermes_memory.core.mirror import Mirror
    from hermes_memory.core.recall import Recall
    from hermes_memory.core.reflection import Reflection
    from hermes_memory.core.semantic import Semantic
    from hermes_memory.core.transfer import Transfer
    from hermes_memory.core.working import WorkingMemory
    from hermes_memory.ingest.background import BackgroundWorker
    from hermes_memory.ingest.worker import Ingestor
    from hermes_memory.llm.client import LLMClient
    from hermes_memory.recall.engine import RecallEngine

_T = TypeVar("_T")

# How long close waits for the worker to finish the item in hand (a turn's transaction is milliseconds;
# an embedding batch or a model load may be longer, and is then left to finish on its own).
_STOP_GRACE_S = 0.1
# How long interpreter exit waits for stores whose close was left to a thread (a worker in the middle of
# an embedding batch). Native code still running in a daemon thread while the interpreter finalises
# aborts the process ("terminate called without an active exception"); Hermes' exit watchdog is 30 s.
_EXIT_WAIT_S = 20.0
_closing: set[threading.Thread] = set()
_closing_lock = threading.Lock()
_exit_hook_registered = False

log = logging.getLogger(__name__)


def _close_in_background(target: Any, *args: Any) -> None:
    """Run a deferred close on a daemon thread that interpreter exit still waits for (bounded)."""
    global _exit_hook_registered
    thread = threading.Thread(target=target, args=args, name="hermes-memory-close", daemon=True)
    with _closing_lock:
        _closing.add(thread)
        if not _exit_hook_registered:
            atexit.register(_finish_closing)
            _exit_hook_registered = True
    thread.start()


def _finish_closing() -> None:
    with _closing_lock:
        threads = list(_closing)
    for thread in threads:
        thread.join(_EXIT_WAIT_S)


class Memory:
    """The tiers of one profile and scope, opened; every service of the core works on ``tiers``.

    Construction opens Tier 2 (creating and migrating the DB) and freezes the Tier 1 snapshot; the
    embedder and the vector collections open on first use. With ``background`` a worker thread keeps
    the durable queues drained until ``close`` (``start_background``). Raises ConfigError and
    StorageError.
    """

    def __init__(
        self,
        config: Config,
        *,
        actor: str,
        view: ScopeView,
        backend: str | None = None,
        background: bool = False,
        llm_client: LLMClient | None = None,
    ) -> None:
        self.config = config
        self.tiers = tiers = Tiers(config, actor=actor, view=view)
        self.worker: BackgroundWorker | None = None
        self.auto_maintenance: AutoMaintenance | None = None
        self._llm_client = llm_client
        self._engine: RecallEngine | None = None
        self._closed = threading.Event()  # set once every store is closed
        self._embeds_at_start = 0
        # The services, each built on first use (a read command never imports the write path:
        # extraction, update detection, the ingestor), once, under this lock.
        self._services: dict[str, Any] = {}
        self._services_lock = threading.RLock()
        if config.tier2.enabled:
            recovery.finish_restore(config)  # a restore cut short mid-swap completes first
            tiers.t2 = Tier2.open(
                config.db_path,
                wal=config.tier2.wal_mode,
                busy_timeout_ms=config.tier2.busy_timeout_ms,
                auto_dedupe=config.tier2.auto_dedupe,
                view=view,
                max_entities=config.tier2.max_entities,
                url=config.tier2.url,
                profile=config.profile,
            )
        if config.tier1.enabled:
            tiers.curated = CuratedStore(
                config.memories_dir,
                memory_char_limit=config.tier1.memory_char_limit,
                user_char_limit=config.tier1.user_char_limit,
            )
        if tiers.t2 is not None:  # an import cut short after its commit gets its curated entries
            try:
                recovery.finish_imports(tiers.t2, tiers.curated)
            except BaseException:
                tiers.t2.close()
                raise
        if tiers.curated is not None:
            tiers.snapshot = CuratedSnapshot.capture(tiers.curated)
        if config.tier3.enabled and tiers.t2 is not None:
            # Cheap: the embedder and the vector collections open on first use.
            # Shared with every other Memory of this store in the process (other scopes, same files).
            tiers.sem = shared_tier3.acquire(config.tier3, config.tier3_path, tiers.t2, backend=backend)
        if config.graph.enabled and tiers.t2 is not None:
            tiers.graph = GraphService(
                tiers.t2, config.graph_path, max_nodes=config.graph.max_nodes,
                rebuild_interval_h=config.graph.auto_rebuild_interval_hours,
            )  # fmt: skip
        if tiers.t2 is not None:
            self.forgetting.finish_on_open()  # a forget a crash interrupted is finished first
        if config.llm.enabled and tiers.t2 is not None:
            # A configured LLM is checked when the store opens (its endpoint settings, or Hermes' own
            # model): a bad one is refused now, not at the first turn the worker writes.
            try:
                self.ingestor  # noqa: B018 - built for its checks
            except BaseException:
                self.close()
                raise

        # Last: a forget a crash interrupted is finished before the worker starts.
        if background:
            self.start_background()

    def _once(self, name: str, build: Callable[[], _T]) -> _T:
        """The service ``name``, built by ``build`` the first time it is asked for."""
        with self._services_lock:
            if name not in self._services:
                self._services[name] = build()
            found: _T = self._services[name]
            return found

    # -- the services, each given what it works with ---------------------------------------------
    @property
    def ingestor(self) -> Ingestor | None:
        """The write path's worker (None without Tier 2): extraction and the derived stores' hooks."""
        return self._once("ingestor", self._build_ingestor)

    def _build_ingestor(self) -> Ingestor | None:
        from hermes_memory.ingest.worker import Ingestor
        from hermes_memory.llm.wiring import ingest_hooks
        from hermes_memory.security.secrets import redact_secrets

        tiers, config = self.tiers, self.config
        if tiers.t2 is None:
            return None
        # LLM off (the default, no llm_client): the rule-based writer and after_ingest unchanged.
        knowledge, after_commit = ingest_hooks(
            config.llm, tiers.t2, tiers.sem, tiers.after_ingest, client=self._llm_client,
            hermes_home=config.hermes_home,
            on_facts=self._reconstruct_turn_facts if config.llm.write_reconstruction else None,
        )  # fmt: skip
        return Ingestor(
            tiers.t2, tiers.sem, knowledge=knowledge, after_commit=after_commit,
            redact=redact_secrets if config.security.redact_secrets else None,
        )  # fmt: skip

    # recall and search (explicit recalls may split their question with the LLM: llm.query_decomposition)
    @property
    def llm(self) -> LLMPath:
        from hermes_memory.core.llm import LLMPath

        return self._once("llm", lambda: LLMPath(self.tiers, self._llm_client))

    @property
    def recall(self) -> Recall:
        from hermes_memory.core.recall import Recall

        return self._once("recall", lambda: Recall(self.tiers, self.recall_engine, self.llm))

    @property
    def semantic(self) -> Semantic:
        from hermes_memory.core.semantic import Semantic

        return self._once("semantic", lambda: Semantic(self.tiers))

    # writes: turns and the queues, Tier 1, mirrored curated writes, facts/entities/events
    @property
    def working(self) -> WorkingMemory:
        from hermes_memory.core.working import WorkingMemory

        return self._once("working", lambda: WorkingMemory(self.config.limits.working_memory_items))

    @property
    def ingest(self) -> Ingest:
        from hermes_memory.core.ingest import Ingest

        return self._once(
            "ingest", lambda: Ingest(self.tiers, lambda: self.ingestor, lambda: self.worker, self.working)
        )

    @property
    def curated(self) -> Curated:
        from hermes_memory.core.curated import Curated

        return self._once("curated", lambda: Curated(self.tiers))

    @property
    def mirror(self) -> Mirror:
        from hermes_memory.core.mirror import Mirror

        return self._once("mirror", lambda: Mirror(self.tiers))

    @property
    def knowledge(self) -> Knowledge:
        from hermes_memory.core.knowledge import Knowledge

        return self._once("knowledge", lambda: Knowledge(self.tiers))

    # operations, maintenance, history, graph queries, the optional LLM
    @property
    def forgetting(self) -> Forgetting:
        from hermes_memory.core.forgetting import Forgetting

        return self._once("forgetting", lambda: Forgetting(self.tiers, self.forget_recall_caches))

    @property
    def transfer(self) -> Transfer:
        from hermes_memory.core.transfer import Transfer

        return self._once("transfer", lambda: Transfer(self.tiers, self.forget_recall_caches))

    @property
    def maintenance(self) -> Maintenance:
        from hermes_memory.core.maintenance import Maintenance

        return self._once("maintenance", lambda: Maintenance(self.tiers, self.ingestor))

    @property
    def doctor(self) -> Doctor:
        from hermes_memory.core.doctor import Doctor

        return self._once("doctor", lambda: Doctor(self.tiers, self.maintenance, self.forgetting))

    @property
    def history(self) -> History:
        from hermes_memory.core.history import History

        return self._once("history", lambda: History(self.tiers))

    @property
    def graph(self) -> GraphQueries:
        from hermes_memory.core.graph import GraphQueries

        return self._once("graph", lambda: GraphQueries(self.tiers))

    @property
    def reflection(self) -> Reflection:
        from hermes_memory.core.reflection import Reflection

        return self._once("reflection", lambda: Reflection(self.tiers, self.llm, self.knowledge))

    @property
    def agents(self) -> Agents:
        from hermes_memory.core.agents import Agents

        return self._once("agents", lambda: Agents(self.tiers))

    def _reconstruct_turn_facts(self, facts: list[Fact]) -> None:
        # HAEMA's write-time reconstruction of a turn's LLM facts (worker thread, after their commit).
        self.llm.reconstruct_facts(facts)

    def start_background(self) -> None:
        """Keep the durable queues drained in a background thread (``Ingest.background_step`` whenever
        woken, or every second) until close. A no-op without Tier 2 or when the worker runs already."""
        from hermes_memory.ingest.background import BackgroundWorker

        if self.ingestor is None or self.worker is not None:
            return
        ingest, llm = self.ingest, self.llm  # built here, before the worker thread uses them
        worker = BackgroundWorker(
            lambda: (
                ingest.background_step(lambda: worker.stopping)
                or llm.background_step(lambda: worker.stopping)
            )
        )
        self.worker = worker
        # Once the queues are empty, this home follows the forgets recorded elsewhere (another host of a
        # shared store): its files are scrubbed before a new session of this process loads MEMORY.md.
        self.ingest.idle_tasks.append(self._follow_forgets)
        # At close the worker embeds until the queue is back below this (``Ingest.embed_before_exit``).
        self._embeds_at_start = self.ingest.queued_embeddings()
        worker.start()

    def _follow_forgets(self, stopping: Callable[[], bool]) -> bool:
        """The idle task of ``start_background`` (``Forgetting.follow``: one small read when nothing was
        committed); never counts as progress."""
        if not stopping():
            self.forgetting.follow()
        return False

    def start_auto_maintenance(self, interval_s: float) -> AutoMaintenance | None:
        """Run the scheduled maintenance jobs from the background worker when idle, at most every
        ``interval_s`` (``AutoMaintenance``); the one already started if any. None without a worker."""
        if self.worker is None:
            return None
        from hermes_memory.core.maintenance import AutoMaintenance

        if self.auto_maintenance is None:
            self.auto_maintenance = AutoMaintenance(self.maintenance, interval_s)
            self.ingest.idle_tasks.append(self.auto_maintenance)
            self.worker.wake()
        return self.auto_maintenance

    def recall_engine(self) -> RecallEngine:
        """The engine a recall runs on, after this home followed the erasures recorded since the last
        commit it saw (a forget on another host of a shared store; ``Forgetting.follow``)."""
        from hermes_memory.recall.engine import RecallEngine

        if self.tiers.t2 is not None:
            self.forgetting.follow()
        if self._engine is None:
            t = self.tiers
            self._engine = RecallEngine(t.tier2(), t.sem, t.graph, t.curated, self.config.recall.settings())
        return self._engine

    def forget_recall_caches(self) -> None:
        """Drop the recall engine (its participant cache may hold a name just forgotten or renamed) and
        the texts the secret check remembers as clean."""
        from hermes_memory.security.secrets import forget_checked

        self._engine = None
        forget_checked()

    def stats(self) -> dict[str, Any]:
        """Counts and sizes of every enabled tier."""
        t = self.tiers
        out: dict[str, Any] = {
            "profile": self.config.profile,
            "scope": t.scope,
            "scope_view": t.view.to_dict(),
        }
        if t.curated is not None:
            out["tier1"] = {
                store: {
                    "entries": len(state.entries),
                    "usage_chars": state.usage_chars,
                    "limit": state.limit,
                    "usage": state.usage,
                }
                for store in ("memory", "user")
                for state in (t.curated.state(store),)
            }
        if t.t2 is not None:
            out["tier2"] = t.t2.stats()
        if t.sem is not None:
            out["tier3"] = t.sem.health()
        return out

    # -- lifecycle --------------------------------------------------------------------------------
    def close(self, drain_timeout: float = 5.0, *, build_indexes: bool = True) -> None:
        """Stop the background worker and close every store.

        With ``drain_timeout`` > 0 the worker first drains the queues (up to that long); with 0 it only
        finishes the item in hand: the queues are durable, the next process (or the next open) finishes
        them. A worker still busy after a short grace (loading a model, embedding a batch) is left to end
        on its own and the stores close after it, in a daemon thread, so close returns at once.
        ``build_indexes=False`` leaves a vector engine's close-time index build (seconds at 10k points)
        to a later close or the ``embed_queue`` maintenance job; nothing written is lost either way.
        """
        sem = self.tiers.sem
        if not build_indexes and sem is not None:
            for backend in sem.opened_backends():
                defer = getattr(backend, "defer_optimize", None)  # only engines that build at close
                if callable(defer):
                    defer()
        worker, self.worker = self.worker, None
        if worker is not None:
            if drain_timeout > 0:
                worker.wait_idle(drain_timeout)
            else:
                # A short process leaves the embed queue no longer than it found it (when it can, in
                # EXIT_EMBED_S): otherwise a stream of one-turn processes never catches up.
                self.ingest.embed_before_exit(self._embeds_at_start)
            if not worker.stop(_STOP_GRACE_S):
                _close_in_background(self._close_after, worker)
                return
        self._close_stores()

    def wait_closed(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` s) until a close left to a background thread has finished; True when
        the stores are closed (a reopen in this process can then take the vector store again)."""
        return self._closed.wait(timeout)

    def _close_after(self, worker: BackgroundWorker) -> None:
        try:
            worker.join()
            self._close_stores()
        finally:
            with _closing_lock:
                _closing.discard(threading.current_thread())

    def _close_stores(self) -> None:
        t = self.tiers
        if t.graph is not None:
            t.graph.save()
            t.graph = None
        if t.sem is not None:
            shared_tier3.release(t.sem)
            t.sem = None
        if t.t2 is not None:
            t.t2.close()
            t.t2 = None
        self._closed.set()


__all__ = ["Memory"]
