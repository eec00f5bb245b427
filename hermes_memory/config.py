"""Typed configuration. Defaults come only from ``default.yaml`` (shipped in the package); a user file and
keyword overrides are merged over them. Unknown keys and bad values raise ``ConfigError`` naming the key."""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import yaml

from hermes_memory.audience import Sharing
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.recall.settings import PRESETS, RecallSettings, setting_fields, settings_for
from hermes_memory.scoping import check_scope_name
from hermes_memory.tier3.backend import BACKENDS
from hermes_memory.tier3.embedder import EMBEDDERS
from hermes_memory.validation import profile_name


@dataclass(frozen=True)
class Tier1Config:
    enabled: bool
    memories_dir: str
    memory_char_limit: int
    user_char_limit: int


@dataclass(frozen=True)
class Tier2Config:
    enabled: bool
    db_path: str
    wal_mode: bool
    max_facts: int
    max_entities: int
    auto_dedupe: bool
    busy_timeout_ms: int
    max_content_chars: int
    # A PostgreSQL server holding the store (``postgresql://user:password@host:port/db``); None: SQLite
    # at db_path. ``HERMES_MEMORY_TIER2_URL`` fills it when the config leaves it null.
    url: str | None


@dataclass(frozen=True)
class Tier3Config:
    enabled: bool
    backend: str
    path: str
    url: str | None
    api_key_env: str | None
    embedding_model: str
    embedding_model_name: str | None
    embedding_base_url: str | None
    embedding_dim: int
    chunk_size: int
    chunk_overlap: int
    min_score: float
    embed_batch_size: int
    timeout_s: float
    engine_min_vectors: int


@dataclass(frozen=True)
class GraphConfig:
    enabled: bool
    path: str
    auto_rebuild_interval_hours: float
    max_nodes: int
    centrality_algorithm: str


@dataclass(frozen=True)
class CronConfig:
    consolidate_schedule: str
    embed_schedule: str
    graph_rebuild_schedule: str
    prune_schedule: str


@dataclass(frozen=True)
class LimitsConfig:
    fact_ttl_days: float
    max_embedding_queue: int
    prune_importance_threshold: float
    working_memory_items: int


@dataclass(frozen=True)
class LLMConfig:
    """The optional LLM (off by default; never required): an OpenAI-compatible chat endpoint."""

    enabled: bool
    base_url: str | None
    model: str | None
    api_key_env: str | None
    timeout_s: float
    max_retries: int
    core_memory_path: str
    core_memory_budget: int
    use_hermes_model: bool
    write_reconstruction: bool
    merge_top_k: int
    merge_distance_cutoff: float
    instance_extraction: bool
    query_decomposition: bool


@dataclass(frozen=True)
class ScopeConfig:
    """Which scope this agent reads and writes in a store shared by several agents (see ``scoping``)."""

    name: str
    facts: str
    shared_pool: str
    per_user: bool
    # Other scopes this agent may also read (cross-agent recall; never written); empty: isolated.
    read_also: tuple[str, ...]
    # Gateway people linked across platforms (name -> ["<platform>:<user_id>", ...]) and shared pools
    # (name -> {members: [...], readers: [...]}); see ``audience``.
    people: Mapping[str, Any]
    pools: Mapping[str, Any]


@dataclass(frozen=True)
class SecurityConfig:
    """What memory does with credentials in the text it stores (see ``security.secrets``)."""

    redact_secrets: bool


@dataclass(frozen=True)
class RecallConfig:
    """Recall's search settings as data: a named preset (``recall.settings.PRESETS``) and single keys
    of it overridden (``overrides``: RecallSettings field -> number)."""

    preset: str
    overrides: Mapping[str, float | int]

    def settings(self) -> RecallSettings:
        """The engine's settings: the preset with the overrides applied."""
        return settings_for(self.preset, self.overrides)


@dataclass(frozen=True)
class UIConfig:
    """The memory browser: whether the provider keeps what the agent saw, and how many records."""

    record_context: bool
    record_limit: int


