"""Provider settings: ``$HERMES_HOME/nextlevel.yaml`` (written by ``hermes memory setup`` or by hand).

The file has two sections::

    provider:          # how the provider behaves inside Hermes (keys below, all optional)
      prefetch_budget_tokens: 300
    memory:            # any hermes-memory config key (see config/default.yaml), e.g.
      tier3:
        embedding_model: hashing

A missing file means every default. Unknown keys and bad values raise ConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_memory.config import Config, default_hermes_home, load_config, read_config_file, safe_load_yaml
from hermes_memory.errors import ConfigError
from hermes_memory.security.permissions import write_private_text
from hermes_memory.tier3.backend import BACKENDS, DEFAULT_BACKEND
from hermes_memory.tier3.embedder import DEFAULT_EMBEDDER, EMBEDDERS

SETTINGS_FILE = "nextlevel.yaml"

# Bounds keep a hand-edited file from turning prefetch into a context flood or a stall.
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "prefetch_budget_tokens": (20, 4000),
    "prefetch_limit": (1, 50),
    "prefetch_wait_ms": (0, 5000),
    "prompt_context_chars": (0, 4000),
}
_FLOAT_BOUNDS: dict[str, tuple[float, float]] = {
    "prefetch_min_relative_score": (0.0, 1.0),
    "cache_ttl_s": (0.0, 86400.0),
    "session_end_flush_s": (0.0, 60.0),
    "shutdown_drain_s": (0.0, 4.5),
    "maintenance_interval_s": (0.0, 86400.0),
}


@dataclass(frozen=True)
class ProviderSettings:
    """How the provider behaves inside Hermes, plus the hermes-memory config overrides it opens with."""

    # The <memory-context> block stays in the conversation for the rest of the session: keep it small.
    prefetch_budget_tokens: int = 300
    prefetch_limit: int = 8
    # A hit scoring below this fraction of the best hit's score stays out of the block: a small store
    # would otherwise fill it up to ``prefetch_limit`` with whatever is nearest (0 keeps them all).
    prefetch_min_relative_score: float = 0.25
    # How long prefetch may wait for a recall that is not cached yet (Hermes blocks the turn on it).
    prefetch_wait_ms: int = 150
    cache_ttl_s: float = 120.0
    # A Hermes process exits without waiting for extraction or embedding (the queues are durable and
    # the next process finishes them); a positive value waits that long at session end / shutdown.
    session_end_flush_s: float = 0.0
    # Hermes gives shutdown_all 5 s in total; stay under it.
    shutdown_drain_s: float = 0.0
    assistant_name: str = "Hermes"
    # A long-lived Hermes process (gateway, chat) runs the due maintenance jobs (config ``cron``) itself,
    # checking this often from the store's background worker; 0 switches that off (then schedule
    # `hermes-memory maintain --due` in a crontab). The first check is this long after the store opens.
    maintenance_interval_s: float = 60.0
    # Characters of the system prompt given to the most important facts and central entities (the
    # instructions come on top); 0 leaves them out.
    prompt_context_chars: int = 600
    memory: Mapping[str, Any] = field(default_factory=dict)

    def memory_config(self, hermes_home: str, profile: str) -> Config:
        """The hermes-memory Config for this home and profile. Raises ConfigError for bad keys."""
        return load_config(hermes_home=hermes_home, profile=profile, **_copy(self.memory))

    def to_file_dict(self) -> dict[str, Any]:
        provider = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "memory"}
        return {"provider": provider, "memory": _copy(self.memory)}


def hermes_profile(hermes_home: str | os.PathLike[str]) -> str:
    """The profile name Hermes reports for this HERMES_HOME (the rule of its
    ``get_active_profile_name``): ``<name>`` for ``<root>/profiles/<name>``, ``custom`` for another
    directory inside ~/.hermes, else ``default`` (~/.hermes itself, or a home elsewhere, e.g. Docker)."""
    home = Path(os.path.realpath(os.path.expanduser(hermes_home)))
    native = Path(os.path.realpath(os.path.expanduser("~/.hermes")))
    if home.parent.name == "profiles" and re.match(r"^[a-z0-9][a-z0-9_-]{0,63}$", home.name):
        return home.name
    if home != native and native in home.parents:
        return "custom"
    return "default"


def settings_path(hermes_home: str | os.PathLike[str]) -> Path:
    return Path(hermes_home) / SETTINGS_FILE


def load_settings(hermes_home: str | os.PathLike[str]) -> ProviderSettings:
    """Read the settings file (defaults when it does not exist).

    Raises ConfigError for an unreadable or malformed file, unknown keys and bad values.
    """
    path = settings_path(hermes_home)
    if not path.exists():
        return ProviderSettings()
    return read_settings_file(path)


def load_settings_lenient(hermes_home: str | os.PathLike[str]) -> tuple[ProviderSettings, list[str]]:
    """The settings Hermes' provider runs with: as ``load_settings``, but a bad setting does not switch
    memory off. Each invalid or unknown ``provider:`` key falls back to its default, and a ``memory:`` key
    the hermes-memory config refuses is left out; what was replaced is returned as warnings (for the
    user). Raises ConfigError only for what decides where memory lives or who reads it (``profile``, a
    path, the scope) and for a file that cannot be read as settings at all."""
    try:
        return load_settings(hermes_home), []
    except ConfigError as exc:
        first = str(exc)
    path = settings_path(hermes_home)
    try:
        data = safe_load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        raise ConfigError(first) from None  # unreadable: what it says (a path, a scope) is unknown
    if not isinstance(data, dict):
        raise ConfigError(first)
    warnings = [f"{path}: unknown section {k!r} ignored" for k in data if k not in ("provider", "memory")]
    provider, memory = data.get("provider") or {}, data.get("memory") or {}
    if not isinstance(provider, Mapping):
        warnings.append(f"{path}: 'provider' must be a mapping; its defaults are used")
        provider = {}
    if not isinstance(memory, Mapping):
        warnings.append(f"{path}: 'memory' must be a mapping; its defaults are used")
        memory = {}
    known = {f.name: f for f in dataclasses.fields(ProviderSettings) if f.name != "memory"}
    values: dict[str, Any] = {}
    for key, raw in provider.items():
        if key not in known:
            warnings.append(f"{path}: unknown key 'provider.{key}' ignored")
            continue
        try:
            values[key] = _coerce(f"provider.{key}", raw, known[key].default)
        except ConfigError as exc:
            warnings.append(f"{path}: {exc}; the default {known[key].default!r} is used")
    memory = _copy(memory)
    if "profile" in memory:
        raise ConfigError(first)  # where memory lives is never guessed: another profile's store is not ours
    for _ in range(20):  # each round leaves out one refused key
        try:
            ProviderSettings(memory=memory).memory_config(os.path.expanduser("~/.hermes"), "default")
            break
        except ConfigError as exc:
            key = _named_key(str(exc), memory)
            if key is None or _decides_where(key):
                # A path or the scope decides where turns go and who reads them: a default there could
                # write into another store or scope, so such an error still stops the provider.
                raise
            _drop(memory, key)
            warnings.append(f"{path}: {exc}; 'memory.{key}' is left out (its default is used)")
    return ProviderSettings(**values, memory=memory), warnings


def _decides_where(key: str) -> bool:
    """Whether the config key places memory (a path, a directory) or chooses its scope."""
    leaf = key.rsplit(".", 1)[-1]
    return key.split(".", 1)[0] == "scope" or leaf.endswith(("path", "_dir")) or leaf == "path"


_DOTTED = re.compile(r"'?\b([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)\b'?")


def _named_key(message: str, memory: Mapping[str, Any]) -> str | None:
    """The dotted key of ``memory`` a config error names, if it names one."""
    for match in _DOTTED.finditer(message):
        key = match.group(1)
        node: Any = memory
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                break
            node = node[part]
        else:
            return key
    for name in memory:  # a whole section ("config key 'tier3' must be a mapping")
        if f"'{name}'" in message:
            return str(name)
    return None


def _drop(memory: dict[str, Any], key: str) -> None:
    *parents, leaf = key.split(".")
    node = memory
    for part in parents:
        node = node[part]
    del node[leaf]


def read_settings_file(path: str | os.PathLike[str]) -> ProviderSettings:
    """Read a settings file in the ``provider:``/``memory:`` form. Raises ConfigError."""
    path = Path(path)
    try:
        data = safe_load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if data is None:
        return ProviderSettings()
    return settings_from_mapping(data, path)


def settings_from_mapping(data: object, path: Path) -> ProviderSettings:
    """The settings a parsed ``provider:``/``memory:`` document (read from ``path``) holds. Raises
    ConfigError for anything else."""
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with 'provider' and/or 'memory'")
    unknown = sorted(set(data) - {"provider", "memory"})
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {', '.join(map(str, unknown))}; use provider, memory")
    return build_settings(data.get("provider") or {}, data.get("memory") or {}, source=str(path))


# -- one loader: what the provider, the CLI, MCP, doctor and status all open ---------------------
@dataclass(frozen=True)
class ResolvedConfig:
    """The hermes-memory Config for a home, with where it came from."""

    config: Config
    settings: ProviderSettings
    hermes_home: str
    # The file the settings came from; None when no file was read (every default).
    source: Path | None


def resolve_hermes_home(home: str | os.PathLike[str] | None = None) -> str:
    """The HERMES_HOME to use, as Hermes' provider keys it: the argument, else $HERMES_HOME, else
    ~/.hermes; absolute with symlinks resolved."""
    chosen = str(home) if home else default_hermes_home()
    return os.path.realpath(os.path.expanduser(chosen))


def load_memory_config(
    home: str | os.PathLike[str] | None = None,
    *,
    config_path: str | os.PathLike[str] | None = None,
    profile: str | None = None,
) -> ResolvedConfig:
    """What Hermes' provider opens for this home, for the CLI, MCP, doctor and status.

    * the home is ``home``, else ``$HERMES_HOME``, else ``~/.hermes``;
    * settings: ``config_path`` when given (a ``nextlevel.yaml``-style file with ``provider:``/
      ``memory:`` sections, or a plain hermes-memory config file), else ``<home>/nextlevel.yaml`` when
      it exists, else every default;
    * profile: ``profile``, else a plain config file's ``profile:`` key, else the profile Hermes uses
      for this home (``hermes_profile``: ``default`` unless the home is ``~/.hermes/profiles/<name>``).

    Raises ConfigError for an unreadable or malformed file and for bad keys or values.
    """
    resolved_home = resolve_hermes_home(home)
    plain: Path | None = None
    source: Path | None = None
    settings = ProviderSettings()
    plain_profile = False  # whether the plain config file names its profile
    if config_path is not None:
        source = Path(os.path.expanduser(str(config_path)))
        data = read_config_file(source)
        # Either section name marks the settings form (neither is a hermes-memory config key), so a typo
        # in another section is reported by the settings reader, not as "unknown config key 'provider'".
        if "provider" in data or "memory" in data:
            settings = settings_from_mapping(data, source)
        else:
            plain, plain_profile = source, "profile" in data
    elif settings_path(resolved_home).exists():
        source = settings_path(resolved_home)
        settings = read_settings_file(source)
    overrides = _copy(settings.memory)
    if profile is not None:
        overrides["profile"] = profile
    elif not plain_profile:
        overrides["profile"] = hermes_profile(resolved_home)
    config = load_config(plain, hermes_home=resolved_home, **overrides)
    return ResolvedConfig(config, settings, resolved_home, source)


def build_settings(
    provider: Mapping[str, Any], memory: Mapping[str, Any], *, source: str = "settings"
) -> ProviderSettings:
    """Validate raw values (strings from a setup prompt are converted). Raises ConfigError."""
    if not isinstance(provider, Mapping):
        raise ConfigError(f"{source}: 'provider' must be a mapping")
    if not isinstance(memory, Mapping):
        raise ConfigError(f"{source}: 'memory' must be a mapping")
    known = {f.name: f for f in dataclasses.fields(ProviderSettings) if f.name != "memory"}
    values: dict[str, Any] = {}
    for key, raw in provider.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown key 'provider.{key}'; known: {', '.join(sorted(known))}")
        values[key] = _coerce(f"provider.{key}", raw, known[key].default)
    if "profile" in memory:
        # The profile is Hermes' (the agent's identity) or the CLI's --profile; a second source here
        # would silently lose to them.
        raise ConfigError(
            f"{source}: 'memory.profile' is not a setting: the profile is the one Hermes runs "
            "(or the CLI's --profile); remove the key"
        )
    settings = ProviderSettings(**values, memory=_copy(memory))
    # Fail now, naming the key, rather than when Hermes starts the agent.
    settings.memory_config(os.path.expanduser("~/.hermes"), "default")
    return settings


def save_settings(settings: ProviderSettings, hermes_home: str | os.PathLike[str]) -> Path:
    """Write the settings file atomically. Raises ConfigError when it cannot be written."""
    path = settings_path(hermes_home)
    text = (
        "# hermes-memory provider settings for Hermes (nextlevel). Edit freely; see\n"
        "# `hermes-memory status` for where the memory lives. 'memory' takes any hermes-memory config key.\n"
        + yaml.safe_dump(settings.to_file_dict(), sort_keys=False, allow_unicode=True)
    )
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # the Hermes home: Hermes' mode, not ours
        tmp.unlink(missing_ok=True)  # a leftover keeps its old mode; the new file is created 0600
        write_private_text(tmp, text)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


# -- `hermes memory setup` -----------------------------------------------------------------------
# Setup fields that live in the 'memory' section, as (field key, hermes-memory config section, key).
_MEMORY_FIELDS = {
    "embedding_model": ("tier3", "embedding_model"),
    "embedding_model_name": ("tier3", "embedding_model_name"),
    "embedding_base_url": ("tier3", "embedding_base_url"),
    "embedding_dim": ("tier3", "embedding_dim"),
    "api_key_env": ("tier3", "api_key_env"),
    "vector_backend": ("tier3", "backend"),
}


def _asking(what: str) -> str:
    """The embedder setup asks ``what`` for (the registry's ``asks``)."""
    return next(name for name, info in EMBEDDERS.items() if info.asks == what)


def setup_schema(current: ProviderSettings) -> list[dict[str, Any]]:
    """Fields of the settings (defaults: what is configured now). Hermes' generic wizard would walk
    them, but the provider's ``post_setup`` replaces that wizard (and validates each choice)."""
    tier3 = current.memory.get("tier3") or {}
    offered_embedders = [name for name, info in EMBEDDERS.items() if info.summary is not None]
    local = EMBEDDERS[DEFAULT_EMBEDDER]
    folder = _asking("model_folder")
    endpoint = _asking("endpoint")
    return [
        {
            "key": "prefetch_budget_tokens",
            "description": "Token budget of the memory block added to each turn",
            "default": str(current.prefetch_budget_tokens),
        },
        {
            "key": "embedding_model",
            "description": f"Embedder for meaning-level search ({DEFAULT_EMBEDDER} = {local.label})",
            "default": tier3.get("embedding_model", DEFAULT_EMBEDDER),
            "choices": offered_embedders,
        },
        {
            "key": "embedding_model_name",
            "description": f"{folder}: a model folder on this machine; {endpoint}: the model id",
            "default": tier3.get("embedding_model_name") or "",
            "when": {"embedding_model": folder},
        },
        {
            "key": "embedding_base_url",
            "description": "OpenAI-compatible endpoint URL (ending in /v1)",
            "default": tier3.get("embedding_base_url") or "",
            "when": {"embedding_model": endpoint},
        },
        {
            "key": "api_key_env",
            "description": "Environment variable holding the endpoint's API key",
            "default": tier3.get("api_key_env") or "OPENAI_API_KEY",
            "when": {"embedding_model": endpoint},
        },
        {
            "key": "vector_backend",
            "description": f"Vector store ({DEFAULT_BACKEND} = embedded engine, no server)",
            "default": tier3.get("backend", DEFAULT_BACKEND),
            "choices": [name for name, info in BACKENDS.items() if info.summary is not None],
        },
    ]


def merge_setup(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> ProviderSettings:
    """The current settings with setup answers merged in. Raises ConfigError for bad values."""
    current = load_settings(hermes_home)
    provider = {k: v for k, v in current.to_file_dict()["provider"].items()}
    memory = _copy(current.memory)
    for key, value in values.items():
        if key in _MEMORY_FIELDS:
            section, leaf = _MEMORY_FIELDS[key]
            if key == "embedding_dim":
                value = _number(f"memory.{section}.{leaf}", value, int)
            memory.setdefault(section, {})[leaf] = None if value == "" else value
        else:
            provider[key] = value
    return build_settings(provider, memory, source="hermes memory setup")


def _coerce(key: str, raw: Any, default: Any) -> Any:
    if isinstance(default, bool):
        raise ConfigError(f"{key}: booleans are not supported here")
    if isinstance(default, int):
        number = _number(key, raw, int)
        lo, hi = _INT_BOUNDS[key.removeprefix("provider.")]
        if not lo <= number <= hi:
            raise ConfigError(f"{key} must be within [{lo}, {hi}], got {number}")
        return number
    if isinstance(default, float):
        value = float(_number(key, raw, float))
        lo_f, hi_f = _FLOAT_BOUNDS[key.removeprefix("provider.")]
        if not lo_f <= value <= hi_f:
            raise ConfigError(f"{key} must be within [{lo_f}, {hi_f}], got {value}")
        return value
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 100:
        raise ConfigError(f"{key} must be a non-empty string of at most 100 characters, got {raw!r}")
    return raw.strip()


def _number(key: str, raw: Any, kind: type[int] | type[float]) -> int | float:
    if isinstance(raw, bool):
        raise ConfigError(f"{key} must be a number, got {raw!r}")
    if isinstance(raw, int | float):
        if kind is int and not float(raw).is_integer():
            raise ConfigError(f"{key} must be a whole number, got {raw!r}")
        return kind(raw)
    if isinstance(raw, str):
        try:
            return kind(raw.strip())
        except ValueError as exc:
            raise ConfigError(f"{key} must be a number, got {raw!r}") from exc
    raise ConfigError(f"{key} must be a number, got {type(raw).__name__}")


def _copy(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in value.items()}


__all__ = [
    "SETTINGS_FILE",
    "ProviderSettings",
    "ResolvedConfig",
    "build_settings",
    "hermes_profile",
    "load_memory_config",
    "load_settings",
    "load_settings_lenient",
    "merge_setup",
    "read_settings_file",
    "resolve_hermes_home",
    "save_settings",
    "settings_from_mapping",
    "settings_path",
    "setup_schema",
]
