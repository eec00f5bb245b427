"""Activating the provider edits one key of Hermes' config.yaml and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hermes_memory.errors import ConfigError
from hermes_memory.hermes.config_yaml import read_provider, set_provider

CONFIG = """\
# Hermes configuration (hand-written; comments must survive)
model:
  default: fake-model        # the model we use
  base_url: http://127.0.0.1:9/v1
toolsets:
  - memory
  - web

memory:
  # built-in memory on
  memory_enabled: true
  user_char_limit: 1375
display:
  skin: dark
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_bytes(text.encode())
    return path


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    old, new = before.splitlines(), after.splitlines()
    return [(a, b) for a, b in zip(old, new, strict=False) if a != b]


def test_inserts_provider_into_an_existing_memory_section(tmp_path: Path) -> None:
    path = write(tmp_path, CONFIG)
    assert set_provider(path, "nextlevel") is True
    after = path.read_text()
    lines = after.splitlines()
    assert lines[lines.index("memory:") + 1] == "  provider: nextlevel"
    assert after.replace("  provider: nextlevel\n", "", 1) == CONFIG  # everything else byte-for-byte
    assert read_provider(path) == "nextlevel"


def test_replaces_another_provider_keeping_its_comment(tmp_path: Path) -> None:
    text = CONFIG.replace(
        "  memory_enabled: true\n", '  memory_enabled: true\n  provider: "holographic"  # old\n'
    )
    path = write(tmp_path, text)
    set_provider(path, "nextlevel")
    after = path.read_text()
    assert changed_lines(text, after) == [
        ('  provider: "holographic"  # old', "  provider: nextlevel  # old")
    ]


def test_adds_a_memory_section_when_there_is_none(tmp_path: Path) -> None:
    text = "model:\n  default: x\n# trailing comment"
    path = write(tmp_path, text)
    set_provider(path, "nextlevel")
    assert path.read_text() == text + "\nmemory:\n  provider: nextlevel\n"


def test_creates_the_file_when_missing_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    assert set_provider(path, "nextlevel") is True
    assert yaml.safe_load(path.read_text()) == {"memory": {"provider": "nextlevel"}}
    assert set_provider(path, "nextlevel") is False
    assert set_provider(tmp_path / "other.yaml", "") is False
    assert not (tmp_path / "other.yaml").exists()


def test_keeps_four_space_indent_and_crlf_line_endings(tmp_path: Path) -> None:
    text = "memory:\r\n    memory_enabled: true\r\nother: 1\r\n"
    path = write(tmp_path, text)
    set_provider(path, "nextlevel")
    assert (
        path.read_bytes() == b"memory:\r\n    provider: nextlevel\r\n    memory_enabled: true\r\nother: 1\r\n"
    )


def test_flow_style_memory_goes_through_the_round_trip_editor(tmp_path: Path) -> None:
    pytest.importorskip("ruamel.yaml")
    text = (
        "# keep me\nmemory: {memory_enabled: true, provider: holographic}\nmodel:\n  default: x  # and me\n"
    )
    path = write(tmp_path, text)
    set_provider(path, "nextlevel")
    after = path.read_text()
    assert yaml.safe_load(after) == {
        "memory": {"memory_enabled": True, "provider": "nextlevel"},
        "model": {"default": "x"},
    }
    assert "# keep me" in after and "# and me" in after


def test_turning_the_provider_off_writes_an_empty_string(tmp_path: Path) -> None:
    path = write(tmp_path, CONFIG)
    set_provider(path, "nextlevel")
    set_provider(path, "")
    assert yaml.safe_load(path.read_text())["memory"]["provider"] == ""
    assert read_provider(path) == ""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("model: [unclosed\n", "not valid YAML"),
        ("- a\n- b\n", "mapping at the top level"),
        ("memory: 3\n", "'memory' is not a mapping"),
    ],
)
def test_refuses_files_it_cannot_edit_safely_and_leaves_them_alone(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=reason):
        set_provider(path, "nextlevel")
    assert path.read_text() == text


def test_keeps_the_file_mode(tmp_path: Path) -> None:
    path = write(tmp_path, CONFIG)
    path.chmod(0o600)
    set_provider(path, "nextlevel")
    assert path.stat().st_mode & 0o777 == 0o600