@dataclass(frozen=True)
class Config:
    profile: str
    tier1: Tier1Config
    tier2: Tier2Config
    tier3: Tier3Config
    graph: GraphConfig
    cron: CronConfig
    limits: LimitsConfig
    llm: LLMConfig
    hermes_home: str
    scope: ScopeConfig
    security: SecurityConfig
    recall: RecallConfig
    ui: UIConfig

    # -- resolved paths -------------------------------------------------------------------------
    def expand(self, template: str) -> Path:
        """Expand ``{HERMES_HOME}`` and ``{profile}`` in a configured path."""
        text = template.replace("{HERMES_HOME}", self.hermes_home).replace("{profile}", self.profile)
        return Path(os.path.expanduser(text))

    @property
    def db_path(self) -> Path:
        return self.expand(self.tier2.db_path)

    @property
    def memories_dir(self) -> Path:
        return self.expand(self.tier1.memories_dir)

    @property
    def tier3_path(self) -> Path:
        return self.expand(self.tier3.path)

    @property
    def graph_path(self) -> Path:
        return self.expand(self.graph.path)

    @property
    def core_memory_path(self) -> Path:
        return self.expand(self.llm.core_memory_path)

    @property
    def seen_path(self) -> Path:
        """What the agent saw (config ``ui.record_context``): beside the Tier 2 database."""
        return self.db_path.parent / "seen.jsonl"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_SECTIONS: dict[str, type[Any]] = {
    "tier1": Tier1Config,
    "tier2": Tier2Config,
    "tier3": Tier3Config,
    "graph": GraphConfig,
    "cron": CronConfig,
    "limits": LimitsConfig,
    "llm": LLMConfig,
    "scope": ScopeConfig,
    "security": SecurityConfig,
    "recall": RecallConfig,
    "ui": UIConfig,
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "tier3.backend": tuple(BACKENDS),
    "tier3.embedding_model": tuple(EMBEDDERS),
    "graph.centrality_algorithm": ("betweenness", "pagerank", "degree"),
    "scope.facts": ("private", "shared"),
    "recall.preset": tuple(PRESETS),
}
# Keys of the seed's config that were removed, and why (a file that still sets one is told so).
_REMOVED = {
    "limits.session_index_max_age_days": (
        "turns and their vectors are never aged out (episodes are the ground truth every other record is "
        "derived from, and old sessions stay searchable); forgetting is by importance (the prune job, "
        "limits.prune_importance_threshold and limits.fact_ttl_days) or explicit (forget). Delete the key."
    ),
}
# Sections whose mapping-valued keys take any key of their own (checked when the section is built).
_OPEN_MAPPINGS = {"recall.overrides", "scope.people", "scope.pools"}

# Keys whose numbers must be > 0 (the rest of the numbers must be >= 0).
_POSITIVE = {
    "tier1.memory_char_limit",
    "tier1.user_char_limit",
    "tier2.max_facts",
    "tier2.max_entities",
    "tier2.max_content_chars",
    "tier3.embedding_dim",
    "tier3.chunk_size",
    "tier3.embed_batch_size",
    "tier3.timeout_s",
    "graph.max_nodes",
    "limits.max_embedding_queue",
    "llm.timeout_s",
    "llm.core_memory_budget",
    "llm.merge_top_k",
    "ui.record_limit",
}


# Keys whose numbers must lie within [0, 1].
_UNIT_INTERVAL = {"tier3.min_score", "limits.prune_importance_threshold"}


# Where Tier 2 lives when the config does not say (``tier2.url``): a PostgreSQL server's URL.
TIER2_URL_ENV = "HERMES_MEMORY_TIER2_URL"


def default_hermes_home() -> str:
    """``$HERMES_HOME`` if set, else ``~/.hermes`` (read at call time, never at import)."""
    return os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes")


def safe_load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with libyaml's parser when PyYAML has it (several times faster: the CLI reads
    two or three files per command). Raises yaml.YAMLError."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # a safe loader either way


@functools.cache
def _shipped_defaults() -> dict[str, Any]:
    text = resources.files("hermes_memory").joinpath("default.yaml").read_text(encoding="utf-8")
    data = safe_load_yaml(text)
    if not isinstance(data, dict):
        raise ConfigError("default.yaml: expected a mapping at the top level")
    return data


