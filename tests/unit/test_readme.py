"""The README's test command is exactly what CI runs, and its main command runs the demo."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_exactly_the_readme_test_command_then_ruff_and_mypy() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    ci = [line for line in lines if line and not line.startswith("#")]
    tests = [line for line in ci if "pytest" in line]
    assert len(tests) == 1
    readme_lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert tests[0] in readme_lines
    assert ci[-1] == "ruff check hermes_memory tests bench && mypy hermes_memory"
    assert ci.index(tests[0]) < len(ci) - 1  # the checks run in the venv the test command made
    assert ci[-1] in readme_lines


def test_readme_main_command_installs_and_runs_the_demo() -> None:
    readme_lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    main = [line for line in readme_lines if line.endswith("hermes-memory demo")]
    assert main and "'.[all]'" in main[0]
    assert "torch" not in main[0]  # [all] brings no torch: nothing to pin
