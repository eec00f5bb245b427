"""The provider's answers to `hermes memory setup`, `hermes memory status` and `hermes backup`: they run
on a provider Hermes never initialised, so each reads the settings file itself and opens no store."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from hermes_memory.config import default_hermes_home, load_config
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import safety
from hermes_memory.hermes.settings import ProviderSettings, load_settings, load_settings_lenient, setup_schema
from hermes_memory.validation import PROFILE_RE, RESERVED_PROFILES


def config_schema() -> list[dict[str, Any]]:
    """Fields for `hermes memory setup` (defaults: what nextlevel.yaml says now)."""
    try:
        current = load_settings(default_hermes_home())
    except ConfigError:
        current = ProviderSettings()
    return setup_schema(current)


def save_config(values: dict[str, Any], hermes_home: str) -> None:
    """Write setup answers to ``$HERMES_HOME/nextlevel.yaml``. Raises ConfigError for bad values
    and for a combination that cannot work (saying why)."""
    from hermes_memory.hermes import setup  # the wizard's code: not needed to run a turn

    setup.save_answers(values, hermes_home)


def post_setup(hermes_home: str, config: dict[str, Any]) -> None:
    """`hermes memory setup` (picker or ``setup nextlevel``): ask, validate, write nextlevel.yaml,
    activate in config.yaml, and say what was written (defaults when there is no terminal)."""
    from hermes_memory.hermes import setup

    setup.post_setup(hermes_home, config)


def status_config(cfg: Any) -> tuple[dict[str, Any], bool]:
    """What `hermes memory status` shows under the provider (where memory lives and its settings), and
    whether a setting is not used as written (the file does not load as it is)."""
    home = default_hermes_home()
    out: dict[str, Any] = {}
    if isinstance(cfg, Mapping):
        out.update({str(k): v for k, v in cfg.items()})
    try:
        settings = load_settings(home)
        config = settings.memory_config(home, _profile(_active_profile()))
    except ConfigError as exc:
        out["config_error"] = str(exc)
        try:
            _, replaced = load_settings_lenient(home)
            out["runs_with"] = "; ".join(replaced) or "the defaults"
        except ConfigError:
            out["runs_with"] = "nothing: memory does not start with this file (fix it)"
        return out, True
    from hermes_memory.tier2.engines import where

    out["database"] = where(config.db_path, config.tier2.url)  # a server's URL without its password
    out["embedder"] = config.tier3.embedding_model if config.tier3.enabled else "off"
    out["vector_backend"] = config.tier3.backend if config.tier3.enabled else "off"
    out["prefetch_budget_tokens"] = settings.prefetch_budget_tokens
    from hermes_memory.hermes.status import maintenance_lines, store_state

    # One `key: value` line each, as `hermes memory status` prints them.
    state = store_state(config)
    if state.schema_version is not None:
        out["schema_version"] = state.schema_version
    if state.error is not None:
        out["problem"] = f"the memory store cannot be read: {state.error}"
    for line in state.queues:  # a store on a server: the shared queues and this host's inbox
        what, _, value = line.partition(": ")
        out[f"queue {what}"] = value
    first, *rest = maintenance_lines(state, settings)
    out["maintenance"] = first.removeprefix("in Hermes: ")
    for line in rest:
        what, _, value = line.partition(": ")
        out[f"maintenance {what}"] = value
    out["threat_scanner"] = safety.scanner_name()
    from hermes_memory.hermes import setup

    problem = setup.embedder_problem(config.tier3, home)
    if problem is not None:  # Hermes would otherwise show "available" and fail every search
        out["problem"] = f"the embedder cannot work: {problem} (run `hermes memory setup nextlevel`)"
    return out, False


def backup_paths() -> list[str]:
    """Memory files configured outside HERMES_HOME (``hermes backup`` already walks HERMES_HOME)."""
    home = os.path.realpath(default_hermes_home())
    try:
        config = load_settings(home).memory_config(home, _profile(_active_profile()))
    except ConfigError:
        config = load_config(hermes_home=home)
    out = []
    for path in (config.db_path.parent, config.tier3_path, config.graph_path, config.memories_dir):
        real = os.path.realpath(path)
        if os.path.commonpath([real, home]) != home and real not in out:
            out.append(real)
    return out


def _profile(identity: object) -> str:
    """Hermes' own active profile name (status, backup paths), "default" when it is not usable."""
    name = str(identity or "default")
    return name if PROFILE_RE.fullmatch(name) and name.lower() not in RESERVED_PROFILES else "default"


def _active_profile() -> str:
    """Hermes' profile name when Hermes is importable (status/backup run without ``initialize``)."""
    try:
        profiles = importlib.import_module("hermes_cli.profiles")  # Hermes, only inside Hermes
    except ImportError:
        return "default"
    return str(profiles.get_active_profile_name())


__all__ = ["backup_paths", "config_schema", "post_setup", "save_config", "status_config"]
