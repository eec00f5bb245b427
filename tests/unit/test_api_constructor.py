"""The seed's constructor (HMNL §8.1): ``MemoryAPI(profile, tier2_enabled, tier3_enabled, graph_enabled,
tier3_backend, embedding_model)`` maps each keyword onto its config key, next to today's overrides; a
wrong type or an unregistered name is refused naming the keyword and the registered names."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.tier3.backend import BACKENDS
from hermes_memory.tier3.embedder import EMBEDDERS

# The fast in-process pair the unit tests run with, taken from the registries by position-free lookup.
_FAST_BACKEND = next(name for name in BACKENDS if BACKENDS[name].target.endswith("MemoryBackend"))
_FAST_EMBEDDER = next(name for name in EMBEDDERS if "Hashing" in EMBEDDERS[name].target)


def _open(tmp_path: Path, *args: object, **kwargs: object) -> MemoryAPI:
    return MemoryAPI(*args, hermes_home=tmp_path, **kwargs)  # type: ignore[arg-type]


def test_the_seed_keywords_set_their_config_keys(tmp_path: Path) -> None:
    api = _open(
        tmp_path, profile="work", tier2_enabled=True, tier3_enabled=True, graph_enabled=False,
        tier3_backend=_FAST_BACKEND, embedding_model=_FAST_EMBEDDER,
    )  # fmt: skip
    try:
        cfg = api.config
        assert cfg.profile == "work"
        assert (cfg.tier2.enabled, cfg.tier3.enabled, cfg.graph.enabled) == (True, True, False)
        assert (cfg.tier3.backend, cfg.tier3.embedding_model) == (_FAST_BACKEND, _FAST_EMBEDDER)
        assert "graph" not in api.enabled_tiers() and "tier3" in api.enabled_tiers()
        # the store works with what the keywords chose
        stored = api.fact_store("The seed constructor opens a working store.")
        assert stored["success"], stored
    finally:
        api.close()


def test_switching_tiers_off_by_keyword(tmp_path: Path) -> None:
    api = _open(tmp_path, tier3_enabled=False, graph_enabled=False)
    try:
        assert api.enabled_tiers() == ["tier1", "tier2"]
    finally:
        api.close()


def test_the_profile_may_be_the_first_argument_as_in_the_seed(tmp_path: Path) -> None:
    api = _open(tmp_path, "work", tier3_enabled=False, graph_enabled=False)
    try:
        assert api.config.profile == "work"
    finally:
        api.close()
    with pytest.raises(ValidationError, match="profile is given twice"):
        _open(tmp_path, "work", profile="home")


def test_keywords_sit_next_to_todays_overrides(tmp_path: Path) -> None:
    api = _open(tmp_path, tier3_enabled=False, graph_enabled=False, tier2={"max_facts": 7},
                **{"tier3.chunk_size": 100})  # fmt: skip
    try:
        assert api.config.tier2.max_facts == 7
        assert api.config.tier3.chunk_size == 100 and not api.config.tier3.enabled
    finally:
        api.close()
    with pytest.raises(ValidationError, match=r"'tier3\.enabled' is given twice"):
        _open(tmp_path, tier3_enabled=False, tier3={"enabled": True})
    with pytest.raises(ValidationError, match=r"'graph\.enabled' is given twice"):
        _open(tmp_path, graph_enabled=False, **{"graph.enabled": True})


@pytest.mark.parametrize("keyword", ["tier2_enabled", "tier3_enabled", "graph_enabled"])
@pytest.mark.parametrize("value", ["yes", 1, 0.0, []])
def test_a_switch_must_be_a_bool(tmp_path: Path, keyword: str, value: object) -> None:
    with pytest.raises(ValidationError, match=f"{keyword} must be True or False"):
        _open(tmp_path, **{keyword: value})


def test_an_unregistered_backend_or_embedder_is_refused_naming_the_registry(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="tier3_backend must be one of " + ", ".join(BACKENDS)):
        _open(tmp_path, tier3_backend="pinecone")
    with pytest.raises(ValidationError, match="embedding_model must be one of " + ", ".join(EMBEDDERS)):
        _open(tmp_path, embedding_model="word2vec")
    with pytest.raises(ValidationError, match="tier3_backend must be one of"):
        _open(tmp_path, tier3_backend=3)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_registered_backend_name_is_accepted(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the mapping is checked here (opening each backend needs its package): the config it builds.
    seen: dict[str, object] = {}

    def fake_memory(config: object, **kwargs: object) -> None:
        seen["config"] = config
        raise RuntimeError("stop before opening")

    monkeypatch.setattr("hermes_memory.api.memory_api.Memory", fake_memory)
    with pytest.raises(RuntimeError, match="stop before opening"):
        _open(tmp_path, tier3_backend=name, embedding_model=_FAST_EMBEDDER)
    assert seen["config"].tier3.backend == name  # type: ignore[attr-defined]


def test_keywords_and_a_config_object_together_are_refused(tmp_path: Path) -> None:
    cfg = load_config(hermes_home=tmp_path)
    with pytest.raises(ConfigError, match="graph_enabled"):
        MemoryAPI(cfg, graph_enabled=False)
