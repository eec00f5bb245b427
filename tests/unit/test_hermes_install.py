"""`hermes-memory install` / `uninstall`: the shim Hermes discovers, plugin.yaml, the skill, activation."""

from __future__ import annotations

import importlib.util
import json
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
    assert meta["pip_dependencies"] == [install.pip_spec()]
    assert meta["pip_dependencies"][0].startswith("hermes_memory[local,qdrant]")
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


def test_uninstall_removes_our_files_deactivates_and_keeps_memory(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    install.install(tmp_path, activate=True)
    data = tmp_path / "default" / "memory"
    data.mkdir(parents=True)
    (data / "tier2.db").write_bytes(b"")
    result = install.uninstall(tmp_path)
    assert not (tmp_path / "plugins" / "nextlevel").exists()
    assert not (tmp_path / "skills" / "memory-recall").exists()
    assert result.deactivated is True
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["memory"] == {
        "provider": "",
        "memory_enabled": True,
    }
    assert (data / "tier2.db").exists()
    assert install.uninstall(tmp_path).removed == []


def test_cli_install_uninstall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--hermes-home", str(tmp_path), "--activate"]) == 0
    out = capsys.readouterr().out
    assert "installed the nextlevel provider" in out and "active:" in out
    assert main(["install", "--hermes-home", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["activated"] is True
    assert main(["uninstall", "--hermes-home", str(tmp_path)]) == 0
    assert "removed" in capsys.readouterr().out
    (tmp_path / "plugins" / "nextlevel").mkdir(parents=True)
    (tmp_path / "plugins" / "nextlevel" / "__init__.py").write_text("x = 1\n")
    assert main(["install", "--hermes-home", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not written by hermes-memory" in err[0]


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
    assert answer["status"]["fix"] == f'"{sys.executable}" -m pip install "{install.pip_spec()}"'