def load_defaults() -> dict[str, Any]:
    """The shipped defaults as a plain dict (a copy of its own: callers merge into it)."""
    return copy.deepcopy(_shipped_defaults())


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    hermes_home: str | os.PathLike[str] | None = None,
    **overrides: Any,
) -> Config:
    """Build a Config from the defaults, an optional YAML file, and keyword overrides.

    Overrides are nested dicts per section (``tier3={"backend": NAME}``), dotted keys passed as a
    mapping (``**{"tier3.backend": NAME}``) or ``profile="x"``.
    Raises ConfigError naming the key for unknown keys, wrong types and bad values, and for an
    unreadable or malformed file.
    """
    merged = load_defaults()
    if path is not None:
        _merge(merged, read_config_file(Path(path)), prefix="")
    _merge(merged, _expand_dotted(overrides), prefix="")
    home = str(hermes_home) if hermes_home is not None else default_hermes_home()
    return _build(merged, home)


def read_config_file(path: Path) -> dict[str, Any]:
    """A YAML config file's top-level mapping ({} when empty). Raises ConfigError when it cannot be read
    or parsed, or is not a mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    try:
        data = safe_load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping at the top level")
    return data


def _expand_dotted(overrides: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if "." in key:
            section, _, leaf = key.partition(".")
            out.setdefault(section, {})
            if not isinstance(out[section], dict):
                raise ConfigError(f"config key {section!r} is both a value and a section")
            out[section][leaf] = value
        elif isinstance(value, Mapping) and key in out:
            out[key].update(value)
        else:
            out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def _merge(base: dict[str, Any], extra: Mapping[str, Any], prefix: str) -> None:
    for key, value in extra.items():
        name = f"{prefix}{key}"
        if name in _REMOVED:
            raise ConfigError(f"config key {name!r} was removed: {_REMOVED[name]}")
        if not isinstance(key, str) or key not in base:
            raise ConfigError(f"unknown config key {name!r}")
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise ConfigError(f"config key {name!r} must be a mapping, got {type(value).__name__}")
            if name in _OPEN_MAPPINGS:
                base[key] = {**base[key], **value}
                continue
            _merge(base[key], value, prefix=f"{name}.")
        else:
            base[key] = value


def _build(data: dict[str, Any], hermes_home: str) -> Config:
    try:
        profile = profile_name("config key 'profile'", data.get("profile"))
    except ValidationError as exc:
        raise ConfigError(str(exc)) from exc
    sections = {name: _build_section(name, cls, data[name]) for name, cls in _SECTIONS.items()}
    tier3 = sections["tier3"]
    if tier3.chunk_overlap >= tier3.chunk_size:
        raise ConfigError(
            f"config key 'tier3.chunk_overlap' ({tier3.chunk_overlap}) must be smaller than "
            f"'tier3.chunk_size' ({tier3.chunk_size})"
        )
    _check_llm(sections["llm"])
    if sections["tier2"].url is None and os.environ.get(TIER2_URL_ENV):
        sections["tier2"] = dataclasses.replace(sections["tier2"], url=os.environ[TIER2_URL_ENV])
    sections["scope"] = _check_scope(sections["scope"])
    sections["recall"] = _check_recall(sections["recall"])
    return Config(profile=profile, hermes_home=hermes_home, **sections)


_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_LLM_RETRIES = 10


def _check_llm(llm: LLMConfig) -> None:
    # The LLM is optional: its endpoint keys matter only once it is switched on.
    if llm.max_retries > _MAX_LLM_RETRIES:
        raise ConfigError(
            f"config key 'llm.max_retries' must be <= {_MAX_LLM_RETRIES}, got {llm.max_retries}"
        )
    if llm.api_key_env is not None and not _ENV_NAME_RE.match(llm.api_key_env):
        raise ConfigError(
            "config key 'llm.api_key_env' must be the NAME of an environment variable, "
            f"got {llm.api_key_env!r}"
        )
    if llm.base_url is not None and not re.match(r"^https?://[^/\s]+", llm.base_url):
        raise ConfigError(f"config key 'llm.base_url' must be an http(s) URL, got {llm.base_url!r}")
    if llm.merge_distance_cutoff > 2.0:  # cosine distance lies in [0, 2]
        raise ConfigError(
            f"config key 'llm.merge_distance_cutoff' must be within [0, 2], got {llm.merge_distance_cutoff}"
        )
    if llm.enabled and not llm.use_hermes_model:
        for key in ("base_url", "model"):
            if getattr(llm, key) is None:
                raise ConfigError(f"config key 'llm.{key}' must be set when 'llm.enabled' is true")


def _check_scope(scope: ScopeConfig) -> ScopeConfig:
    for key in ("name", "shared_pool"):
        try:
            check_scope_name(getattr(scope, key), f"config key 'scope.{key}'")
        except ValidationError as exc:
            raise ConfigError(str(exc)) from exc
    if scope.facts == "shared" and scope.shared_pool == scope.name:
        raise ConfigError("config key 'scope.shared_pool' must differ from 'scope.name'")
    others: Any = scope.read_also
    if not isinstance(others, list | tuple):
        raise ConfigError(f"config key 'scope.read_also' must be a list of scope names, got {others!r}")
    try:
        names = tuple(check_scope_name(n, "config key 'scope.read_also' item") for n in others)
    except ValidationError as exc:
        raise ConfigError(str(exc)) from exc
    Sharing.of(scope.people, scope.pools)  # raises ConfigError naming the bad key
    return dataclasses.replace(scope, read_also=tuple(dict.fromkeys(names)))


def _check_recall(recall: RecallConfig) -> RecallConfig:
    """The section with each override checked against RecallSettings' fields (numbers >= 0, counts > 0)."""
    known = setting_fields()
    checked: dict[str, float | int] = {}
    for key, value in recall.overrides.items():
        name = f"recall.overrides.{key}"
        kind = known.get(key) if isinstance(key, str) else None
        if kind is None:
            raise ConfigError(f"unknown config key {name!r}; known: {', '.join(known)}")
        checked[key] = _check_value(name, value, kind)
        if kind is int and checked[key] <= 0:
            raise ConfigError(f"config key {name!r} must be > 0, got {value!r}")
    settings_for(recall.preset, checked)  # the settings' own range checks (graph_decay <= 1)
    return RecallConfig(recall.preset, checked)


