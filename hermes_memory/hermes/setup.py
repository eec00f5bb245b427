"""``hermes memory setup``: the nextlevel wizard, and the checks that say when a setting cannot work.

Hermes calls the provider's ``post_setup(hermes_home, config)`` on both setup paths (the picker and
``hermes memory setup nextlevel``) and then does nothing else, so this module asks, validates, writes
``$HERMES_HOME/nextlevel.yaml`` and activates the provider in ``config.yaml`` itself.

Each choice is checked before it is written: an embedder that needs a model is asked for one that
exists locally (nothing is ever downloaded), the openai embedder is asked for its endpoint (it must
accept a connection) and key variable, and a choice whose packages this Python lacks is refused
with the command that installs them. Without a terminal (stdin closed or piped) every question takes
its default, so the provider-named path writes working defaults and says which.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_memory.config import Config, Tier3Config
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import PROVIDER_NAME
from hermes_memory.hermes.interpreter import fix_command
from hermes_memory.hermes.people_status import people_status
from hermes_memory.hermes.settings import (
    ProviderSettings,
    build_settings,
    hermes_profile,
    load_settings,
    merge_setup,
    save_settings,
    settings_path,
)
from hermes_memory.tier3.backend import BACKENDS as BACKEND_REGISTRY
from hermes_memory.tier3.backend import DEFAULT_BACKEND
from hermes_memory.tier3.embedder import DEFAULT_EMBEDDER
from hermes_memory.tier3.embedder import EMBEDDERS as EMBEDDER_REGISTRY
from hermes_memory.tier3.openai_embedder import KNOWN_DIMS

Ask = Callable[[str, str], str]
Say = Callable[[str], None]

# What the wizard offers: the registry entries with a summary line.
EMBEDDERS = {name: info.summary for name, info in EMBEDDER_REGISTRY.items() if info.summary is not None}
BACKENDS = {name: info.summary for name, info in BACKEND_REGISTRY.items() if info.summary is not None}
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"


# -- checks that need no model load and no network ------------------------------------------------
def embedder_problem(tier3: Tier3Config, hermes_home: str | os.PathLike[str]) -> str | None:
    """Why the configured embedder cannot work, in words (None when nothing rules it out).

    Checks only what can be known without loading a model or sending a request: a model that exists
    locally, an endpoint that accepts a connection and a key variable that is set, vector sizes that
    match.
    """
    if not tier3.enabled:
        return None
    asks = EMBEDDER_REGISTRY[tier3.embedding_model].asks
    if asks == "model_folder":
        return _sentence_transformers_problem(tier3)
    if asks == "endpoint":
        return _openai_problem(tier3, Path(hermes_home))
    return None


def _sentence_transformers_problem(tier3: Tier3Config) -> str | None:
    name = (tier3.embedding_model_name or "").strip()
    if not name:
        return (
            "the sentence-transformers embedder has no model: set memory.tier3.embedding_model_name to a "
            "model folder on this machine (nothing is downloaded)"
        )
    folder = model_folder(name)
    if folder is None:
        return (
            f"the sentence-transformers model {name!r} is neither a folder nor in the local model cache "
            f"({hf_cache_dir()}); nothing is downloaded, so every search would fail: give a model folder"
        )
    if not any((folder / marker).exists() for marker in ("modules.json", "config.json")):
        return f"{folder} is not a sentence-transformers model folder (no modules.json or config.json)"
    dim = model_dim(folder)
    if dim is not None and dim != tier3.embedding_dim:
        return (
            f"the model {name!r} makes {dim}-dimensional vectors but memory.tier3.embedding_dim is "
            f"{tier3.embedding_dim}: set it to {dim}"
        )
    return None


def _openai_problem(tier3: Tier3Config, home: Path) -> str | None:
    if not tier3.embedding_base_url:
        return (
            "the openai embedder has no endpoint: set memory.tier3.embedding_base_url "
            "(an OpenAI-compatible URL ending in /v1)"
        )
    if not tier3.embedding_base_url.startswith(("http://", "https://")):
        return f"memory.tier3.embedding_base_url must be an http(s) URL, got {tier3.embedding_base_url!r}"
    key = tier3.api_key_env
    if key and not (os.environ.get(key) or key in dotenv_names(home)):
        return f"the API key variable {key} is not set (neither in the environment nor in {home / '.env'})"
    model = tier3.embedding_model_name or DEFAULT_OPENAI_MODEL
    known = KNOWN_DIMS.get(model)
    if known is not None and known != tier3.embedding_dim:
        return (
            f"{model} makes {known}-dimensional vectors but memory.tier3.embedding_dim is "
            f"{tier3.embedding_dim}: set it to {known}"
        )
    unreachable = _unreachable(tier3.embedding_base_url)
    if unreachable is not None:
        return (
            f"nothing answers at {tier3.embedding_base_url} ({unreachable}): start the embedding server or "
            "fix memory.tier3.embedding_base_url"
        )
    return None


def _unreachable(url: str, timeout: float = 1.5) -> str | None:
    """Why no connection to ``url``'s host and port can be opened (None when one can): a quick TCP
    connect, no request is sent."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"bad port: {exc}"
    if not parts.hostname:
        return "no host in the URL"
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def missing_packages(config: Config) -> list[str]:
    """Extras of hermes-memory the configuration needs that this Python cannot import."""
    from hermes_memory.hermes.interpreter import NEEDS, needed_modules

    missing = []
    for module in needed_modules(config):
        if module == "agent.memory_provider":
            continue
        if not _importable(module):
            missing.append(NEEDS[module].removeprefix("hermes-memory-tiers[").removesuffix("]"))
    return list(dict.fromkeys(missing))


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def hf_cache_dir() -> Path:
    """Where sentence-transformers / huggingface keep downloaded models on this machine."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def model_folder(name: str) -> Path | None:
    """The local folder of a model given by path or by a name already in the model cache."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    repos = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo in repos:
        snapshots = hf_cache_dir() / f"models--{repo.replace('/', '--')}" / "snapshots"
        if snapshots.is_dir():
            found = sorted(p for p in snapshots.iterdir() if p.is_dir())
            if found:
                return found[-1]
    return None


