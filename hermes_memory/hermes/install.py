"""``hermes-memory install`` / ``uninstall``: put the ``nextlevel`` provider into a HERMES_HOME.

Hermes 0.19 finds user memory providers only as directories under ``$HERMES_HOME/plugins/`` (entry
points are not consulted), so install writes a small shim there that imports this package, plus a
``plugin.yaml``, copies the ``memory-recall`` skill to ``$HERMES_HOME/skills/``, and with ``activate``
sets ``memory.provider: nextlevel`` in ``config.yaml`` (nothing else in that file changes).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from string import Template

import yaml

import hermes_memory
from hermes_memory.config import default_hermes_home
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import PROVIDER_NAME, config_yaml

SKILL_NAME = "memory-recall"
SHIM_MARKER = "Written by `hermes-memory install`"
SKILL_MARKER = "nextlevel_search"
# What Hermes' Python needs for the default configuration (the local embedder, the embedded Qdrant).
RUNTIME_EXTRAS = "local,qdrant"


@dataclass
class InstallResult:
    hermes_home: Path
    plugin_dir: Path
    skill_file: Path
    config_file: Path
    activated: bool
    was_active: bool
    notes: list[str] = field(default_factory=list)


@dataclass
class UninstallResult:
    hermes_home: Path
    removed: list[Path]
    deactivated: bool
    notes: list[str] = field(default_factory=list)


def resolve_home(hermes_home: str | os.PathLike[str] | None) -> Path:
    """The HERMES_HOME to use: the argument, else $HERMES_HOME, else ~/.hermes."""
    return Path(os.path.expanduser(str(hermes_home) if hermes_home else default_hermes_home())).absolute()


def package_version() -> str:
    try:
        return metadata.version("hermes-memory")
    except metadata.PackageNotFoundError:
        return hermes_memory.__version__


def source_root() -> Path | None:
    """The source checkout this package runs from (an editable or path install), if any."""
    root = Path(hermes_memory.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "hermes-memory"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def pip_spec(extras: str = RUNTIME_EXTRAS) -> str:
    """A pip requirement that installs this same hermes-memory (with ``extras``) into another Python.

    A source checkout is named by path: another project owns the name 'hermes-memory' on PyPI.
    """
    root = source_root()
    if root is not None:
        return f"hermes_memory[{extras}] @ {root.as_uri()}"
    return f"hermes_memory[{extras}]=={package_version()}"


def render_shim() -> str:
    template = resources.files("hermes_memory.hermes").joinpath("templates/plugin_init.py.tmpl")
    return Template(template.read_text(encoding="utf-8")).substitute(
        version=package_version(), installer_python=sys.executable, pip_spec=pip_spec()
    )


def render_plugin_yaml() -> str:
    meta = {
        "name": PROVIDER_NAME,
        "version": package_version(),
        "description": (
            "hermes-memory: tiered local-first memory. Every turn remembered without an LLM; recall "
            "across curated notes, facts, entities, timeline, meaning and the knowledge graph."
        ),
        "kind": "exclusive",
        "pip_dependencies": [pip_spec()],
    }
    return "# Written by `hermes-memory install`.\n" + yaml.safe_dump(
        meta, sort_keys=False, allow_unicode=True
    )


def skill_text() -> str:
    return (
        resources.files("hermes_memory.hermes")
        .joinpath(f"skills/{SKILL_NAME}/SKILL.md")
        .read_text(encoding="utf-8")
    )


def install(hermes_home: str | os.PathLike[str] | None = None, *, activate: bool = False) -> InstallResult:
    """Write the provider shim, plugin.yaml and skill; with ``activate`` select the provider.

    Raises ConfigError when a directory of the same name that we did not write is in the way, when
    files cannot be written, or when config.yaml cannot be edited safely.
    """
    home = resolve_home(hermes_home)
    plugin_dir = home / "plugins" / PROVIDER_NAME
    skill_file = home / "skills" / SKILL_NAME / "SKILL.md"
    config_file = home / "config.yaml"
    _check_ours(plugin_dir / "__init__.py", SHIM_MARKER, "plugin")
    _check_ours(skill_file, SKILL_MARKER, "skill")
    _write(plugin_dir / "__init__.py", render_shim())
    _write(plugin_dir / "plugin.yaml", render_plugin_yaml())
    _write(skill_file, skill_text())
    was_active = config_yaml.read_provider(config_file) == PROVIDER_NAME
    activated = False
    if activate:
        activated = config_yaml.set_provider(config_file, PROVIDER_NAME) or was_active
    result = InstallResult(home, plugin_dir, skill_file, config_file, activated or was_active, was_active)
    if not activate and not was_active:
        result.notes.append(
            f"not active yet: run `hermes-memory install --activate` or `hermes memory setup {PROVIDER_NAME}`"
        )
    return result


def uninstall(hermes_home: str | os.PathLike[str] | None = None) -> UninstallResult:
    """Remove the shim and skill we wrote and deselect the provider; memory data is kept.

    Raises ConfigError when a directory we did not write is in the way or config.yaml cannot be edited.
    """
    home = resolve_home(hermes_home)
    plugin_dir = home / "plugins" / PROVIDER_NAME
    skill_dir = home / "skills" / SKILL_NAME
    _check_ours(plugin_dir / "__init__.py", SHIM_MARKER, "plugin")
    _check_ours(skill_dir / "SKILL.md", SKILL_MARKER, "skill")
    removed = []
    for path in (plugin_dir, skill_dir):
        if path.exists():
            try:
                shutil.rmtree(path)
            except OSError as exc:
                raise ConfigError(f"cannot remove {path}: {exc.strerror or exc}") from exc
            removed.append(path)
    config_file = home / "config.yaml"
    deactivated = False
    if config_yaml.read_provider(config_file) == PROVIDER_NAME:
        deactivated = config_yaml.set_provider(config_file, "")
    result = UninstallResult(home, removed, deactivated)
    result.notes.append(
        f"memory data is kept (under {home}); delete it by hand to forget everything, "
        f"or reinstall with `hermes-memory install --activate`"
    )
    return result


def _check_ours(path: Path, marker: str, what: str) -> None:
    if not path.exists():
        if path.parent.exists() and any(path.parent.iterdir()) and what == "plugin":
            raise ConfigError(
                f"{path.parent} exists but was not written by hermes-memory; move it away first"
            )
        return
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if marker not in text:
        raise ConfigError(f"{path} was not written by hermes-memory ({what}); move it away first")


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


__all__ = [
    "InstallResult",
    "UninstallResult",
    "install",
    "package_version",
    "pip_spec",
    "render_plugin_yaml",
    "render_shim",
    "resolve_home",
    "skill_text",
    "source_root",
    "uninstall",
]
