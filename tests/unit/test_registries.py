"""One registry per seam is the only list of names: vector backends (``tier3.backend.BACKENDS``) and
embedders (``tier3.embedder.EMBEDDERS``). Config, the CLI, the setup wizard and status derive from them,
and no other module of the package spells a backend or embedder name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_memory.cli import main
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import settings as hermes_settings
from hermes_memory.hermes import setup
from hermes_memory.hermes.interpreter import needed_modules
from hermes_memory.tier3.backend import BACKENDS, resolve_backend
from hermes_memory.tier3.embedder import EMBEDDERS, load_attr

PACKAGE = Path(__file__).resolve().parents[2] / "hermes_memory"
# Where a name may be written: the registries, and (checked below) each implementation's own ``name``.
# bench/ picks the embedder and backend a benchmark runs with, as tests do.
_REGISTRIES = {"tier3/backend.py", "tier3/embedder.py"}
_ALLOWED = {
    # pip extras of pyproject.toml (which of them pull torch), not the embedders of the same names
    "hermes/interpreter.py": ('"local-fp32" in extras or "sentence-transformers" in extras',),
    # the embedded engine's error names its client twin
    "tier3/qdrant_backend.py": ("use backend 'qdrant-client'",),
}
# "memory" and "local" are ordinary words in this package (the curated store, "local mode"): left out.
_DISTINCT = sorted(
    {name for name in [*BACKENDS, *EMBEDDERS] if name not in ("memory", "local")}, key=len, reverse=True
)
_ALTERNATIVES = "|".join(re.escape(n) for n in _DISTINCT)
_LITERAL = re.compile(rf"""(["'])({_ALTERNATIVES})\1""")
_OWN_NAME = re.compile(r"""^\s+name = "[^"]+"$""")


def test_no_module_outside_the_registries_spells_a_backend_or_embedder_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in _REGISTRIES or rel.startswith("bench/"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not _LITERAL.search(line) or _OWN_NAME.match(line):
                continue
            if any(allowed in line for allowed in _ALLOWED.get(rel, ())):
                continue
            found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "names spelled outside the registries:\n" + "\n".join(found)


def test_the_grep_above_can_fail() -> None:
    assert _LITERAL.search('choices=["qdrant", "chroma"]')
    assert _LITERAL.search("backend == 'qdrant-client'")
    assert not _LITERAL.search('"hermes-memory-tiers[qdrant]"')


@pytest.mark.parametrize("name", list(BACKENDS))
def test_each_backend_class_carries_its_registered_name(name: str) -> None:
    assert load_attr(BACKENDS[name].target).name == name


@pytest.mark.parametrize("name", list(EMBEDDERS))
def test_each_embedder_class_carries_a_registered_name_for_the_same_class(name: str) -> None:
    own = load_attr(EMBEDDERS[name].target).name  # an alias (minilm) builds its target's class
    assert own in EMBEDDERS and EMBEDDERS[own].target == EMBEDDERS[name].target


def test_config_accepts_exactly_the_registered_names(tmp_path: Path) -> None:
    for name in BACKENDS:
        assert load_config(hermes_home=tmp_path, tier3={"backend": name}).tier3.backend == name
    for name in EMBEDDERS:
        tier3 = load_config(hermes_home=tmp_path, tier3={"embedding_model": name}).tier3
        assert tier3.embedding_model == name
    with pytest.raises(ConfigError, match=", ".join(BACKENDS)):
        load_config(hermes_home=tmp_path, tier3={"backend": "pinecone"})
    with pytest.raises(ConfigError, match=", ".join(EMBEDDERS)):
        load_config(hermes_home=tmp_path, tier3={"embedding_model": "word2vec"})


def test_the_cli_offers_every_registered_backend(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["reindex", "--help"])
    text = capsys.readouterr().out
    assert "{" + ",".join(BACKENDS) + "}" in re.sub(r"\s+", "", text)


def test_the_setup_wizard_offers_the_registry_entries_with_a_summary() -> None:
    offered_backends, offered_embedders = setup.BACKENDS, setup.EMBEDDERS
    assert offered_backends == {n: i.summary for n, i in BACKENDS.items() if i.summary is not None}
    assert offered_embedders == {n: i.summary for n, i in EMBEDDERS.items() if i.summary is not None}
    schema = {f["key"]: f for f in hermes_settings.setup_schema(hermes_settings.ProviderSettings())}
    assert schema["vector_backend"]["choices"] == list(setup.BACKENDS)
    assert schema["embedding_model"]["choices"] == list(setup.EMBEDDERS)
    assert {schema[k]["when"]["embedding_model"] for k in ("embedding_base_url", "api_key_env")} == {
        n for n, i in EMBEDDERS.items() if i.asks == "endpoint"
    }


def test_a_server_url_opens_the_client_backend_everywhere(tmp_path: Path) -> None:
    for name, info in BACKENDS.items():
        cfg = load_config(hermes_home=tmp_path, tier3={"backend": name, "url": "http://127.0.0.1:9"})
        opened = resolve_backend(name, cfg.tier3.url)
        backend_modules = {m for i in BACKENDS.values() for m in i.modules}
        needed = [m for m in needed_modules(cfg) if m in backend_modules]
        assert needed == list(BACKENDS[opened].modules)
        if info.owner is not None:  # an embedded engine with a url is its server client
            assert opened != name and BACKENDS[opened].server
