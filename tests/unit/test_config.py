"""Config: defaults from the shipped default.yaml, a user file and overrides merged over them, path
expansion, and a ConfigError naming the key for every unknown key or bad value."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.config import Config, load_config, load_defaults
from hermes_memory.errors import ConfigError
from hermes_memory.recall.settings import PRESETS, RecallSettings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # No test may see the developer's real HERMES_HOME or ~/.hermes.
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))


def write_yaml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- defaults -----------------------------------------------------------------------------------


def test_defaults_carry_the_seed_values() -> None:
    cfg = load_config(hermes_home="/h")
    assert cfg.profile == "default"
    assert (cfg.tier1.memory_char_limit, cfg.tier1.user_char_limit) == (2200, 1375)
    assert cfg.tier2.enabled and cfg.tier2.wal_mode and cfg.tier2.auto_dedupe
    assert cfg.tier2.max_facts == 100000
    assert cfg.tier2.max_entities == 10000
    assert cfg.tier3.embedding_dim == 384
    # Deviation from the seed (512/64): MiniLM reads at most 256 word pieces; 200 approx tokens fit.
    assert cfg.tier3.chunk_size == 200 and cfg.tier3.chunk_overlap == 40
    assert cfg.tier3.min_score == 0.7
    assert cfg.graph.centrality_algorithm == "betweenness"
    assert cfg.limits.fact_ttl_days == 365.0
    assert cfg.cron.consolidate_schedule == "0 3 * * *"


def test_repo_config_default_yaml_is_the_packaged_file() -> None:
    # config/default.yaml is the documented single source; the package must ship the same bytes.
    repo_copy = REPO / "config" / "default.yaml"
    packaged = REPO / "hermes_memory" / "default.yaml"
    assert repo_copy.read_bytes() == packaged.read_bytes()


def test_every_default_key_is_a_typed_field() -> None:
    defaults = load_defaults()
    cfg = load_config(hermes_home="/h").to_dict()
    for section, values in defaults.items():
        if isinstance(values, dict):
            assert set(values) == set(cfg[section]), section
        else:
            assert cfg[section] == values


def test_config_is_frozen() -> None:
    cfg = load_config(hermes_home="/h")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.profile = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.tier2.max_facts = 1  # type: ignore[misc]


def test_the_llm_is_off_by_default_and_never_required() -> None:
    llm = load_config(hermes_home="/h").llm
    assert llm.enabled is False
    assert (llm.base_url, llm.model, llm.api_key_env) == (None, None, None)
    assert (llm.timeout_s, llm.max_retries, llm.core_memory_budget) == (20.0, 3, 8)


def test_an_enabled_llm_with_an_endpoint_and_a_key_variable_loads() -> None:
    cfg = load_config(
        hermes_home="/h",
        llm={"enabled": True, "base_url": "http://127.0.0.1:8000/v1", "model": "m", "api_key_env": "MY_KEY"},
    )
    assert cfg.llm.enabled and cfg.llm.api_key_env == "MY_KEY"


# -- paths --------------------------------------------------------------------------------------


def test_paths_expand_hermes_home_and_profile() -> None:
    cfg = load_config(hermes_home="/srv/hh", profile="work")
    assert cfg.db_path == Path("/srv/hh/work/memory/tier2.db")
    assert cfg.memories_dir == Path("/srv/hh/memories")
    assert cfg.tier3_path == Path("/srv/hh/work/memory/tier3")
    assert cfg.graph_path == Path("/srv/hh/work/memory/graph")
    assert cfg.core_memory_path == Path("/srv/hh/work/memory/core_memory.json")


def test_hermes_home_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "envhome"))
    cfg = load_config()
    assert cfg.hermes_home == str(tmp_path / "envhome")
    assert cfg.db_path == tmp_path / "envhome" / "default" / "memory" / "tier2.db"


def test_hermes_home_defaults_to_dot_hermes_in_the_user_home(tmp_path: Path) -> None:
    cfg = load_config()
    assert cfg.db_path == tmp_path / "userhome" / ".hermes" / "default" / "memory" / "tier2.db"


def test_explicit_hermes_home_beats_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", "/from/env")
    assert load_config(hermes_home="/explicit").hermes_home == "/explicit"


def test_a_user_path_with_tilde_is_expanded(tmp_path: Path) -> None:
    cfg = load_config(hermes_home="/h", tier2={"db_path": "~/mem/{profile}.db"})
    assert cfg.db_path == tmp_path / "userhome" / "mem" / "default.db"


# -- merging ------------------------------------------------------------------------------------


def test_user_file_is_merged_over_the_defaults(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "profile: alpha\ntier2:\n  max_content_chars: 500\n")
    cfg = load_config(path, hermes_home="/h")
    assert cfg.profile == "alpha"
    assert cfg.tier2.max_content_chars == 500
    assert cfg.tier2.busy_timeout_ms == 30000  # untouched default survives


def test_empty_user_file_means_defaults(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "")
    assert load_config(path, hermes_home="/h") == load_config(hermes_home="/h")


def test_overrides_beat_the_file(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "tier2:\n  max_content_chars: 500\n")
    cfg = load_config(path, hermes_home="/h", tier2={"max_content_chars": 42})
    assert cfg.tier2.max_content_chars == 42


def test_dotted_overrides() -> None:
    dotted: dict[str, Any] = {"tier3.backend": "memory", "tier1.user_char_limit": 99}
    cfg = load_config(None, hermes_home="/h", **dotted)
    assert cfg.tier3.backend == "memory"
    assert cfg.tier1.user_char_limit == 99


def test_integer_accepted_for_a_float_key() -> None:
    cfg = load_config(hermes_home="/h", graph={"auto_rebuild_interval_hours": 12})
    assert cfg.graph.auto_rebuild_interval_hours == 12.0
    assert isinstance(cfg.graph.auto_rebuild_interval_hours, float)


def test_nullable_key_accepts_null_and_a_string() -> None:
    assert load_config(hermes_home="/h", tier3={"url": None}).tier3.url is None
    assert load_config(hermes_home="/h", tier3={"url": "http://x:1"}).tier3.url == "http://x:1"


# -- errors name the key ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"nonsense": 1}, "nonsense"),
        ({"tier2": {"nonsense": 1}}, "tier2.nonsense"),
        ({"tier2.max_factz": 1}, "tier2.max_factz"),
        ({"tier1": {"memory_char_limit": True}}, "tier1.memory_char_limit"),
        ({"tier1": {"memory_char_limit": "2200"}}, "tier1.memory_char_limit"),
        ({"tier1": {"memory_char_limit": 1.5}}, "tier1.memory_char_limit"),
        ({"tier1": {"memory_char_limit": 0}}, "tier1.memory_char_limit"),
        ({"tier2": {"max_content_chars": -1}}, "tier2.max_content_chars"),
        ({"tier2": {"busy_timeout_ms": -5}}, "tier2.busy_timeout_ms"),
        ({"tier2": {"enabled": "yes"}}, "tier2.enabled"),
        ({"tier2": {"enabled": 1}}, "tier2.enabled"),
        ({"tier2": {"db_path": ""}}, "tier2.db_path"),
        ({"tier2": {"db_path": None}}, "tier2.db_path"),
        ({"tier2": 5}, "tier2"),
        ({"tier3": {"backend": "mongodb"}}, "tier3.backend"),
        ({"tier3": {"embedding_model": "gpt"}}, "tier3.embedding_model"),
        ({"tier3": {"min_score": 1.5}}, "tier3.min_score"),
        ({"tier3": {"min_score": float("nan")}}, "tier3.min_score"),
        ({"tier3": {"timeout_s": 0}}, "tier3.timeout_s"),
        ({"tier3": {"chunk_overlap": 512}}, "tier3.chunk_overlap"),
        ({"graph": {"centrality_algorithm": "random"}}, "graph.centrality_algorithm"),
        ({"limits": {"fact_ttl_days": -1}}, "limits.fact_ttl_days"),
        ({"llm": {"enabled": True}}, "llm.base_url"),
        ({"llm": {"enabled": True, "base_url": "http://127.0.0.1:8000/v1"}}, "llm.model"),
        ({"llm": {"base_url": "ftp://x"}}, "llm.base_url"),
        ({"llm": {"timeout_s": 0}}, "llm.timeout_s"),
        ({"llm": {"max_retries": -1}}, "llm.max_retries"),
        ({"llm": {"max_retries": 11}}, "llm.max_retries"),
        ({"llm": {"max_retries": 2.5}}, "llm.max_retries"),
        ({"llm": {"api_key_env": "sk-live-1234"}}, "llm.api_key_env"),  # a key, not a variable name
        ({"llm": {"core_memory_budget": 0}}, "llm.core_memory_budget"),
        ({"recall": {"preset": "turbo"}}, "recall.preset"),
        ({"recall": {"colour": "blue"}}, "recall.colour"),
        ({"recall": {"overrides": {"w_bm52": 0.4}}}, "recall.overrides.w_bm52"),
        ({"recall": {"overrides": {"w_bm25": -0.1}}}, "recall.overrides.w_bm25"),
        ({"recall": {"overrides": {"w_bm25": "high"}}}, "recall.overrides.w_bm25"),
        ({"recall": {"overrides": {"candidates": 2.5}}}, "recall.overrides.candidates"),
        ({"recall": {"overrides": {"candidates": 0}}}, "recall.overrides.candidates"),
        ({"recall": {"overrides": {"graph_decay": 1.5}}}, "recall.overrides.graph_decay"),
        ({"recall": {"overrides": 3}}, "recall.overrides"),
    ],
)
def test_bad_override_raises_config_error_naming_the_key(overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(hermes_home="/h", **overrides)
    assert repr(key) in str(info.value) or f"'{key}'" in str(info.value)


# -- recall: search settings as data ------------------------------------------------------------


def test_the_default_recall_preset_is_the_engines_measured_settings() -> None:
    recall = load_config(hermes_home="/h").recall
    assert (recall.preset, recall.overrides) == ("default", {})
    assert recall.settings() == RecallSettings()
    assert RecallSettings().w_bm25 == 0.35 and RecallSettings().fact_scale == 0.8


def test_recall_overrides_change_single_keys_of_the_preset(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "recall:\n  overrides:\n    w_bm25: 1\n    candidates: 50\n")
    settings = load_config(path, hermes_home="/h", recall={"overrides": {"neighbour": 0.2}}).recall.settings()
    assert settings == dataclasses.replace(RecallSettings(), w_bm25=1.0, candidates=50, neighbour=0.2)
    assert isinstance(settings.w_bm25, float)


def test_every_recall_preset_is_a_choice_of_the_config_key() -> None:
    for name in PRESETS:
        assert load_config(hermes_home="/h", recall={"preset": name}).recall.settings() == PRESETS[name]


@pytest.mark.parametrize("profile", ["", "../escape", "a/b", "-leading-dash", "x" * 65, 7, None])
def test_bad_profile_names_are_refused(profile: Any) -> None:
    with pytest.raises(ConfigError, match="'profile'"):
        load_config(hermes_home="/h", profile=profile)


def test_unknown_key_in_the_user_file_names_the_dotted_key(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "tier3:\n  backend: memory\n  colour: blue\n")
    with pytest.raises(ConfigError, match=r"'tier3\.colour'"):
        load_config(path, hermes_home="/h")


def test_bad_value_in_the_user_file_names_the_key(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "tier1:\n  user_char_limit: lots\n")
    with pytest.raises(ConfigError, match=r"'tier1\.user_char_limit'"):
        load_config(path, hermes_home="/h")


def test_malformed_yaml_is_a_config_error(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "tier1: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path, hermes_home="/h")


def test_a_non_mapping_user_file_is_a_config_error(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", "- just\n- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(path, hermes_home="/h")


def test_a_missing_user_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.yaml", hermes_home="/h")


def test_loading_touches_nothing_on_disk(tmp_path: Path) -> None:
    home = tmp_path / "hh"
    cfg: Config = load_config(hermes_home=home)
    assert not home.exists()
    assert cfg.db_path.is_relative_to(home)
