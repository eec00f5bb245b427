"""Every module stays small enough to read in one sitting: none in the package over 600 lines."""

from __future__ import annotations

from pathlib import Path

import hermes_memory

LIMIT = 600


def test_no_module_over_the_limit() -> None:
    root = Path(hermes_memory.__file__).resolve().parent
    sizes = {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in root.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"split these along their seams: {over}"
