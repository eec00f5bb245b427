"""Tier 2's contract on PostgreSQL: the store tests of ``tests/unit`` run again with every store of a
test on a real PostgreSQL server (a fresh database per test, ``HERMES_MEMORY_TIER2_URL``). Each module
here imports one unit module's tests; the fixtures those use come from ``tests/unit/conftest.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hermes_memory.config import TIER2_URL_ENV

_UNIT_CONFTEST = Path(__file__).parents[2] / "unit" / "conftest.py"
_spec = importlib.util.spec_from_file_location("unit_conftest", _UNIT_CONFTEST)
assert _spec is not None and _spec.loader is not None
_unit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_unit)
open_api = _unit.open_api
home = _unit.home
make = _unit.make


@pytest.fixture(autouse=True)
def _on_postgresql(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
