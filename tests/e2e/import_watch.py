"""Record which watched top-level packages a process imports, the moment it imports them.

``install()`` (called from ``guard_site/sitecustomize.py`` when ``E2E_IMPORT_LOG`` names a file) puts a
finder first on ``sys.meta_path`` that finds nothing itself: it only appends the top-level name of
every import of a watched package to that file, once per package, before the import runs. Written at
import time, not at exit, because ``hermes -z`` ends with ``os._exit`` (no atexit, no finalisers).
A bare ``importlib.util.find_spec`` of a watched name is recorded too: the check errs on the safe side.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

WATCHED = frozenset({"torch", "sentence_transformers", "transformers", "onnxruntime", "tokenizers"})


class _Watch:
    def __init__(self, log: str) -> None:
        self._log = log
        self._seen: set[str] = set()

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        top = name.partition(".")[0]
        if top in WATCHED and top not in self._seen:
            self._seen.add(top)
            with open(self._log, "a", encoding="utf-8") as fh:
                fh.write(top + "\n")
        return None  # the real finders import it


def install() -> None:
    log = os.environ.get("E2E_IMPORT_LOG")
    if log and not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch(log))


def read_log(path: str | os.PathLike[str]) -> set[str]:
    """The watched packages the processes that wrote ``path`` imported (empty when none)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return {line.strip() for line in fh if line.strip()}
    except FileNotFoundError:
        return set()