def model_dim(folder: Path) -> int | None:
    """The vector size a sentence-transformers folder produces, read from its config files."""
    for rel, key in (
        ("2_Dense/config.json", "out_features"),
        ("1_Pooling/config.json", "word_embedding_dimension"),
        ("config.json", "hidden_size"),
    ):
        path = folder / rel
        if path.is_file():
            try:
                value = json.loads(path.read_text(encoding="utf-8")).get(key)
            except (OSError, ValueError):
                continue
            if isinstance(value, int) and value > 0:
                return value
    return None


def dotenv_names(home: Path) -> set[str]:
    """Variable names set (non-empty) in ``home/.env``, which Hermes loads at start."""
    path = home / ".env"
    if not path.is_file():
        return set()
    names = set()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        if sep and key and value.strip().strip("'\""):
            names.add(key)
    return names


def check_settings(settings: ProviderSettings, hermes_home: str | os.PathLike[str]) -> list[str]:
    """Everything that rules these settings out in this Python, in words (empty: they can work)."""
    home = str(hermes_home)
    config = settings.memory_config(home, hermes_profile(home))
    problems = []
    why = embedder_problem(config.tier3, home)
    if why:
        problems.append(why)
    missing = missing_packages(config)
    if missing:
        problems.append(
            f"this Python ({sys.executable}) lacks hermes-memory-tiers[{','.join(missing)}]; "
            f"fix: {fix_command(sys.executable, missing)}"
        )
    return problems


