"""The seed's constructor keywords (HMNL §8.1: ``MemoryAPI(profile, tier2_enabled, tier3_enabled,
graph_enabled, tier3_backend, embedding_model)``) as config overrides. Each is checked as input
(ValidationError naming the keyword); the names come from the registries, never spelled here."""

from __future__ import annotations

from typing import Any

from hermes_memory import validation as v
from hermes_memory.errors import ValidationError
from hermes_memory.tier3.backend import BACKENDS
from hermes_memory.tier3.embedder import EMBEDDERS

# keyword -> (config section, key)
_SWITCHES = {
    "tier2_enabled": ("tier2", "enabled"),
    "tier3_enabled": ("tier3", "enabled"),
    "graph_enabled": ("graph", "enabled"),
}


def seed_overrides(
    *,
    tier2_enabled: Any = None,
    tier3_enabled: Any = None,
    graph_enabled: Any = None,
    tier3_backend: Any = None,
    embedding_model: Any = None,
) -> dict[str, dict[str, Any]]:
    """The given keywords as nested config overrides (``{"tier3": {"backend": ...}}``); None = the
    config's value. Raises ValidationError for a switch that is not a bool and for a backend or embedder
    name that is not registered (the message lists the registered names)."""
    out: dict[str, dict[str, Any]] = {}
    given = {"tier2_enabled": tier2_enabled, "tier3_enabled": tier3_enabled, "graph_enabled": graph_enabled}
    for keyword, value in given.items():
        if value is None:
            continue
        if not isinstance(value, bool):
            raise ValidationError(f"{keyword} must be True or False, got {v.shown(value)}")
        section, key = _SWITCHES[keyword]
        out.setdefault(section, {})[key] = value
    if tier3_backend is not None:
        out.setdefault("tier3", {})["backend"] = _registered("tier3_backend", tier3_backend, tuple(BACKENDS))
    if embedding_model is not None:
        name = _registered("embedding_model", embedding_model, tuple(EMBEDDERS))
        out.setdefault("tier3", {})["embedding_model"] = name
    return out


def _registered(keyword: str, value: Any, names: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in names:
        raise ValidationError(f"{keyword} must be one of {', '.join(names)}; got {v.shown(value)}")
    return value


def merge_overrides(overrides: dict[str, Any], seed: dict[str, dict[str, Any]]) -> None:
    """Merge the seed keywords' sections into ``overrides`` (the constructor's ``**overrides``, which may
    hold the same section as a mapping or dotted keys). A key given both ways is a ValidationError."""
    for section, values in seed.items():
        for key, value in values.items():
            nested = overrides.get(section)
            if f"{section}.{key}" in overrides or (isinstance(nested, dict) and key in nested):
                raise ValidationError(f"config key '{section}.{key}' is given twice (keyword and override)")
            overrides[f"{section}.{key}"] = value  # dotted: merged with a section mapping

__all__ = ["merge_overrides", "seed_overrides"]
