"""A dependency-free progress bar on stderr."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, label: str, width: int = 30):
        self.label = label
        self.width = width
        self.started = time.perf_counter()
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        frac = 1.0 if total <= 0 else min(1.0, done / total)
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        rate = done / max(1e-9, now - self.started)
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} ({rate:,.0f}/s)")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()