def save_answers(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> Path:
    """Merge setup answers into nextlevel.yaml after checking they can work.

    Raises ConfigError naming the bad key, or saying why the combination cannot work.
    """
    settings = merge_setup(values, hermes_home)
    problems = check_settings(settings, hermes_home)
    if problems:
        raise ConfigError(f"not saved, this cannot work: {'; '.join(problems)}")
    return save_settings(settings, hermes_home)


# -- the wizard -----------------------------------------------------------------------------------
class SetupRefused(Exception):
    """An answer that cannot work; the message says why."""


def run_setup(hermes_home: str | os.PathLike[str], ask: Ask, say: Say, *, interactive: bool) -> Path | None:
    """Ask, validate and write ``nextlevel.yaml``. Returns its path, or None when nothing was written.

    ``interactive`` False: an answer that cannot work is not asked again; the shipped default is used
    instead when that works (and said so).
    """
    home = Path(hermes_home)
    try:
        current = load_settings(home)
    except ConfigError as exc:
        say(f"✗ {exc}")
        say(f"Fix or delete {settings_path(home)}, then run setup again. Nothing was changed.")
        return None
    tier3 = dict(current.memory.get("tier3") or {})
    say(f"Configuring {PROVIDER_NAME} (hermes-memory). Enter keeps the value in [brackets].")
    memory = {k: v for k, v in current.memory.items() if k != "tier3"}
    provider = dict(current.to_file_dict()["provider"])
    settings = _ask_until_it_works(home, tier3, provider, memory, ask, say, interactive=interactive)
    if settings is None:
        say("Nothing was saved.")
        return None
    budget = ask("Token budget of the memory block added to each turn", str(settings.prefetch_budget_tokens))
    try:
        settings = build_settings({**provider, "prefetch_budget_tokens": budget}, settings.memory)
    except ConfigError as exc:
        say(f"✗ {exc}; keeping {current.prefetch_budget_tokens}")
    return save_settings(settings, home)


def _ask_until_it_works(
    home: Path,
    tier3: Mapping[str, Any],
    provider: Mapping[str, Any],
    memory: Mapping[str, Any],
    ask: Ask,
    say: Say,
    *,
    interactive: bool,
) -> ProviderSettings | None:
    """Settings from the answers, once they pass ``check_settings`` (three tries at a terminal; without
    one, the shipped default when the answer cannot work). None: nothing that works was chosen."""
    for attempt in range(3):
        try:
            chosen = _ask_tier3(home, tier3, ask, say)
            settings = build_settings(provider, {**memory, "tier3": chosen}, source="hermes memory setup")
            problems = check_settings(settings, home)
            if problems:
                raise SetupRefused("; ".join(problems))
            return settings
        except (SetupRefused, ConfigError) as exc:
            say(f"✗ that cannot work: {exc}")
            if not interactive:
                return _shipped_default(home, provider, memory, say)
            if attempt < 2:
                say("Choose again.")
    return None


def _shipped_default(
    home: Path, provider: Mapping[str, Any], memory: Mapping[str, Any], say: Say
) -> ProviderSettings | None:
    chosen: dict[str, Any] = {"embedding_model": DEFAULT_EMBEDDER, "backend": DEFAULT_BACKEND}
    settings = build_settings(provider, {**memory, "tier3": chosen}, source="hermes memory setup")
    problems = check_settings(settings, home)
    if problems:
        say(f"✗ the default (local embedder, qdrant) cannot work either: {'; '.join(problems)}")
        return None
    say("Using the default instead: local embedder (all-MiniLM-L6-v2, offline), embedded qdrant.")
    return settings


def _ask_tier3(home: Path, current: Mapping[str, Any], ask: Ask, say: Say) -> dict[str, Any]:
    tier3 = dict(current)
    configured = str(tier3.get("embedding_model") or DEFAULT_EMBEDDER)
    embedder = _choose("Embedder for meaning-level search", EMBEDDERS, configured, ask, say)
    for key in ("embedding_model_name", "embedding_base_url", "embedding_dim", "api_key_env"):
        if embedder != current.get("embedding_model"):
            tier3.pop(key, None)
    tier3["embedding_model"] = embedder
    asks = EMBEDDER_REGISTRY[embedder].asks
    if asks == "model_folder":
        name = ask(
            "Model folder (or a model name already in the local cache)",
            str(tier3.get("embedding_model_name") or ""),
        )
        if not name.strip():
            raise SetupRefused(
                "sentence-transformers needs a model folder on this machine (nothing is downloaded)"
            )
        folder = model_folder(name.strip())
        if folder is None:
            raise SetupRefused(
                f"{name.strip()!r} is neither a folder nor in the local model cache ({hf_cache_dir()})"
            )
        tier3["embedding_model_name"] = (
            str(folder) if Path(name.strip()).expanduser().is_dir() else name.strip()
        )
        dim = model_dim(folder)
        tier3["embedding_dim"] = dim if dim is not None else _ask_dim(ask, tier3.get("embedding_dim"))
    elif asks == "endpoint":
        url = ask(
            "Endpoint URL (OpenAI-compatible, ending in /v1)", str(tier3.get("embedding_base_url") or "")
        )
        if not url.strip():
            raise SetupRefused("the openai embedder needs its endpoint URL")
        tier3["embedding_base_url"] = url.strip()
        model = ask("Embedding model", str(tier3.get("embedding_model_name") or DEFAULT_OPENAI_MODEL)).strip()
        tier3["embedding_model_name"] = model or DEFAULT_OPENAI_MODEL
        key = ask("Environment variable holding the API key ('none' if the endpoint needs none)",
                  str(tier3.get("api_key_env") or "OPENAI_API_KEY")).strip()  # fmt: skip
        if key.lower() in ("none", "-"):
            tier3["api_key_env"] = None
        else:
            tier3["api_key_env"] = key
            if not (os.environ.get(key) or key in dotenv_names(home)):
                raise SetupRefused(
                    f"{key} is not set; put {key}=... in {home / '.env'} (Hermes loads it), "
                    "then run setup again"
                )
        known = KNOWN_DIMS.get(tier3["embedding_model_name"])
        tier3["embedding_dim"] = known if known is not None else _ask_dim(ask, tier3.get("embedding_dim"))
    backend = _choose("Vector store", BACKENDS, str(tier3.get("backend") or DEFAULT_BACKEND), ask, say)
    tier3["backend"] = backend
    return {k: v for k, v in tier3.items() if v is not None or k == "api_key_env"}


def _ask_dim(ask: Ask, current: object) -> int:
    raw = ask("Vector size the model produces (embedding_dim)", str(current or "")).strip()
    try:
        value = int(raw)
    except ValueError as exc:
        raise SetupRefused(f"the vector size must be a whole number, got {raw!r}") from exc
    if value <= 0:
        raise SetupRefused(f"the vector size must be > 0, got {value}")
    return value


def _choose(label: str, choices: Mapping[str, str], default: str, ask: Ask, say: Say) -> str:
    names = list(choices)
    if default not in choices:
        default = names[0]
    say(f"{label}:")
    for number, (name, text) in enumerate(choices.items(), 1):
        say(f"  {number}. {name:<22} {text}")
    answer = ask(f"{label} (name or number)", default).strip()
    if answer.isdigit() and 1 <= int(answer) <= len(names):
        return names[int(answer) - 1]
    if answer in choices:
        return answer
    raise SetupRefused(f"{answer!r} is not one of {', '.join(names)}")


def describe(settings: ProviderSettings, hermes_home: str | os.PathLike[str]) -> list[str]:
    """What the settings mean, in lines for the end of setup."""
    home = str(hermes_home)
    config = settings.memory_config(home, hermes_profile(home))
    tier3 = config.tier3
    if not tier3.enabled:
        vectors = "meaning search off"
    else:
        label = EMBEDDER_REGISTRY[tier3.embedding_model].label or tier3.embedding_model_name
        model = f"{tier3.embedding_model} ({label})"
        vectors = f"embedder {model}, vector store {tier3.backend}"
    return [
        f"settings: {settings_path(home)}",
        f"  {vectors}; memory block {settings.prefetch_budget_tokens} tokens",
        f"  memory store: {config.db_path}",
        *(f"  people: {line}" for line in people_status(config).lines),
    ]


def post_setup(hermes_home: str, config: dict[str, Any]) -> None:
    """What Hermes' ``hermes memory setup`` calls: ask, validate, write, activate, say what was done."""
    from hermes_memory.hermes import install

    say: Say = _print
    interactive = sys.stdin is not None and sys.stdin.isatty()
    ask = _hermes_prompt() if interactive else _default_answer
    if not interactive:
        say(f"\n  No terminal: writing the {PROVIDER_NAME} defaults (every question takes its default).")
    written = run_setup(hermes_home, ask, say, interactive=interactive)
    if written is None:
        say(f"\n  {PROVIDER_NAME} was not activated.\n")
        return
    try:
        install.activate_provider(hermes_home)
    except ConfigError as exc:
        say(f"✗ settings saved, but config.yaml could not be changed: {exc}")
        return
    memory = config.setdefault("memory", {}) if isinstance(config.get("memory"), dict) else {}
    memory["provider"] = PROVIDER_NAME
    settings = load_settings(hermes_home)
    say("")
    for line in describe(settings, hermes_home):
        say(f"  ✓ {line}" if line.startswith("settings") else f"  {line}")
    say(f"  ✓ Memory provider: {PROVIDER_NAME} (activation saved to config.yaml)")
    say(f"  Check it with: hermes-memory status --hermes-home {hermes_home}")
    say("\n  Start a new session to activate.\n")


def _print(text: str) -> None:
    print(f"  {text}" if text and not text.startswith(("\n", " ")) else text)


def _default_answer(label: str, default: str) -> str:
    _print(f"{label}: {default}")
    return default


def _hermes_prompt() -> Ask:
    try:
        prompt = importlib.import_module("hermes_cli.memory_setup")._prompt  # Hermes' own (inside Hermes)
    except (ImportError, AttributeError):

        def plain(label: str, default: str) -> str:
            suffix = f" [{default}]" if default else ""
            line = sys.stdin.readline() if not sys.stdin.isatty() else input(f"  {label}{suffix}: ")
            return line.strip() or default

        return plain

    def hermes(label: str, default: str) -> str:
        return str(prompt(label, default=default or None)).strip() or default

    return hermes


__all__ = [
    "SetupRefused",
    "check_settings",
    "describe",
    "dotenv_names",
    "embedder_problem",
    "hf_cache_dir",
    "missing_packages",
    "model_dim",
    "model_folder",
    "post_setup",
    "run_setup",
    "save_answers",
]
