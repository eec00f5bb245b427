"""The LLM write path on the labelled update corpus (tests/data/updates_corpus.json): for a sample of
pairs, a scripted model answers as a correct model would — an update replaces the earlier memory, an
addition or an unrelated statement leaves it alone — and the store must carry that decision: the earlier
fact closed (``superseded_by`` the new one, ``superseded_at`` and ``valid_to`` set) or still believed.

Both ways a statement reaches write-time reconstruction are run: ``add`` (pre-split, then merged with the
nearest stored facts) and a user's turn (the LLM's facts of the turn, merged after the turn's commit).
The hashing embedder carries no meaning, so the distance cut-off is opened: every stored fact is a
neighbour. Which neighbours a real embedder finds is retrieval's concern, not this file's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import ScriptedLLM

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.llm.extraction import system_prompt
from hermes_memory.llm.writing import PRESPLIT_PROMPT, WRITE_PROMPT
from hermes_memory.records import Fact

CORPUS = Path(__file__).resolve().parents[1] / "data" / "updates_corpus.json"
SETTINGS: dict[str, Any] = {
    "tier3.embedding_model": "hashing",
    "tier3.backend": "memory",
    "llm.merge_distance_cutoff": 2.0,  # every stored fact is a neighbour (see the module docstring)
    "llm.merge_top_k": 10,
}
EXTRACTION_PROMPT = system_prompt(instances=True)  # llm.instance_extraction is on by default
SPEAKER = "Maya"  # the user's name: the LLM's facts of a turn must name who they are about


def _flat(text: str) -> str:
    return " ".join(text.split())


def _pairs() -> list[dict[str, Any]]:
    return list(json.loads(CORPUS.read_text(encoding="utf-8"))["pairs"])


def _sample(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per label and kind, by id: the first pair about the user and the first about someone else."""
    chosen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pair in sorted(pairs, key=lambda p: p["id"]):
        taken = chosen.setdefault((pair["label"], pair["kind"]), [])
        about_user = pair["holder"] == "user"
        if len(taken) < 2 and all((t["holder"] == "user") != about_user for t in taken):
            taken.append(pair)
    return [pair for key in sorted(chosen) for pair in chosen[key]]


SAMPLE = [pytest.param(p, id=f"{p['label']}-{p['kind']}-{p['id']}") for p in _sample(_pairs())]


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _numbered(block: str) -> dict[int, str]:
    """``[n] text`` lines of a write prompt, by input number."""
    out = {}
    for line in block.splitlines():
        number, _, text = line.partition("] ")
        if number.startswith("["):
            out[int(number[1:])] = text
    return out


def _quote(text: str) -> str:
    return f"{SPEAKER} said: {_flat(text)}"


class CorrectModel:
    """Answers as a correct model would for one labelled pair. A raw message is one memory unit; a
    turn's fact quotes its message. The reconstruction of the later statement replaces the related
    memories when the pair is an update (each new entry cites them), and otherwise keeps the new
    contents on their own, leaving the related memories out. Here the related memories are the earlier
    statement's and, for the sampled updates, all state the old value (a side fact such as "has a
    husband named Kenji" would be left out by a correct model; no sampled update has one)."""

    def __init__(self, pair: dict[str, Any]) -> None:
        self.later = _flat(pair["later"])
        self.replaces = pair["label"] == "update"

    def __call__(self, system: str, user: str) -> dict[str, Any]:
        if system == PRESPLIT_PROMPT:
            return {"contents": [_between(user, "<raw_input>\n", "\n</raw_input>")]}
        if system == WRITE_PROMPT:
            related = _numbered(_between(user, "<related_memories>\n", "</related_memories>"))
            new = _numbered(_between(user, "<new_contents>\n", "\n</new_contents>"))
            replaced = sorted(related) if self.replaces and any(self.later in t for t in new.values()) else []
            memories = [{"text": text, "sources": [*replaced, n]} for n, text in new.items()]
            return {"memories": memories, "coverage": "complete"}
        if system == EXTRACTION_PROMPT:
            said = _between(user, f"[1] {SPEAKER} (user): ", "\n</turn>")
            fact = {"content": _quote(said), "subject": SPEAKER, "predicate": "said", "object": None,
                    "category": "user", "message": 1}  # fmt: skip
            return {"facts": [fact]}
        raise AssertionError(f"an LLM call this test does not expect: {system[:60]!r}")


