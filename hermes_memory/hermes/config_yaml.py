"""Set or clear ``memory.provider`` in Hermes' ``config.yaml`` without disturbing anything else.

First choice is a one-line text edit (every other byte, comment and formatting stays as it was);
when the file's shape does not allow that (e.g. ``memory: {provider: x}`` in flow style), a
round-trip through ruamel.yaml (which Hermes itself depends on) keeps comments and key order. Either
way the result is parsed again and must equal the original document with only that key changed, or
nothing is written.
"""

from __future__ import annotations

import importlib
import io
import os
import re
from pathlib import Path
from typing import Any

import yaml

from hermes_memory.errors import ConfigError

_TOP_MEMORY = re.compile(r"^memory:[ \t]*(?:#.*)?$")
_TOP_KEY = re.compile(r"^[^\s#]")


def read_provider(path: Path) -> str | None:
    """The configured ``memory.provider`` (None when the file or key is absent). Raises ConfigError."""
    data = _load(path)
    memory = data.get("memory")
    if not isinstance(memory, dict):
        return None
    value = memory.get("provider")
    return None if value is None else str(value)


def set_provider(path: Path, name: str) -> bool:
    """Make ``memory.provider`` equal ``name`` ("" turns the provider off). Returns True when the
    file changed. Raises ConfigError when it cannot be done safely (then nothing is written)."""
    if not path.exists():
        if not name:
            return False
        _write(path, f"memory:\n  provider: {name}\n")
        return True
    original_text = _read(path)
    original = _parse(path, original_text)
    memory = original.get("memory")
    if isinstance(memory, dict) and memory.get("provider") == name:
        return False
    if memory is not None and not isinstance(memory, dict):
        raise ConfigError(f"{path}: 'memory' is not a mapping; fix it by hand (memory:\\n  provider: {name})")
    expected = dict(original)
    expected["memory"] = {**(memory or {}), "provider": name}
    new_text = _text_edit(original_text, name)
    if new_text is None or _parse(path, new_text) != expected:
        new_text = _ruamel_edit(path, original_text, name)
    if _parse(path, new_text) != expected:
        raise ConfigError(f"{path}: could not set memory.provider safely; set it by hand to {name!r}")
    _write(path, new_text)
    return True


def unset_provider(path: Path) -> bool:
    """Remove the ``memory.provider`` key (and a ``memory:`` section left empty by that). Returns True
    when the file changed. Raises ConfigError when it cannot be done safely (then nothing is written)."""
    if not path.exists():
        return False
    original_text = _read(path)
    original = _parse(path, original_text)
    memory = original.get("memory")
    if not isinstance(memory, dict) or "provider" not in memory:
        return False
    expected = dict(original)
    rest = {k: v for k, v in memory.items() if k != "provider"}
    if rest:
        expected["memory"] = rest
    else:
        del expected["memory"]
    new_text = without_provider(original_text)
    if new_text is None or _parse(path, new_text) != expected:
        new_text = _ruamel_unset(path, original_text)
    if _parse(path, new_text) != expected:
        raise ConfigError(f"{path}: could not remove memory.provider safely; remove it by hand")
    _write(path, new_text)
    return True


def without_provider(text: str) -> str | None:
    """``text`` without the ``provider:`` line of its top-level ``memory:`` block (and without the
    ``memory:`` line when nothing else is left in it); None when the shape is not that simple."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _TOP_MEMORY.match(line.rstrip("\r\n"))), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]):
        end += 1
    children = [
        i for i in range(start + 1, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")
    ]
    if not children:
        return None
    first = lines[children[0]]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    found = [i for i in children if re.match(rf"^{re.escape(indent)}provider:[ \t]*[^\s|>]", lines[i])]
    if len(found) != 1:
        return None
    del lines[found[0]]
    if len(children) == 1:
        del lines[start]
    return "".join(lines)


def _ruamel_unset(path: Path, text: str) -> str:
    try:
        ruamel = importlib.import_module("ruamel.yaml")
    except ImportError as exc:
        raise ConfigError(
            f"{path}: its 'memory' section is written in a form this tool only edits with ruamel.yaml "
            "(pip install ruamel.yaml), or remove 'memory.provider' by hand"
        ) from exc
    rt = ruamel.YAML(typ="rt")
    rt.preserve_quotes = True
    data = rt.load(text)
    memory = data["memory"]
    del memory["provider"]
    if not memory:
        del data["memory"]
    out = io.StringIO()
    rt.dump(data, out)
    return out.getvalue()


def _text_edit(text: str, name: str) -> str | None:
    lines = text.splitlines(keepends=True)
    value = name if name else '""'
    start = next((i for i, line in enumerate(lines) if _TOP_MEMORY.match(line.rstrip("\r\n"))), None)
    if start is None:
        if any(line.startswith("memory:") for line in lines):
            return None  # flow style or an inline value: leave it to the round-trip editor
        tail = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{tail}memory:\n  provider: {value}\n"
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]):
        end += 1
    children = [
        i for i in range(start + 1, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")
    ]
    first = lines[children[0]] if children else ""
    indent = first[: len(first) - len(first.lstrip(" \t"))] or "  "
    newline = "\r\n" if lines[start].endswith("\r\n") else "\n"
    for i in children:
        found = re.match(rf"^{re.escape(indent)}provider:([ \t]*)([^#\r\n]*?)([ \t]*#.*)?(\r?\n)?$", lines[i])
        if found:
            comment = found.group(3) or ""
            ending = found.group(4) or ""
            lines[i] = f"{indent}provider: {value}{comment}{ending}"
            return "".join(lines)
    lines.insert(start + 1, f"{indent}provider: {value}{newline}")
    return "".join(lines)


def _ruamel_edit(path: Path, text: str, name: str) -> str:
    try:
        ruamel = importlib.import_module("ruamel.yaml")
    except ImportError as exc:
        raise ConfigError(
            f"{path}: its 'memory' section is written in a form this tool only edits with ruamel.yaml "
            f"(pip install ruamel.yaml), or set 'memory.provider: {name}' by hand"
        ) from exc
    rt = ruamel.YAML(typ="rt")
    rt.preserve_quotes = True
    data = rt.load(text)
    memory = data.get("memory")
    if memory is None:
        data["memory"] = {"provider": name}
    else:
        memory["provider"] = name
    out = io.StringIO()
    rt.dump(data, out)
    return out.getvalue()


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    return _parse(path, _read(path))


def _read(path: Path) -> str:
    try:
        # newline="": keep CRLF files CRLF (the edit must not touch other lines).
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}); fix it before activating the provider") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.nextlevel.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8", newline="")
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


__all__ = ["read_provider", "set_provider", "unset_provider", "without_provider"]
