"""The ``embed_queue`` job: drain the durable embed queue into the vector backend, then build the vector
engine's index for what crossed its indexing threshold (agent processes that lived briefly leave that to
this job instead of building it at exit).

SemanticMemory.drain does the work in batches of ``tier3.embed_batch_size``: a queue row leaves only after
its vector write is durable, so an interrupted run loses nothing and the next run writes the rest
(re-writes overwrite by id: no duplicate vectors).
"""

from __future__ import annotations

from typing import Any

from hermes_memory.cron.context import JobContext, Progress, report


def run(ctx: JobContext, *, now: float, progress: Progress | None = None) -> dict[str, Any]:
    """Embed every pending chunk and entity; returns counts.

    Raises what the embedder or backend raised (EmbeddingError, BackendError, DependencyMissingError);
    rows written before the failure stay written.
    """
    del now  # the queue has no notion of time; the signature is shared by every job
    if ctx.semantic is None:
        return {"skipped": "tier3 is disabled", "upserted": 0, "deleted": 0, "failed": 0, "remaining": 0}
    pending = ctx.tier2.embed_queue.count()
    report(progress, 0, pending)
    result: dict[str, Any] = ctx.semantic.drain(progress=progress).to_dict()
    # Build the vector engine's index where an agent left it (short-lived agent processes defer it at
    # exit): a no-op below the engine's indexing threshold. Only engines this process holds.
    indexed = 0
    for backend in ctx.semantic.opened_backends() if ctx.build_indexes else ():
        optimize = getattr(backend, "optimize", None)
        if callable(optimize) and optimize():
            indexed += 1
    result["indexes_built"] = indexed
    report(progress, pending, pending)
    return result


__all__ = ["run"]