@pytest.fixture
def store(tmp_path: Path, pair: dict[str, Any]) -> Iterator[tuple[MemoryAPI, ScriptedLLM]]:
    """A store whose LLM is the correct model for the test's pair."""
    model = ScriptedLLM(default=CorrectModel(pair))
    with MemoryAPI(hermes_home=tmp_path, llm_client=model, **SETTINGS) as api:
        yield api, model


def _writes(model: ScriptedLLM) -> list[str]:
    return [call.user for call in model.calls if call.system == WRITE_PROMPT]


def _assert_decided(api: MemoryAPI, label: str, old: Fact, new: Fact) -> None:
    """The store after the later statement: ``old`` closed by ``new`` for an update, else both believed."""
    believed = {f["uuid"] for f in api.fact_query(None, limit=50)["data"]}
    assert new.uuid in believed
    if label == "update":
        assert old.superseded_by == new.uuid
        assert old.superseded_at is not None and old.valid_to is not None
        assert old.uuid not in believed
    else:
        assert (old.superseded_by, old.superseded_at, old.valid_to) == (None, None, None)
        assert old.uuid in believed


def test_the_sample_covers_every_label_and_kind() -> None:
    pairs = _pairs()
    sample = _sample(pairs)
    assert {(p["label"], p["kind"]) for p in sample} == {(p["label"], p["kind"]) for p in pairs}
    assert {p["label"] for p in sample} == {"update", "addition", "unrelated"}
    assert any(p["holder"] != "user" for p in sample)


@pytest.mark.parametrize("pair", SAMPLE)
def test_add_carries_the_models_decision(pair: dict[str, Any], store: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, model = store
    (first,) = api.add(pair["earlier"], update_core=False)["data"]["stored"]
    later = api.add(pair["later"], update_core=False)["data"]
    (second,) = later["stored"]
    # the model was shown the earlier statement as the related memory and the later one as new
    shown = _writes(model)[-1]
    assert f"<related_memories>\n[1] {_flat(pair['earlier'])}\n</related_memories>" in shown
    assert f"<new_contents>\n[2] {_flat(pair['later'])}\n</new_contents>" in shown
    assert not later["fallback"]
    old, new = (api.tier2.facts.get(uuid, touch=False) for uuid in (first, second))
    assert old.content == _flat(pair["earlier"]) and new.content == _flat(pair["later"])
    _assert_decided(api, pair["label"], old, new)


@pytest.mark.parametrize("pair", SAMPLE)
def test_a_turn_carries_the_models_decision(
    pair: dict[str, Any], store: tuple[MemoryAPI, ScriptedLLM]
) -> None:
    api, model = store
    for turn, text in enumerate((pair["earlier"], pair["later"])):
        assert api.remember_message(text, "s1", speaker=SPEAKER)["success"]
        assert api.flush(60)["data"]["drained"]
        # the turn reached the model after its commit
        extracted = [call.user for call in model.calls if call.system == EXTRACTION_PROMPT]
        assert len(extracted) == turn + 1 and f"[1] {SPEAKER} (user): {_flat(text)}\n" in extracted[-1]
    facts = {f.content: f for f in api.tier2.facts.history(SPEAKER)}
    old, new = facts[_quote(pair["earlier"])], facts.get(_quote(pair["later"]))
    writes = _writes(model)
    # Reconstruction merges the facts the LLM adds to a turn: a quote the rules already stated is no new
    # fact (near-duplicate), and then nothing is merged and the rules' knowledge stands.
    assert len(writes) == (new is not None)
    if new is None:  # only when the rules stated the later statement already (all but its pronoun)
        said = {w.strip(".,!'") for w in _flat(pair["later"]).lower().split()[1:]}
        assert any(said <= {w.strip(".,!'") for w in f.content.lower().split()} for f in facts.values())
        assert old.is_active
        return
    related = _numbered(_between(writes[0], "<related_memories>\n", "</related_memories>"))
    shown_new = _numbered(_between(writes[0], "<new_contents>\n", "\n</new_contents>"))
    assert old.content in related.values() and shown_new == {len(related) + 1: new.content}
    _assert_decided(api, pair["label"], old, new)