def _build_section(section: str, cls: type[Any], values: Mapping[str, Any]) -> Any:
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        key = f"{section}.{f.name}"
        if f.name not in values:
            raise ConfigError(f"config key {key!r} is missing from the defaults")
        kwargs[f.name] = _check_value(key, values[f.name], hints[f.name])
    return cls(**kwargs)


def _check_value(key: str, value: Any, annotation: Any) -> Any:
    allowed = _allowed_types(annotation)
    if value is None:
        if type(None) in allowed:
            return None
        raise ConfigError(f"config key {key!r} must not be null")
    if bool in allowed:
        if not isinstance(value, bool):
            raise ConfigError(f"config key {key!r} must be true or false, got {value!r}")
        return value
    if isinstance(value, bool):
        raise ConfigError(f"config key {key!r} must not be a boolean, got {value!r}")
    if int in allowed and not isinstance(value, int):
        raise ConfigError(f"config key {key!r} must be an integer, got {value!r}")
    if float in allowed:
        if not isinstance(value, int | float) or value != value:
            raise ConfigError(f"config key {key!r} must be a number, got {value!r}")
        value = float(value)
    if int in allowed or float in allowed:
        if key in _POSITIVE and value <= 0:
            raise ConfigError(f"config key {key!r} must be > 0, got {value!r}")
        if value < 0:
            raise ConfigError(f"config key {key!r} must be >= 0, got {value!r}")
    if str in allowed:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"config key {key!r} must be a non-empty string, got {value!r}")
        choices = _CHOICES.get(key)
        if choices and value not in choices:
            raise ConfigError(f"config key {key!r} must be one of {', '.join(choices)}; got {value!r}")
    if key in _UNIT_INTERVAL and not 0.0 <= value <= 1.0:
        raise ConfigError(f"config key {key!r} must be within [0, 1], got {value!r}")
    return value


def _allowed_types(annotation: Any) -> tuple[type[Any], ...]:
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return tuple(get_args(annotation))
    return (annotation,)


__all__ = [
    "Config",
    "CronConfig",
    "GraphConfig",
    "LLMConfig",
    "LimitsConfig",
    "RecallConfig",
    "ScopeConfig",
    "SecurityConfig",
    "Tier1Config",
    "Tier2Config",
    "Tier3Config",
    "UIConfig",
    "default_hermes_home",
    "load_config",
    "load_defaults",
]
