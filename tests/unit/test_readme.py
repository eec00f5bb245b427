"""The README's test command is exactly what CI runs, and its main command runs the demo."""

from __future__ import annotations

import re
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


DOCS = ROOT / "docs"


def test_the_front_page_is_short_and_installs_into_hermes_first() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    first = lines[:60]
    assert any(line.startswith("python3 -m venv") and "'.[hermes]'" in line for line in first)
    assert "hermes-memory install --activate" in first
    assert any("hermes-memory-tiers" in line for line in lines)  # the distribution's name


def test_the_docs_index_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md")
    assert pages and [p for p in pages if f"]({p})" not in index] == []
    assert "](docs/index.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_no_issue_numbers_in_user_facing_docs() -> None:
    pages = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted(DOCS.glob("*.md"))]
    found = [
        f"{page.name}:{number}: {line.strip()}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bissues? \d+|\bissue's\b", line, re.IGNORECASE)
    ]
    assert found == []


def test_every_bench_script_is_a_tool_named_in_the_benchmarks_page() -> None:
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (ROOT / "bench").glob("*.py"))
    assert scripts and [s for s in scripts if f"bench/{s}" not in page] == []


def test_the_research_log_names_the_commit_of_each_retired_script() -> None:
    log = (DOCS / "research.md").read_text(encoding="utf-8")
    retired = re.findall(r"^\| `bench/(\w+\.py)`", log, re.MULTILINE)
    assert retired and not any((ROOT / "bench" / name).exists() for name in retired)
    commit = re.search(r"git show ([0-9a-f]{7,40}):bench/", log)
    assert commit is not None
