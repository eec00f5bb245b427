"""The pip extras: ``[all]`` installs every optional feature, the MCP server included."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _extras() -> dict[str, list[str]]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    extras: dict[str, list[str]] = data["project"]["optional-dependencies"]
    return extras


def _included(extras: dict[str, list[str]], name: str) -> set[str]:
    """The extras ``name`` pulls in, through ``hermes-memory-tiers[a,b]`` self-references."""
    out: set[str] = set()
    for requirement in extras[name]:
        match = re.fullmatch(r"hermes-memory-tiers\[([^\]]+)\]", requirement)
        if match:
            for part in match.group(1).split(","):
                out |= {part.strip()} | _included(extras, part.strip())
    return out


def test_all_ships_the_mcp_server() -> None:
    assert "mcp" in _included(_extras(), "all")


def test_all_covers_every_feature_extra() -> None:
    extras = _extras()
    # bundles, the alias, and the two embedders that bring torch (`all` puts no torch on disk)
    torch = {"local-fp32", "sentence-transformers"}
    features = set(extras) - {"all", "hermes", "dev", "minilm"} - torch
    assert features <= _included(extras, "all")
    assert not torch & _included(extras, "all") and torch <= _included(extras, "dev")
