"""Skills declare the memory tiers they read (seed §9.4).

A skill's ``SKILL.md`` frontmatter may name ``memory_tiers`` (a subset of tier1, tier2, tier3, graph)
and ``memory_queries`` (what it typically asks), as the seed's skill manifest does; the shipped
``memory-recall`` skill declares the tiers it reads. A skill's step that calls
``nextlevel_search(query, skill="<name>")`` gets the seed's ``skill_recall_context``: recall over the
declared tiers only, ``SKILL_LIMIT_PER_TIER`` results from each (unless the call sets a limit).

Skills live in Hermes' ``$HERMES_HOME/skills/<name>/SKILL.md`` (or one category folder deeper); the name
is checked before it touches a path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.hermes.schemas import TIER_NAMES

SKILL_LIMIT_PER_TIER = 3  # the seed's skill_recall_context
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SkillManifest:
    """What a skill declares about memory."""

    name: str
    memory_tiers: tuple[str, ...]
    memory_queries: tuple[str, ...] = ()


def parse(name: str, text: str) -> SkillManifest:
    """The memory declarations in a SKILL.md. Raises ValidationError for malformed frontmatter, an
    unknown tier, or a skill that declares no ``memory_tiers``."""
    match = _FRONTMATTER.match(text)
    try:
        data = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError as exc:
        raise ValidationError(f"skill {name!r}: its SKILL.md frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ValidationError(f"skill {name!r}: its SKILL.md has no frontmatter")
    tiers = data.get("memory_tiers")
    if not isinstance(tiers, list) or not tiers or not all(isinstance(t, str) for t in tiers):
        raise ValidationError(
            f"skill {name!r} declares no memory_tiers; add e.g. 'memory_tiers: [tier2, tier3]' to its "
            f"SKILL.md frontmatter (tiers: {', '.join(TIER_NAMES)})"
        )
    unknown = [t for t in tiers if t not in TIER_NAMES]
    if unknown:
        raise ValidationError(
            f"skill {name!r}: unknown memory_tiers {unknown}; tiers are {', '.join(TIER_NAMES)}"
        )
    queries = data.get("memory_queries") or []
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise ValidationError(f"skill {name!r}: memory_queries must be a list of strings")
    return SkillManifest(name, tuple(dict.fromkeys(tiers)), tuple(queries))


def find(hermes_home: str | Path, name: object) -> SkillManifest:
    """The manifest of the installed skill ``name``. Raises ValidationError for a bad name or
    declaration, NotFoundError when no such skill is installed."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValidationError(f"'skill' must be a skill's name (letters, digits, . _ -), got {name!r}")
    root = Path(hermes_home) / "skills"
    for path in (root / name / "SKILL.md", *sorted(root.glob(f"*/{name}/SKILL.md"))):
        if path.is_file():
            return parse(name, path.read_text(encoding="utf-8", errors="replace"))
    raise NotFoundError(f"no skill {name!r} is installed in {root}")


def recall_args(manifest: SkillManifest, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``nextlevel_search`` arguments for a call made for this skill: its declared tiers (narrowed
    further by ``tiers`` if given), ``SKILL_LIMIT_PER_TIER`` each unless the call sets a limit. Raises
    ValidationError when the call asks for a tier the skill did not declare."""
    out = {k: v for k, v in args.items() if k != "skill"}
    asked = args.get("tiers")
    if isinstance(asked, list) and asked:
        undeclared = [t for t in asked if t not in manifest.memory_tiers]
        if undeclared:
            raise ValidationError(
                f"skill {manifest.name!r} declares memory_tiers {list(manifest.memory_tiers)}; "
                f"it may not read {undeclared}"
            )
    else:
        out["tiers"] = list(manifest.memory_tiers)
    if out.get("limit") is None and out.get("limit_per_tier") is None:
        out["limit_per_tier"] = SKILL_LIMIT_PER_TIER
    return out


__all__ = ["SKILL_LIMIT_PER_TIER", "SkillManifest", "find", "parse", "recall_args"]
