"""The fence corpus (tests/data/fence_corpus.json) in numbers: samples per class, how many the write-time
detector flags, and how many would still hold a fence tag or a posing role marker after quoting.

    python bench/fence_corpus.py

The end-to-end proof (stored through the write paths, read back through prefetch + Hermes' sanitiser,
the tools and MCP) is ``pytest -s tests/unit/test_fence.py``; this script is its quick summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from fence_checks import fences, posing  # noqa: E402  (the tests' own checks)

from hermes_memory.security import fence, threats  # noqa: E402


def main() -> None:
    corpus = json.loads((ROOT / "tests" / "data" / "fence_corpus.json").read_text("utf-8"))
    total = flagged_total = broken_total = 0
    print(f"{'class':<20} {'samples':>7} {'flagged':>7} {'fence/role left after quote':>28}")
    for cls, samples in corpus.items():
        if cls == "about":
            continue
        flagged = sum(not threats.is_clean(s) for s in samples)
        broken = sum(fences(fence.quote(s)) != (0, 0) or bool(posing(fence.quote(s))) for s in samples)
        print(f"{cls:<20} {len(samples):>7} {flagged:>7} {broken:>28}")
        if cls != "benign":
            total += len(samples)
            flagged_total += flagged
            broken_total += broken
    print(f"{'adversarial total':<20} {total:>7} {flagged_total:>7} {broken_total:>28}")


if __name__ == "__main__":
    main()
