"""MemoryAPI's operations on the data as a whole: forget (erasure), export / import, backup / restore."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.errors import ValidationError


class DataOpsAPI(EnvelopeEdge):
    """Forget (``Memory.forgetting``) and transfer (``Memory.transfer``)."""

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


__all__ = ["DataOpsAPI"]
