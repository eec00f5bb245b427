"""Thin wrapper: ``python bench/perf.py ARGS`` runs ``python -m hermes_memory.bench.perf ARGS``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.bench.perf import main  # after the path of this checkout

if __name__ == "__main__":
    sys.exit(main())
