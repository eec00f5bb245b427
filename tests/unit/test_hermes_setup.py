"""`hermes memory setup` for nextlevel: every choice is checked before it is written, a choice that
needs something asks for it, one that cannot work is refused with the reason, and without a terminal
(`hermes memory setup nextlevel` piped or in a script) working defaults are written and said."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hermes_settings import listening_url

from hermes_memory.errors import ConfigError
from hermes_memory.hermes import install, setup
from hermes_memory.hermes.settings import load_settings


class Script:
    """Answers for the wizard's questions, in order; records what it was asked and told."""

    def __init__(self, *answers: str) -> None:
        self.answers: Iterator[str] = iter(answers)
        self.asked: list[str] = []
        self.said: list[str] = []

    def ask(self, label: str, default: str) -> str:
        self.asked.append(label)
        return next(self.answers, "") or default

    def say(self, text: str) -> None:
        self.said.append(text)

    @property
    def text(self) -> str:
        return "\n".join(self.said)


def model_folder(path: Path, dim: int) -> Path:
    (path / "1_Pooling").mkdir(parents=True)
    (path / "modules.json").write_text("[]")
    (path / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": dim}))
    return path


def tier3(home: Path) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((home / "nextlevel.yaml").read_text())["memory"]["tier3"]
    return data


def test_without_a_terminal_the_working_defaults_are_written(tmp_path: Path) -> None:
    script = Script()
    written = setup.run_setup(tmp_path, script.ask, script.say, interactive=False)
    assert written == tmp_path / "nextlevel.yaml"
    assert tier3(tmp_path) == {"embedding_model": "local", "backend": "qdrant"}
    assert load_settings(tmp_path).prefetch_budget_tokens == 300


def test_sentence_transformers_asks_for_a_model_that_exists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = model_folder(tmp_path / "mpnet", 768)
    script = Script("sentence-transformers", str(tmp_path / "nowhere"),  # refused: no such model
                    "2", str(folder), "qdrant", "")  # fmt: skip
    assert setup.run_setup(home, script.ask, script.say, interactive=True) is not None
    assert "neither a folder nor in the local model cache" in script.text and "Choose again." in script.text
    # the vector size is read from the model, so vectors and config agree
    assert tier3(home) == {
        "embedding_model": "sentence-transformers",
        "embedding_model_name": str(folder),
        "embedding_dim": 768,
        "backend": "qdrant",
    }


def test_sentence_transformers_without_a_model_is_refused(tmp_path: Path) -> None:
    script = Script("sentence-transformers", "", "sentence-transformers", "", "sentence-transformers", "")
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=True) is None
    assert "needs a model folder" in script.text and "Nothing was saved." in script.text
    assert not (tmp_path / "nextlevel.yaml").exists()


def test_without_a_terminal_a_choice_that_cannot_work_falls_back_to_the_default(tmp_path: Path) -> None:
    (tmp_path / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    embedding_model: sentence-transformers\n"
    )
    script = Script()
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=False) is not None
    assert "that cannot work" in script.text and "Using the default instead" in script.text
    assert tier3(tmp_path)["embedding_model"] == "local"


def test_openai_needs_an_endpoint_and_a_key_that_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HM_SETUP_KEY", raising=False)
    with listening_url() as url:
        _openai_setup(tmp_path, url)


def test_an_openai_endpoint_nothing_listens_on_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("HM_SETUP_KEY=sk-test\n")
    with listening_url() as url:
        pass  # closed again: nothing listens there now
    script = Script("openai", url, "", "HM_SETUP_KEY")
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=False) is not None
    assert f"nothing answers at {url}" in script.text, script.text
    assert tier3(tmp_path)["embedding_model"] == "local"  # refused, then the default was used


def _openai_setup(tmp_path: Path, url: str) -> None:
    script = Script("openai", url, "", "HM_SETUP_KEY")
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=False) is not None
    assert "HM_SETUP_KEY is not set" in script.text  # refused, then the default was used
    (tmp_path / ".env").write_text("HM_SETUP_KEY=sk-test\n")  # Hermes loads HERMES_HOME/.env
    script = Script(
        "openai", url, "text-embedding-3-large", "HM_SETUP_KEY", "chroma", "250"
    )
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=True) is not None
    assert tier3(tmp_path) == {
        "embedding_model": "openai",
        "embedding_base_url": url,
        "embedding_model_name": "text-embedding-3-large",
        "api_key_env": "HM_SETUP_KEY",
        "embedding_dim": 3072,
        "backend": "chroma",
    }
    assert load_settings(tmp_path).prefetch_budget_tokens == 250


def test_an_unknown_choice_is_refused(tmp_path: Path) -> None:
    script = Script("word2vec", "4")  # refused, then asked again: 4 = hashing
    assert setup.run_setup(tmp_path, script.ask, script.say, interactive=True) is not None
    assert "'word2vec' is not one of local, sentence-transformers, openai, hashing" in script.text
    assert tier3(tmp_path) == {"embedding_model": "hashing", "backend": "qdrant"}


def test_save_config_refuses_what_cannot_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot work: the sentence-transformers embedder has no model"):
        setup.save_answers({"embedding_model": "sentence-transformers"}, tmp_path)
    assert not (tmp_path / "nextlevel.yaml").exists()
    setup.save_answers({"embedding_model": "hashing", "vector_backend": "qdrant"}, tmp_path)
    assert tier3(tmp_path) == {"embedding_model": "hashing", "backend": "qdrant"}


def test_post_setup_writes_activates_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    original = b"model:\n  default: fake\n"
    (tmp_path / "config.yaml").write_bytes(original)
    install.install(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no terminal
    config: dict[str, object] = {"memory": {}}
    setup.post_setup(str(tmp_path), config)
    out = capsys.readouterr().out
    assert "No terminal: writing the nextlevel defaults" in out
    assert f"settings: {tmp_path / 'nextlevel.yaml'}" in out
    assert "local (all-MiniLM-L6-v2 (int8), offline)" in out
    assert "Memory provider: nextlevel" in out and config["memory"] == {"provider": "nextlevel"}
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["memory"] == {"provider": "nextlevel"}
    install.uninstall(tmp_path)  # the activation setup made is undone too, byte for byte
    assert (tmp_path / "config.yaml").read_bytes() == original


def test_hermes_memory_setup_nextlevel_with_the_real_hermes(tmp_path: Path) -> None:
    pytest.importorskip("hermes_cli.memory_setup")
    hermes = Path(sys.executable).with_name("hermes")
    if not hermes.exists():
        pytest.skip("no `hermes` command next to this Python")
    home = tmp_path / "home"
    install.install(home)
    env = {
        **os.environ,
        "HERMES_HOME": str(home),
        "PYTHONPATH": str(Path(install.__file__).resolve().parents[2]),
    }
    done = subprocess.run(
        [str(hermes), "memory", "setup", "nextlevel"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Memory provider: nextlevel" in done.stdout and "settings:" in done.stdout
    assert tier3(home) == {"embedding_model": "local", "backend": "qdrant"}
    assert yaml.safe_load((home / "config.yaml").read_text())["memory"]["provider"] == "nextlevel"
