"""Updates in the user's own words, with the real MiniLM embedder: what a new statement closes in the
store, and what it must leave alone. Sentences are written for this test, not taken from the corpus."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.bench import updates as bench

DAY = 86400.0
START = time.time() - 40 * DAY


def _facts(api: MemoryAPI) -> list[dict[str, Any]]:
    env = api.fact_history("the user")
    assert env["success"], env
    return list(env["data"]["facts"] if isinstance(env["data"], dict) else env["data"])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home: Path = tmp_path_factory.mktemp("updates")
    said = [
        "My bike is an old Peugeot racer.",
        "I go bouldering at the Castle climbing centre.",
        "I'm learning Italian on Tuesday evenings.",
        "My GP is Dr. Lindqvist.",
        "I read on a Kindle Paperwhite.",
        # later
        "I sold the Peugeot, these days I ride a Brompton folding bike.",
        "I'm learning Greek as well.",  # an addition
        "My sister started climbing at the Castle too.",  # someone else
        "I might swap the Kindle for a Kobo.",  # a hypothetical
        "Dr. Osei is my GP now.",
        "Do you think I should quit bouldering?",  # a question
    ]
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        for i, text in enumerate(said):
            api.remember_turn(text, "Okay.", "s1", START + i * DAY)
        assert api.flush()["success"]
        yield {"api": api, "facts": _facts(api), "home": home}


def _about(facts: list[dict[str, Any]], word: str) -> list[dict[str, Any]]:
    return [f for f in facts if word.lower() in f["content"].lower()]


def _open(fact: dict[str, Any]) -> bool:
    return not (fact.get("superseded_at") or fact.get("valid_to") or fact.get("is_archived"))


def test_an_update_in_new_words_closes_the_old_fact_at_the_statements_time(store: dict[str, Any]) -> None:
    old = _about(store["facts"], "Peugeot racer")
    assert old and not any(_open(f) for f in old), old
    closed = old[0]
    assert closed["superseded_by"], closed
    assert abs(float(closed["valid_to"]) - (START + 5 * DAY)) < 1.0  # the new statement's time, not now
    by = [f for f in store["facts"] if f["uuid"] == closed["superseded_by"]]
    assert by and "brompton" in by[0]["content"].lower() and _open(by[0]), by


def test_a_new_gp_replaces_the_old_one(store: dict[str, Any]) -> None:
    old = _about(store["facts"], "Lindqvist")
    assert old and not any(_open(f) for f in old), old


def test_additions_others_hypotheticals_and_questions_close_nothing(store: dict[str, Any]) -> None:
    for word in ("Italian", "Castle", "Kindle"):
        facts = _about(store["facts"], word)
        assert facts and any(_open(f) for f in facts if "sister" not in f["content"].lower()), (word, facts)


def test_recall_marks_the_replaced_turn_and_puts_the_current_first(store: dict[str, Any]) -> None:
    env = store["api"].recall("What bike do I ride?")
    assert env["success"], env
    hits = env["data"]["hits"]
    texts = [h["text"].lower() for h in hits]
    new = [i for i, t in enumerate(texts) if "brompton" in t]
    old = [i for i, t in enumerate(texts) if "peugeot racer" in t]
    assert new, texts
    assert not old or new[0] < old[0], texts
    for i in old:
        assert hits[i]["metadata"].get("superseded_at"), hits[i]


def test_the_raw_turn_stays_as_it_was(store: dict[str, Any]) -> None:
    env = store["api"].recall("Peugeot racer", tiers=["tier2"])
    assert any(h["text"] == "My bike is an old Peugeot racer." for h in env["data"]["hits"]), env


def test_the_assistant_never_updates_the_user(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I drive a Skoda Octavia.", "Nice car.", "s1", START)
        api.remember_turn("What do I drive?", "These days you drive a Tesla, I believe.", "s1", START + DAY)
        assert api.flush()["success"]
        skoda = _about(_facts(api), "Skoda")
        assert skoda and all(_open(f) for f in skoda), skoda


def test_the_corpus_figures_hold() -> None:
    """The update detector on the labelled corpus, in-sample and leave-one-family-out, at least as
    good as docs/benchmarks.md (``python -m hermes_memory.bench.updates`` prints it). The figures the
    project aims at (precision 0.97 / recall 0.90 in-sample, 0.95 / 0.80 held out) are not reached yet;
    this guards what is. Over the default int8 encoder (measured: in-sample 0.9963 / 0.5842, held out
    0.9703 / 0.5711, 22 distractors closed; fp32: 0.9963 / 0.5886, 0.9701 / 0.5689, 22)."""
    from hermes_memory.tier3.int8_embedder import Int8MiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    result = bench.run(bench.DEFAULT_DATA, UpdateDetector(Int8MiniLMEmbedder().embed_document))
    assert result["pairs"] >= 400 and result["families"] >= 40
    inside, held = result["in_sample"], result["leave_one_family_out"]
    crowded = result["crowded_leave_one_family_out"]
    assert inside["precision"] >= 0.99 and inside["recall"] >= 0.57, inside
    assert held["precision"] >= 0.96 and held["recall"] >= 0.55, held
    assert crowded["distractors_closed"] <= 25, crowded


def test_the_old_fact_points_at_the_clause_that_names_the_new_value(tmp_path: Path) -> None:
    """ "I closed my Barclays account; Monzo is my bank." ends the old value in its first clause and names
    the new one in its second: the replaced fact points at the second, even when extraction's fact of
    the first clause spans the whole message and the new value opens its clause."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I bank with Barclays.", "Okay.", "s1", START)
        api.remember_turn("I closed my Barclays account; Monzo is my bank.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
        closed = [f for f in _facts(api) if "Barclays" in f["content"] and not _open(f)]
        assert closed, _facts(api)
        by = api.tier2.facts.get_many([closed[0]["superseded_by"]])
        assert "Monzo" in next(iter(by.values())).content, by
