"""The extraction benchmark: its labelled set is well formed, its scorer scores, its script runs.

No assertion on the current extractor's score: that is what the benchmark reports.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import hermes_memory.extract as extract_package
from hermes_memory.bench import extraction as bench
from hermes_memory.errors import ValidationError
from hermes_memory.extract.types import ExtractionResult, TemporalMention

DATA = Path(__file__).resolve().parents[1] / "data" / "extraction_bench.json"
EDGE_TYPES = frozenset(
    """lives_in lived_in moved_to works_at worked_at studies_at studied_at is_from has_pet sibling_of child_of
    parent_of married_to partner_of friend_of relative_of colleague_of knows likes dislikes prefers plays
    started studies uses works_on visited member_of""".split()
)


@pytest.fixture(scope="module")
def conversations() -> list[bench.Conversation]:
    return bench.load_dataset(DATA)


def _raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def _by_id(conversations: list[bench.Conversation], cid: str) -> bench.Conversation:
    return next(c for c in conversations if c.id == cid)


def test_default_data_is_the_shipped_set() -> None:
    assert bench.DEFAULT_DATA == DATA
    assert DATA.is_file()


def test_the_set_has_200_turns_of_every_kind(conversations: list[bench.Conversation]) -> None:
    turns = [t for c in conversations for t in c.turns]
    assert len(turns) >= 200
    assert len(conversations) >= 20
    assert {c.kind for c in conversations} == {"hermes", "human"}
    assert len({t.speaker for t in turns}) >= 10
    # the false-positive catchers: assistant echoes, questions, acknowledgements with empty labels
    assistant = [t for t in turns if t.role == "assistant"]
    assert len(assistant) >= 60 and all(t.is_empty for t in assistant)
    questions = [t for t in turns if t.role != "assistant" and t.text.rstrip().endswith("?")]
    assert len(questions) >= 10 and all(t.is_empty for t in questions)
    assert sum(1 for t in turns if t.is_empty and t.role == "user" and len(t.text.split()) <= 3) >= 10
    # dates: relative ones, and some across a year boundary
    dated = [(t, d) for t in turns for d in t.dates]
    assert len(dated) >= 40
    assert any(d[1][:4] != str(t.time.year) for t, d in dated)


def test_labels_use_the_vocabulary_and_name_labelled_things(conversations: list[bench.Conversation]) -> None:
    for conv in conversations:
        names = bench.user_names(conv)
        known = {bench.canonical(p, names) for p in conv.participants}
        known |= {bench.canonical(n, names) for t in conv.turns for n, _ in t.entities}
        for turn in conv.turns:
            for subject, edge, obj in turn.relations:
                assert edge in EDGE_TYPES, (conv.id, turn.index, edge)
                assert bench.canonical(subject, names) in known, (conv.id, turn.index, subject)
                for alt in obj.split("|"):
                    assert bench.canonical(alt, names) in known, (conv.id, turn.index, alt)
            for subject, predicate, obj in turn.facts:
                assert predicate == predicate.lower() and " " not in predicate
                # a key phrase must say something: no bare pronoun matches any sentence
                assert not {"it", "one", "there", "them", "that"} & set(obj.lower().split("|")), obj
                assert bench.canonical(subject, names) in known, (conv.id, turn.index, subject)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("conversations", 0, "turns", 0, "role"), "bot", "role must be one of"),
        (("conversations", 0, "turns", 0, "time"), "yesterday", "not ISO 8601"),
        (("conversations", 0, "turns", 2, "dates", 0, "phrase"), "in June", "not in the text"),
        (("conversations", 0, "turns", 2, "dates", 0, "end"), "2026-04-01", "must end after it starts"),
        (("conversations", 0, "turns", 0, "entities"), [{"name": "X", "type": "thing"}], "unknown type"),
        (
            ("conversations", 0, "turns", 0, "facts"),
            [{"subject": "user", "predicate": "x"}],
            "expected an object",
        ),
        (("conversations", 0, "turns", 1, "speaker"), "Bob", "speaker should be"),
        (("conversations", 1, "id"), "h01-move", "duplicate id"),
    ],
)
def test_a_malformed_set_is_refused_with_the_place(
    tmp_path: Path, path: tuple[Any, ...], value: Any, message: str
) -> None:
    data = _raw()
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValidationError, match=message):
        bench.load_dataset(bad)


def test_names_are_compared_alias_aware() -> None:
    users = frozenset({"user", "me", "i", "dana"})
    assert bench.canonical("The User", users) == "user"
    assert bench.canonical("Dana", users) == "user"
    assert bench.canonical("the user's dog", users) == bench.canonical("Dana’s dog", users) == "user's dog"
    assert bench.canonical("Paws & Claws", users) == bench.canonical("paws and claws", users)
    assert bench.canonical("Dr. Okafor", users) == "dr okafor"
    assert bench.is_junk_entity("The user is allergic to peanuts and shellfish")
    assert bench.is_junk_entity("False") and bench.is_junk_entity("Entry added")
    assert bench.is_junk_entity("OK (memory-context injected=True)")
    assert not bench.is_junk_entity("Rocky Mountain National Park")


def test_labels_as_predictions_score_one(conversations: list[bench.Conversation]) -> None:
    report = bench.Report()
    for conv in conversations:
        bench.score_conversation(conv, bench.prediction_from_labels(conv), report)
    result = bench.summary(report, 0.0)
    for category in bench.CATEGORIES:
        row = result["per_category"][category]
        assert row["labelled"] > 0
        assert (row["precision"], row["recall"], row["f1"]) == (1.0, 1.0, 1.0), category
    assert result["turns"] == sum(len(c.turns) for c in conversations)
    assert not any(result["errors"].values())


def test_known_errors_lower_the_scores_and_are_counted(conversations: list[bench.Conversation]) -> None:
    conv = _by_id(conversations, "h01-move")
    pred = bench.prediction_from_labels(conv)
    # "I moved to Lisbon in May." said in November, stored as May of next year
    pred.dates[2] = {("2027-05-01", "2027-06-01")}
    # the assistant's echo (turn 3) becomes a fact about the assistant
    echo = bench.StoredFact("Hermes", "lives_in", "Lisbon", "Hermes lives in Lisbon")
    pred.facts[3] = [echo]
    pred.facts_all.append(echo)
    # a status string and a duplicate with another type become graph nodes
    pred.entities += [("Entry added", "other", ()), ("Lisbon", "other", ())]
    report = bench.Report()
    bench.score_conversation(conv, pred, report)
    result = bench.summary(report, 0.0)
    rows = result["per_category"]
    assert rows["dates"]["precision"] == 0.0 and rows["dates"]["recall"] == 0.0
    assert rows["facts"]["recall"] == 1.0 and rows["facts"]["precision"] == 0.75
    assert rows["entities"]["recall"] == 1.0 and rows["entities"]["precision"] == pytest.approx(2 / 4)
    errors = result["errors"]
    assert errors["future_dates_for_past_statements"] == 1
    assert errors["facts_about_assistant"] == 1 and errors["facts_from_assistant_turns"] == 1
    assert errors["junk_entities"] == 1
    assert errors["names_stored_as_several_entities"] == 1 and errors["entities_with_wrong_type"] == 1
    assert any("2027-05-01" in line for line in report.misses["dates"])


def test_facts_match_on_meaning_not_on_wording(conversations: list[bench.Conversation]) -> None:
    conv = _by_id(conversations, "h02-biscuit")
    pred = bench.prediction_from_labels(conv)
    pred.entities.append(("Biscuit", "pet", ("Dana's dog",)))
    pred.facts[2] = [
        bench.StoredFact("Dana", "owns", "Biscuit", "Dana has a beagle named Biscuit"),  # owns = has_pet
        bench.StoredFact("the user", "adopted", "a beagle named Biscuit", "Dana adopted a beagle"),
    ]
    # "my dog" stored under the alias the graph knows for Biscuit, untyped
    pred.facts[4] = [bench.StoredFact("Dana's dog", "states", None, "Dana's dog is scared of the vacuum")]
    report = bench.Report()
    bench.score_conversation(conv, pred, report)
    facts = bench.summary(report, 0.0)["per_category"]["facts"]
    assert (facts["precision"], facts["recall"]) == (1.0, 1.0)
    # a stored object that is not the labelled one does not match
    pred.facts[2] = [bench.StoredFact("Dana", "has_pet", "Biscuit in May", "Dana has Biscuit in May")]
    report = bench.Report()
    bench.score_conversation(conv, pred, report)
    assert bench.summary(report, 0.0)["per_category"]["facts"]["fn"] >= 1


def test_untyped_sentences_count_as_facts_but_not_as_typed_facts(
    conversations: list[bench.Conversation],
) -> None:
    conv = _by_id(conversations, "h06-trip")
    pred = bench.prediction_from_labels(conv)
    pred.facts[0] = [bench.StoredFact("Kenji", "states", None, "Kenji is flying to Tokyo on 4 December 2026")]
    report = bench.Report()
    bench.score_conversation(conv, pred, report)
    rows = bench.summary(report, 0.0)["per_category"]
    assert rows["facts"]["recall"] == 1.0
    assert rows["typed facts"]["recall"] < 1.0 and rows["typed facts"]["precision"] < 1.0


@pytest.mark.parametrize(
    ("start", "end", "verdict", "future"),
    [
        (datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC), "correct", 0),
        (datetime(2027, 5, 1, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC), "wrong", 1),
    ],
)
def test_the_resolver_check_judges_the_mention_on_the_phrase(
    conversations: list[bench.Conversation],
    monkeypatch: pytest.MonkeyPatch,
    start: datetime,
    end: datetime,
    verdict: str,
    future: int,
) -> None:
    conv = _by_id(conversations, "h01-move")
    text = conv.turns[2].text
    at = text.index("in May")
    mention = TemporalMention("in May", start, end, "month", True, (at, at + 6), "May")
    monkeypatch.setattr(
        extract_package, "extract", lambda message, known=None: ExtractionResult(temporal=(mention,))
    )
    report = bench.Report()
    bench.score_resolution(conv, report)
    assert report.resolution[verdict] == 1
    assert report.resolution["future_for_past"] == future
    assert sum(report.resolution[k] for k in ("correct", "wrong", "not_found")) == 1


def test_the_script_runs_end_to_end_on_a_subset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _raw()
    subset = copy.deepcopy(data)
    subset["conversations"] = [c for c in data["conversations"] if c["id"] in ("h01-move", "l01-maya-tom")]
    small = tmp_path / "small.json"
    small.write_text(json.dumps(subset), encoding="utf-8")
    out = tmp_path / "out.json"
    assert bench.main(["--data", str(small), "--json", str(out), "--misses", "2"]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["conversations"] == 2
    assert result["turns_without_episode"] == 0  # every turn was stored and attributed
    assert result["turns"] == sum(len(c["turns"]) for c in subset["conversations"])
    for category in bench.CATEGORIES:
        row = result["per_category"][category]
        assert 0.0 <= row["precision"] <= 1.0 and 0.0 <= row["recall"] <= 1.0
        assert row["labelled"] == row["tp"] + row["fn"]
    labelled = sum(len(t["facts"]) for c in subset["conversations"] for t in c["turns"])
    assert result["per_category"]["facts"]["labelled"] == labelled
    printed = capsys.readouterr()
    assert "| category | labelled | stored | precision | recall | F1 |" in printed.out
    assert "| facts |" in printed.out


def test_the_script_refuses_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert bench.main(["--data", str(bad)]) == 2
    assert "conversations" in capsys.readouterr().err
