"""Every public module of the package says what it exports (issue 15): a module whose path has no
``_``-prefixed part declares ``__all__``, and every name it lists exists once the module is imported."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hermes_memory"


def _public_modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in parts):
            continue
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _declares_all(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    source = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
    return False


def test_the_package_has_public_modules() -> None:
    modules = _public_modules()
    assert "hermes_memory.api.memory_api" in modules and "hermes_memory.tier2.db" in modules
    assert not any(part.startswith("_") for m in modules for part in m.split(".")[1:])


@pytest.mark.parametrize("module", _public_modules())
def test_a_public_module_declares_what_it_exports(module: str) -> None:
    assert _declares_all(module), f"{module} has no __all__"
    imported = importlib.import_module(module)
    exported = list(imported.__all__)
    assert len(exported) == len(set(exported)), f"{module}.__all__ lists a name twice"
    missing = [name for name in exported if not hasattr(imported, name)]
    assert not missing, f"{module}.__all__ lists names it does not have: {missing}"
