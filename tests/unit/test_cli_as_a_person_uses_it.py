"""The command line as a person uses it: short ids, one rule for "the user", a closed pipe, a fast and
complete `--help`, `--version`, `demo --json`, progress from `doctor --repair`, errors that name flags,
and a mistyped `--home` refused instead of a new empty store.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import __version__
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import build_parser
from hermes_memory.cli import main as cli_main
from hermes_memory.hermes.tools import ToolContext, call_tool

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
YAML = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "nextlevel.yaml").write_text(YAML, encoding="utf-8")
    with MemoryAPI(hermes_home=path, **SETTINGS) as api:
        for text in ("I work at Siemens as an engineer.", "I live in Lisbon.", "My sister is Ana."):
            assert api.remember_turn(text, "Noted.", "s1")["success"]
        assert api.flush(60)["success"]
    return path


def _facts(home: Path) -> list[dict[str, Any]]:
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        return list(api.fact_query(None, limit=50, min_confidence=0.0)["data"])


def test_the_short_ids_history_prints_are_accepted(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fact = next(f for f in _facts(home) if "Siemens" in f["content"])
    short = fact["uuid"][:8]
    for argv in (["fact", "get", short], ["why", short], ["inspect", short]):
        assert cli_main([*argv, "--home", str(home)]) == 0, (argv, capsys.readouterr().err)
        assert "Siemens" in capsys.readouterr().out, argv
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        assert api.fact_get(short)["data"]["uuid"] == fact["uuid"]
        too_short = api.fact_get(short[:2])
        assert not too_short["success"] and "full uuid" in too_short["error"], too_short


def test_history_of_the_user_is_one_rule_for_the_api_the_tool_and_the_cli(home: Path) -> None:
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        for word in ("user", "me"):
            contents = {f["content"] for f in api.fact_history(word)["data"]}
            found = any("Siemens" in c for c in contents) and any("Lisbon" in c for c in contents)
            assert found, (word, contents)
        ctx = ToolContext(api=api, session_id="s1", writable=True, after_write=lambda: None)
        answer = json.loads(call_tool(ctx, "nextlevel_memory", {"action": "history", "subject": "me"}))
        assert any("Siemens" in f["content"] for f in answer["result"]), answer


def test_a_closed_pipe_ends_the_command_quietly(home: Path) -> None:
    # `hermes-memory history user | head -1`: the reader is gone before the command writes
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hermes_memory.cli", "history", "user", "--home", str(home)],
            stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr


def test_building_the_parser_loads_no_store_numpy_or_graph() -> None:
    probe = (
        "import sys; from hermes_memory.cli import build_parser; build_parser(['--help']).format_help(); "
        "heavy = ('numpy', 'networkx', 'yaml', 'hermes_memory.api', 'hermes_memory.config', "
        "'hermes_memory.graph', 'hermes_memory.tier3', 'hermes_memory.cron.jobs'); "
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_job_names_offered_as_choices_are_the_jobs() -> None:
    from hermes_memory._names import JOB_NAMES
    from hermes_memory.cron.jobs import JOB_NAMES as JOBS

    assert JOB_NAMES is JOBS


def test_version_and_every_option_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0 and __version__ in capsys.readouterr().out
    missing = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "hermes-memory")
    assert missing == [], missing


def test_demo_takes_the_global_json_option() -> None:
    args = build_parser().parse_args(["demo", "--json"])
    assert args.json is True
    args = build_parser().parse_args(["--json", "demo"])
    assert args.json is True


def test_doctor_repair_says_what_it_is_doing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli_main(["doctor", "--repair", "--home", str(home)])
    err = capsys.readouterr().err
    assert "doctor: checking ..." in err and "doctor: checking again ..." in err, err


def test_errors_name_the_flags_not_the_parameters(home: Path, tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        exported = api.export_json(str(tmp_path / "export.json"))
        assert exported["success"], exported
        refused = api.import_json(str(tmp_path / "export.json"), merge=False)
        assert not refused["success"] and "--merge" in refused["error"], refused
        backed = api.backup(str(tmp_path / "backup"))
        assert backed["success"], backed
    again = MemoryAPI.restore(str(tmp_path / "backup"), config=_config(home))
    assert not again["success"] and "--force" in again["error"], again


def _config(home: Path) -> Any:
    from hermes_memory.hermes.settings import load_memory_config

    return load_memory_config(home).config


def test_a_mistyped_home_is_refused_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "hermse"
    assert cli_main(["stats", "--home", str(typo)]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert not typo.exists()
