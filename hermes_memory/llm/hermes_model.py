"""The model Hermes is configured with, as an ``LLMClient`` (config ``llm.use_hermes_model: true``).

A Hermes user has already told Hermes which model to use and with which key; memory's optional LLM can
use the same one, so no second API key is needed. Hermes 0.19.0 hands a memory provider no model or
credentials (``initialize`` gets the session, platform, home and identity only), so they are read
where Hermes reads them: the ``model:`` section of ``{HERMES_HOME}/config.yaml`` (``default`` or
``model``: the model name; ``base_url``; ``api_key``, a literal or ``${ENV_VAR}``). When that section
names a provider without a ``base_url`` (``openrouter``, ``openai``...) and Hermes is importable in
this interpreter (inside Hermes, or the same virtualenv), Hermes' own runtime resolution supplies the
endpoint and key. Only OpenAI-compatible chat-completions endpoints are supported; anything else is a
ConfigError saying so. The key is held in memory only, never written anywhere.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hermes_memory.errors import ConfigError
from hermes_memory.llm.client import OpenAICompatibleClient

_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class HermesModel:
    """Where Hermes' model answers: endpoint, model name, key (None: the endpoint needs none)."""

    base_url: str
    model: str
    api_key: str | None
    source: str

    def __repr__(self) -> str:  # never the key
        return f"HermesModel(base_url={self.base_url!r}, model={self.model!r}, source={self.source!r})"


def hermes_model(hermes_home: str | os.PathLike[str]) -> HermesModel:
    """Hermes' configured model for ``hermes_home``. Raises ConfigError when config.yaml has no usable
    ``model:`` section or the model is not reachable over an OpenAI-compatible endpoint."""
    path = Path(hermes_home) / "config.yaml"
    section = _model_section(path)
    name = str(section.get("default") or section.get("model") or "").strip()
    base_url = str(section.get("base_url") or "").strip()
    key = _key(section.get("api_key"), path)
    if base_url:
        if not name:
            raise ConfigError(f"{path}: model.default (the model name) is not set (llm.use_hermes_model)")
        return HermesModel(base_url, name, key, str(path))
    return _from_hermes_runtime(path, name)


def hermes_model_client(hermes_home: str | os.PathLike[str], *, timeout_s: float) -> OpenAICompatibleClient:
    """An ``OpenAICompatibleClient`` for Hermes' model. Raises ConfigError (see ``hermes_model``)."""
    found = hermes_model(hermes_home)
    return OpenAICompatibleClient(found.base_url, found.model, api_key=found.api_key, timeout_s=timeout_s)


def _model_section(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"llm.use_hermes_model: Hermes' {path} does not exist") from exc
    except OSError as exc:
        raise ConfigError(f"llm.use_hermes_model: cannot read {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"llm.use_hermes_model: {path} is not valid YAML: {exc}") from exc
    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, str) and model.strip():
        return {"default": model.strip()}
    if not isinstance(model, dict):
        raise ConfigError(f"llm.use_hermes_model: {path} has no 'model:' section")
    return model


def _key(value: Any, path: Path) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{path}: model.api_key must be a string")
    ref = _ENV_REF.match(value.strip())
    if ref is None:
        return value.strip()
    found = os.environ.get(ref.group(1))
    if not found:
        raise ConfigError(f"{path}: model.api_key names ${{{ref.group(1)}}}, which is not set")
    return found


def _from_hermes_runtime(path: Path, name: str) -> HermesModel:
    """Hermes' own resolution of its active provider (endpoint, key) when Hermes is importable."""
    try:
        runtime_provider = importlib.import_module("hermes_cli.runtime_provider")  # Hermes, if installed
    except ImportError as exc:
        raise ConfigError(
            f"llm.use_hermes_model: {path} gives no model.base_url and Hermes is not importable here to "
            "resolve its provider; set model.base_url there, or llm.base_url/llm.model instead"
        ) from exc
    try:
        runtime = runtime_provider.resolve_runtime_provider()
    except Exception as exc:  # Hermes' own errors, translated at this boundary
        raise ConfigError(f"llm.use_hermes_model: Hermes could not resolve its provider: {exc}") from exc
    mode = str(runtime.get("api_mode") or "chat_completions")
    base_url = str(runtime.get("base_url") or "")
    model = name or str(runtime.get("model") or "")
    if mode != "chat_completions" or not base_url.startswith(("http://", "https://")) or not model:
        raise ConfigError(
            f"llm.use_hermes_model: Hermes' provider {runtime.get('provider')!r} (api mode {mode!r}) is not "
            "an OpenAI-compatible chat-completions endpoint; set llm.base_url/llm.model instead"
        )
    key = runtime.get("api_key")
    source = f"hermes runtime ({runtime.get('provider')})"
    return HermesModel(base_url, model, str(key) if key else None, source)


__all__ = ["HermesModel", "hermes_model", "hermes_model_client"]
