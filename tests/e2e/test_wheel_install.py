"""The package as a user gets it: built as an sdist and a wheel, the wheel installed (not editable) into
a fresh venv, and from that install `hermes-memory demo`, `hermes-memory install --activate` into a new
HERMES_HOME and one `hermes -z` turn with the provider answering.

Nothing is downloaded: ``python -m build --no-isolation`` builds with this venv's setuptools, the wheel
is installed with ``--no-deps``, and the fresh venv sees this venv's packages (numpy, the embedder,
hermes-agent) through a path file placed after its own site-packages. That path file adds the directory
without running its ``.pth`` files, so an editable install of this checkout there stays inactive: every
``hermes_memory`` import below is the wheel's (checked).
"""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import CONFIG_YAML, HERE, HERMES, env_for, require_hermes

from hermes_memory._dist import DIST_NAME
from hermes_memory.bench import fake_llm

require_hermes()
if importlib.util.find_spec("build") is None:
    if os.environ.get("CI"):
        pytest.fail("the `build` package is missing: the dev extra installs it", pytrace=False)
    pytest.skip("the `build` package is missing (pip install -e '.[dev]')", allow_module_level=True)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What the package reads at run time besides its modules (importlib.resources): the wheel must carry it.
DATA_FILES = sorted(
    p.relative_to(ROOT).as_posix()
    for p in (ROOT / "hermes_memory").rglob("*")
    if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
)


def _run(
    argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 240
) -> str:
    """Run ``argv``; its stdout. ``cwd``: never the checkout, whose hermes_memory ``python -c`` would
    import first."""
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False
    )  # fmt: skip
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sdist and the wheel, built from a copy of the source (the checkout stays untouched)."""
    import shutil

    started = time.monotonic()
    src = tmp_path_factory.mktemp("src")
    shutil.copy2(ROOT / "pyproject.toml", src)
    shutil.copy2(ROOT / "README.md", src)
    shutil.copytree(ROOT / "hermes_memory", src / "hermes_memory",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)], timeout=300)
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "seconds": time.monotonic() - started}


@pytest.fixture(scope="module")
def venv(built: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv holding the wheel (no -e), seeing this venv's other packages after its own."""
    root = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(root)])
    python = root / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run([str(python), "-c", where]).strip())
    ours = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    (purelib / "zz_shared_venv.pth").write_text("\n".join(dict.fromkeys(ours)) + "\n", encoding="utf-8")
    # --ignore-installed: this venv's copy (seen through the path file) is neither "already installed"
    # for the fresh venv nor touched; no PYTHONPATH, so a checkout on it is not taken for an install.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          "--ignore-installed", str(built["wheel"])], env=env, cwd=root)  # fmt: skip
    yield root


def _env(venv: Path, home: Path) -> dict[str, str]:
    """A process on ``home`` from the fresh venv: its commands first, only the offline guard on
    PYTHONPATH (a checkout on PYTHONPATH would shadow the wheel)."""
    env = env_for(home)
    env["PYTHONPATH"] = str(HERE / "guard_site")
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env["PATH"]])
    env.pop("VIRTUAL_ENV", None)
    return env


def test_the_wheel_and_the_sdist_carry_the_package_data(built: dict[str, Any]) -> None:
    assert "hermes_memory/default.yaml" in DATA_FILES and len(DATA_FILES) >= 5
    with zipfile.ZipFile(built["wheel"]) as whl:
        names = set(whl.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert f"Name: {DIST_NAME}\n" in whl.read(metadata).decode()
        scripts = whl.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert [f for f in DATA_FILES if f not in names] == []
    assert "hermes-memory = hermes_memory.cli:main" in scripts
    assert "hermes-memory-tiers = hermes_memory.cli:main" in scripts
    with tarfile.open(built["sdist"]) as sdist:
        inside = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert [f for f in [*DATA_FILES, "pyproject.toml", "README.md"] if f not in inside] == []


def test_from_the_wheel_demo_install_and_a_hermes_turn_work(
    venv: Path, built: dict[str, Any], tmp_path: Path
) -> None:
    started = time.monotonic()
    home = tmp_path / "hermes-home"
    home.mkdir()
    env = _env(venv, home)
    python, command = str(venv / "bin" / "python"), str(venv / "bin" / "hermes-memory")
    where = _run([python, "-c", "import hermes_memory; print(hermes_memory.__file__)"], env=env, cwd=home)
    assert where.strip().startswith(str(venv)), where  # the wheel's copy, not the checkout

    summary = json.loads(_run([command, "demo", "--json"], env=env, cwd=home))["data"]
    assert [c["query"] for c in summary["checks"] if not c["first"]] == []

    server = fake_llm.start(log=home / "llm_requests.jsonl", script=home / "llm_script.json")
    try:
        (home / "llm_script.json").write_text(json.dumps({"default": {"status": True}}), encoding="utf-8")
        (home / "config.yaml").write_text(CONFIG_YAML.format(base_url=server.base_url), encoding="utf-8")
        out = _run([command, "install", "--hermes-home", str(home), "--activate", "--hermes-python", python],
                   env=env, cwd=home)  # fmt: skip
        assert "active: memory.provider is nextlevel" in out, out
        # `hermes` is the shared venv's script: run by the fresh venv's Python, it imports the wheel.
        _run([python, str(HERMES), "-z", "My sister is called Ana and she lives in Lisbon.",
              "--toolsets", "memory"], env=env, cwd=home)  # fmt: skip
        chats = [r["body"] for r in fake_llm.read_log(home / "llm_requests.jsonl")
                 if r["method"] == "POST" and r.get("body", {}).get("tools")]  # fmt: skip
    finally:
        server.stop()
    assert chats, "hermes -z sent the model nothing"
    tools = {t["function"]["name"] for t in chats[0]["tools"]}
    assert any(name.startswith("nextlevel_") for name in tools), sorted(tools)
    assert not (home / "refused.log").exists() or (home / "refused.log").read_text() == ""
    status = json.loads(_run([command, "status", "--hermes-home", str(home), "--hermes-python", python,
                              "--json"], env=env, cwd=home))  # fmt: skip
    assert status["ok"], status["problems"]
    assert status["probe"]["hermes_memory"]["file"].startswith(str(venv))  # what Hermes' Python imports
    assert (venv / "bin" / "hermes-memory-tiers").is_file()
    print(f"\nwheel smoke: build {built['seconds']:.1f} s, demo + install + hermes -z "
          f"{time.monotonic() - started:.1f} s")  # fmt: skip
