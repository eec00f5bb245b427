"""``hermes-memory install`` / ``uninstall``: put the ``nextlevel`` provider into a HERMES_HOME.

Hermes 0.19 finds user memory providers only as directories under ``$HERMES_HOME/plugins/`` (entry
points are not consulted), so install writes a small shim there that imports this package, plus a
``plugin.yaml``, copies the ``memory-recall`` skill to ``$HERMES_HOME/skills/``, and with ``activate``
sets ``memory.provider: nextlevel`` in ``config.yaml`` (nothing else in that file changes).

Everything install creates is listed in a manifest (``plugins/nextlevel/install-manifest.json``, 0600)
together with config.yaml's bytes from before the first edit, so ``uninstall`` removes only what
install created and puts config.yaml back byte for byte.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import yaml

from hermes_memory.config import default_hermes_home
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import PROVIDER_NAME, config_yaml
from hermes_memory.hermes.interpreter import (
    extras_for,
    fix_command,
    needs_torch,
    package_version,
    pip_args,
    source_root,
)

SKILL_NAME = "memory-recall"
SHIM_MARKER = "Written by `hermes-memory install`"
SKILL_MARKER = "nextlevel_search"
MANIFEST = "install-manifest.json"
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
    # How config.yaml was put back: "restored" (the bytes from before install), "edited" (only the
    # provider key changed back: the file was changed by something else since), or "unchanged".
    config: str = "unchanged"
    notes: list[str] = field(default_factory=list)


def resolve_home(hermes_home: str | os.PathLike[str] | None) -> Path:
    """The HERMES_HOME to use: the argument, else $HERMES_HOME, else ~/.hermes."""
    return Path(os.path.expanduser(str(hermes_home) if hermes_home else default_hermes_home())).absolute()


def pip_spec(extras: str = RUNTIME_EXTRAS) -> str:
    """The pip arguments that install this same hermes-memory (with ``extras``) into another Python
    (CPU torch pinned first when the extras need torch), as one shell-quoted string."""
    chosen = [e for e in extras.split(",") if e]
    return " ".join(shlex.quote(a) for a in pip_args(chosen, pin_torch=needs_torch(chosen)))


def home_extras(home: Path) -> list[str]:
    """The extras the configuration of ``home`` needs (its nextlevel.yaml; defaults when absent).

    Raises ConfigError for a bad settings file.
    """
    from hermes_memory.hermes.settings import load_memory_config

    return extras_for(load_memory_config(home).config)


def render_shim(extras: list[str] | None = None) -> str:
    chosen = RUNTIME_EXTRAS.split(",") if extras is None else extras
    template = resources.files("hermes_memory.hermes").joinpath("templates/plugin_init.py.tmpl")
    return Template(template.read_text(encoding="utf-8")).substitute(
        version=package_version(),
        installer_python=sys.executable,
        pip_args=repr(" ".join(shlex.quote(a) for a in pip_args(chosen, pin_torch=needs_torch(chosen)))),
    )


def render_plugin_yaml() -> str:
    # No pip_dependencies: Hermes would pip-install them into its Python unpinned (a CUDA torch, a
    # non-editable copy). `hermes-memory install` checks Hermes' Python and prints the exact command.
    meta = {
        "name": PROVIDER_NAME,
        "version": package_version(),
        "description": (
            "hermes-memory: tiered local-first memory. Every turn remembered without an LLM; recall "
            "across curated notes, facts, entities, timeline, meaning and the knowledge graph. "
            "Needs hermes_memory importable by the Python that runs Hermes: `hermes-memory install` "
            "checks that and prints the one pip command that fixes it."
        ),
        "kind": "exclusive",
        "pip_dependencies": [],
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


def hint(command: str, home: Path | None) -> str:
    """A `hermes-memory ...` command that names ``home`` (so it acts on the same Hermes home)."""
    return f"hermes-memory {command}" + (f" --hermes-home {shlex.quote(str(home))}" if home else "")


def install(
    hermes_home: str | os.PathLike[str] | None = None,
    *,
    activate: bool = False,
    extras: list[str] | None = None,
) -> InstallResult:
    """Write the provider shim, plugin.yaml and skill; with ``activate`` select the provider.

    ``extras``: what the shim's fix message installs (default: what the home's settings need).
    Raises ConfigError when a directory of the same name that we did not write is in the way, when
    files cannot be written, or when config.yaml cannot be edited safely.
    """
    home = resolve_home(hermes_home)
    plugin_dir = home / "plugins" / PROVIDER_NAME
    skill_file = home / "skills" / SKILL_NAME / "SKILL.md"
    config_file = home / "config.yaml"
    _check_ours(plugin_dir / "__init__.py", SHIM_MARKER, "plugin")
    _check_ours(skill_file, SKILL_MARKER, "skill")
    manifest = read_manifest(home)
    created = set(manifest.get("created", []))
    for path in (plugin_dir.parent, plugin_dir, skill_file.parent.parent, skill_file.parent):
        if not path.exists():
            created.add(_rel(home, path))
    chosen = home_extras(home) if extras is None else extras
    for path, text in (
        (plugin_dir / "__init__.py", render_shim(chosen)),
        (plugin_dir / "plugin.yaml", render_plugin_yaml()),
        (skill_file, skill_text()),
    ):
        if not path.exists():
            created.add(_rel(home, path))
        _write(path, text)
    created.add(_rel(home, plugin_dir / MANIFEST))
    manifest["created"] = sorted(created)
    write_manifest(home, manifest)
    was_active = config_yaml.read_provider(config_file) == PROVIDER_NAME
    activated = activate_provider(home) or was_active if activate else False
    result = InstallResult(home, plugin_dir, skill_file, config_file, activated or was_active, was_active)
    if not activate and not was_active:
        given = home if hermes_home else None
        result.notes.append(
            f"not active yet: run `{hint('install --activate', given)}` "
            f"or `hermes memory setup {PROVIDER_NAME}`"
        )
    return result


def activate_provider(hermes_home: str | os.PathLike[str]) -> bool:
    """Set ``memory.provider: nextlevel`` in config.yaml, first recording the file's bytes (once) in
    the install manifest so ``uninstall`` can put them back. Returns True when the file changed.

    Raises ConfigError when config.yaml cannot be edited safely or the manifest cannot be written.
    """
    home = resolve_home(hermes_home)
    config_file = home / "config.yaml"
    if config_yaml.read_provider(config_file) == PROVIDER_NAME:
        return False
    manifest = read_manifest(home)
    if "config" not in manifest:
        before = _read_bytes(config_file)
        manifest["config"] = {
            "existed": before is not None,
            "original": base64.b64encode(before or b"").decode("ascii"),
            "provider_before": config_yaml.read_provider(config_file),
        }
    changed = config_yaml.set_provider(config_file, PROVIDER_NAME)
    after = _read_bytes(config_file)
    manifest["config"]["written"] = base64.b64encode(after or b"").decode("ascii")
    if (home / "plugins" / PROVIDER_NAME).is_dir():
        write_manifest(home, manifest)
    return changed


def read_manifest(home: Path) -> dict[str, Any]:
    """The install manifest of ``home`` ({} when there is none). Raises ConfigError when unreadable."""
    path = home / "plugins" / PROVIDER_NAME / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the install manifest {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not an install manifest")
    return data


def write_manifest(home: Path, manifest: dict[str, Any]) -> None:
    # 0600: it holds config.yaml's original bytes, which may include API keys.
    _write(home / "plugins" / PROVIDER_NAME / MANIFEST, json.dumps(manifest, indent=1) + "\n", mode=0o600)


def uninstall(hermes_home: str | os.PathLike[str] | None = None) -> UninstallResult:
    """Remove what install created (its manifest says what) and put config.yaml back as it was;
    memory data is kept.

    config.yaml gets its bytes from before install back when nothing else changed it since; when
    something did (Hermes' setup rewrites the file), only ``memory.provider`` is put back as it was
    (removed when install added it). Without a manifest (an older install) the shim and skill
    directories are removed and ``memory.provider`` is removed.

    Raises ConfigError when a directory we did not write is in the way or config.yaml cannot be edited.
    """
    home = resolve_home(hermes_home)
    plugin_dir = home / "plugins" / PROVIDER_NAME
    skill_dir = home / "skills" / SKILL_NAME
    _check_ours(plugin_dir / "__init__.py", SHIM_MARKER, "plugin")
    _check_ours(skill_dir / "SKILL.md", SKILL_MARKER, "skill")
    manifest = read_manifest(home)
    config_file = home / "config.yaml"
    result = UninstallResult(home, [], False)
    if config_yaml.read_provider(config_file) == PROVIDER_NAME:
        result.config = _restore_config(config_file, manifest.get("config"))
        result.deactivated = True
    removed = result.removed
    for path in (plugin_dir, skill_dir):
        if path.exists() and (not manifest or _rel(home, path) in manifest.get("created", [])):
            _remove_tree(path)
            removed.append(path)
        elif path.exists():  # it was there before install: take out only our files
            for name in ("__init__.py", "plugin.yaml", MANIFEST) if path == plugin_dir else ("SKILL.md",):
                if (path / name).exists():
                    _remove_tree(path / name)
                    removed.append(path / name)
    for rel in sorted(manifest.get("created", []), key=len, reverse=True):
        path = home / rel
        if rel != "config.yaml" and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
            removed.append(path)
    given = home if hermes_home else None
    if (home / "nextlevel.yaml").exists():  # written by setup or by hand, not by install
        result.notes.append(f"settings are kept: {home / 'nextlevel.yaml'}")
    result.notes.append(
        f"memory data is kept (under {home}); delete it by hand to forget everything, "
        f"or reinstall with `{hint('install --activate', given)}`"
    )
    return result


def _restore_config(config_file: Path, record: dict[str, Any] | None) -> str:
    if not record:
        config_yaml.unset_provider(config_file)
        return "edited"
    original = base64.b64decode(record["original"])
    current = _read_bytes(config_file)
    written = base64.b64decode(record.get("written", ""))
    if current == written:
        _put_back(config_file, original if record["existed"] else None)
        return "restored"
    before = record.get("provider_before")
    if before is None:
        config_yaml.unset_provider(config_file)
    else:
        config_yaml.set_provider(config_file, str(before))
    # Nothing but the provider key differed from the original: give back its exact bytes.
    now = _read_bytes(config_file)
    if record["existed"] and now is not None and _same_yaml(now, original):
        _put_back(config_file, original)
        return "restored"
    if not record["existed"] and (now is None or _same_yaml(now, b"")):
        _put_back(config_file, None)
        return "restored"
    return "edited"


def _same_yaml(a: bytes, b: bytes) -> bool:
    try:
        return bool(yaml.safe_load(a.decode("utf-8-sig")) == yaml.safe_load(b.decode("utf-8-sig")))
    except (UnicodeDecodeError, yaml.YAMLError):
        return False


def _put_back(path: Path, data: bytes | None) -> None:
    try:
        if data is None:
            path.unlink(missing_ok=True)
            return
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o600
        tmp = path.with_name(f".{path.name}.nextlevel.tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.exists() else None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _remove_tree(path: Path) -> None:
    try:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError as exc:
        raise ConfigError(f"cannot remove {path}: {exc.strerror or exc}") from exc


def _rel(home: Path, path: Path) -> str:
    return path.relative_to(home).as_posix()


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


def _write(path: Path, text: str, *, mode: int | None = None) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


__all__ = [
    "InstallResult",
    "UninstallResult",
    "activate_provider",
    "fix_command",
    "hint",
    "home_extras",
    "install",
    "package_version",
    "pip_spec",
    "read_manifest",
    "render_plugin_yaml",
    "render_shim",
    "resolve_home",
    "skill_text",
    "source_root",
    "uninstall",
]
