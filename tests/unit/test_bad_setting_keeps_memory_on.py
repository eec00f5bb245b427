"""A bad setting never switches memory off: it falls back to its default with a warning the user sees,
and no turn is lost because of it.

`shutdown_drain_s: 60.0` in nextlevel.yaml made initialize raise: Hermes ran with no memory block,
the turns were not stored, nothing was printed, and `hermes memory status` ended "available ✓".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hermes_settings import FAST_PROVIDER_YAML, api_of

from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes.settings import ProviderSettings, load_settings_lenient

BAD_PROVIDER = FAST_PROVIDER_YAML.replace(
    "provider:\n", "provider:\n  shutdown_drain_s: 60.0\n  bogus_key: 1\n", 1
)
BAD_MEMORY = FAST_PROVIDER_YAML + "    chunk_size: -5\n"


@pytest.mark.parametrize(("text", "named"), [(BAD_PROVIDER, "shutdown_drain_s"), (BAD_MEMORY, "chunk_size")])
def test_a_bad_setting_falls_back_with_a_warning_and_turns_are_stored(
    home: Path, make: Any, capsys: pytest.CaptureFixture[str], text: str, named: str
) -> None:
    (home / "nextlevel.yaml").write_text(text, encoding="utf-8")
    warned: list[str] = []
    provider = make("s1", warning_callback=warned.append)
    assert any(named in w for w in warned), warned
    assert named in capsys.readouterr().err  # `hermes -z` shows stderr, not the callback
    provider.sync_turn("I moved to Lisbon in May.", "Noted.", session_id="s1")
    provider.sync_turn("My sister is Ana.", "Nice.", session_id="s1")
    api = api_of(home)
    assert api.flush(60)["success"]
    assert len(api.get_latest(count=10)["data"]) == 4  # both turns, both messages each
    assert "Lisbon" in provider.prefetch("Where did I move?")


def test_each_bad_key_alone_is_replaced_by_its_default(home: Path) -> None:
    (home / "nextlevel.yaml").write_text(
        BAD_PROVIDER.replace("provider:\n", "provider:\n  prefetch_limit: 3\n", 1), encoding="utf-8"
    )
    settings, problems = load_settings_lenient(home)
    assert settings.shutdown_drain_s == ProviderSettings().shutdown_drain_s
    assert settings.prefetch_limit == 3 and settings.prefetch_wait_ms == 5000  # the good keys stay
    assert settings.memory["tier3"]["embedding_model"] == "hashing"
    assert len(problems) == 2 and any("bogus_key" in p for p in problems), problems


def test_hermes_status_is_not_available_over_a_setting_it_cannot_follow(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(home))
    (home / "nextlevel.yaml").write_text(BAD_PROVIDER, encoding="utf-8")
    provider = NextLevelProvider()
    assert provider.is_available()  # at agent start: memory runs, with the defaults
    shown = provider.get_status_config({})
    assert "shutdown_drain_s" in shown["config_error"] and "default" in shown["runs_with"], shown
    assert not provider.is_available()  # what `hermes memory status` prints next
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    fine = NextLevelProvider()
    assert "config_error" not in fine.get_status_config({}) and fine.is_available()
