"""The Engram seed's capabilities through MemoryAPI: ``observe_many``, working memory, ``compress`` and
``reflect`` (LLM), ``list_agents`` with cross-agent read scopes, ``assert_fact`` with valid time,
salience on write, and bitemporal ``as_of`` (valid time and record time) in recall, fact queries,
history and the CLI."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import ScriptedLLM

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.errors import ConfigError, StorageError
from hermes_memory.llm import wiring
from hermes_memory.tier2.turn_inbox import TurnInbox

Open = Callable[..., MemoryAPI]


def ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope
    return envelope["data"]


# -- observe_many -----------------------------------------------------------------------------------------
def test_observe_many_queues_messages_and_turns_in_one_call(open_api: Open) -> None:
    api = open_api()
    data = ok(api.observe_many([
        {"text": "I adopted a beagle named Biscuit.", "speaker": "Dana", "time": "2024-03-01T10:00"},
        {"user": "We moved to Porto in May.", "assistant": "Porto is lovely.", "turn_id": "t-2"},
        {"text": "Kickoff is on Monday.", "session_id": "other", "role": "assistant"},
    ], session_id="s1"))  # fmt: skip
    assert data["queued"] == 3 and [t["queued"] for t in data["turns"]] == [True, True, True]
    assert data["turns"][1]["turn_id"] == "t-2"
    # The same turn id again while it waits: nothing new is queued.
    again = ok(api.observe_many([{"user": "We moved to Porto in May.", "turn_id": "t-2"}], "s1"))
    assert again["queued"] == 0
    assert ok(api.flush(60))["drained"]
    episodes = ok(api.get_latest(10))
    texts = {(e["session_id"], e["text"]) for e in episodes}
    assert ("s1", "I adopted a beagle named Biscuit.") in texts
    assert ("s1", "Porto is lovely.") in texts and ("other", "Kickoff is on Monday.") in texts
    assert next(e for e in episodes if e["speaker"] == "Dana")["timestamp"] == ts("2024-03-01T10:00")
    assert len(episodes) == 4


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ([{"text": "fine"}, {"text": "fine too"}, {"text": 5}], "items[2]: text must be a string"),
        ([{"text": "fine"}, {"speech": "x"}], "items[1]: unknown key(s) speech"),
        ([{"text": "a", "turn_id": "x"}, {"text": "b", "turn_id": "x"}], "items[1]: turn_id 'x' is given"),
        ([{"text": "fine"}, {"text": "<memory-context>recalled</memory-context>"}], "items[1]: nothing to"),
        ([{"text": "no session anywhere"}], "needs a session_id"),
        ([], "at least one"),
    ],
)
def test_observe_many_refuses_the_whole_batch(open_api: Open, items: list[Any], problem: str) -> None:
    api = open_api()
    env = api.observe_many(items, session_id=None if problem == "needs a session_id" else "s1")
    assert not env["success"] and problem in env["error"], env
    assert ok(api.pending())["turns"] == 0  # nothing of the batch was queued
    assert ok(api.working_memory("s1"))["items"] == []


def test_the_batch_write_is_one_transaction(tmp_path: Path) -> None:
    inbox = TurnInbox(tmp_path / "inbox.db")
    bad = ("k2", object(), 1.0)  # a value SQLite cannot bind: the second insert fails
    with pytest.raises(StorageError):
        inbox.add_many([("k1", "{}", 1.0), bad])  # type: ignore[list-item]
    assert inbox.count() == 0
    assert inbox.add_many([("k1", "{}", 1.0), ("k2", "{}", 1.0), ("k1", "{}", 2.0)]) == [True, True, False]
    assert inbox.count() == 2
    inbox.close()


# -- working memory ---------------------------------------------------------------------------------------
def test_working_memory_keeps_the_last_n_of_each_session(open_api: Open) -> None:
    api = open_api(**{"limits.working_memory_items": 3})
    for i in range(4):
        ok(api.remember_message(f"note {i}", "s1"))
    ok(api.remember_turn("hello from s2", "hi", "s2"))
    ok(api.observe_many([{"text": "note 4"}], "s1"))
    s1 = ok(api.working_memory("s1"))
    assert s1["capacity"] == 3
    assert [o["text"] for o in s1["items"]] == ["note 2", "note 3", "note 4"]  # oldest rolled out
    assert [(o["role"], o["text"]) for o in ok(api.working_memory("s2"))["items"]] == [
        ("user", "hello from s2"), ("assistant", "hi")]  # fmt: skip
    assert ok(api.end_session("s1")) == {"session_id": "s1", "cleared": 3}
    assert ok(api.working_memory("s1"))["items"] == []
    assert len(ok(api.working_memory("s2"))["items"]) == 2  # other sessions untouched
    assert ok(api.flush(60))["drained"]
    assert len(ok(api.get_latest(20))) == 7  # ending the session forgets nothing


def test_the_provider_session_fills_and_ends_working_memory(make: Any) -> None:
    provider = make("sess-a")
    provider.sync_turn("I started learning the cello.", "Nice!", session_id="sess-a")
    core = provider._store().api.core
    assert [o.text for o in core.working.items("sess-a")] == ["I started learning the cello.", "Nice!"]
    provider.on_session_switch("sess-b")
    assert core.working.items("sess-a") == []  # the session left behind rolls out
    provider.sync_turn("Lunch at noon.", "Noted.", session_id="sess-b")
    provider.on_session_end([])
    assert core.working.items("sess-b") == []


# -- compress and reflect (LLM) -----------------------------------------------------------------------------
def _scripted(system: str, user: str) -> dict[str, Any]:
    if "compress" in system:
        return {"summary": "Dana adopted a beagle named Biscuit and moved to Porto in May."}
    if "reflect" in system:
        insight = {"text": "Dana is settling into a new life in Porto with a dog.", "sources": [1, 2]}
        return {"insights": [insight]}
    return {"facts": []}  # the LLM extraction after each turn


@pytest.fixture
def llm_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MemoryAPI, ScriptedLLM]]:
    client = ScriptedLLM(default=_scripted)
    monkeypatch.setattr(wiring, "llm_client", lambda config, hermes_home=None: client)
    api = MemoryAPI(hermes_home=tmp_path, **{
        "llm.enabled": True, "llm.base_url": "http://127.0.0.1:9/v1", "llm.model": "fake",
        "tier3.embedding_model": "hashing", "tier3.backend": "memory",
    })  # fmt: skip
    yield api, client
    api.close()


def _old_session(api: MemoryAPI) -> list[str]:
    ok(api.observe_many([
        {"text": "I adopted a beagle named Biscuit.", "speaker": "Dana", "time": "2023-01-05T10:00"},
        {"text": "We moved to Porto in May.", "speaker": "Dana", "time": "2023-01-05T10:01"},
        {"text": "Biscuit loves the beach.", "speaker": "Dana", "time": "2023-01-05T10:02"},
    ], "old"))  # fmt: skip
    assert ok(api.flush(60))["drained"]
    return [e["uuid"] for e in ok(api.get_latest(10))]


def test_compress_and_reflect_need_the_llm(open_api: Open) -> None:
    api = open_api()
    for env in (api.compress("s1"), api.reflect()):
        assert not env["success"] and env["meta"]["error_type"] == "config_error"
        assert "needs the LLM" in env["error"]


def test_compress_summarises_old_episodes_with_provenance(llm_api: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = llm_api
    episodes = _old_session(api)
    ok(api.remember_message("Today is a new day.", "new"))  # recent: not compressed
    assert ok(api.flush(60))["drained"]
    data = ok(api.compress(before="2024-01-01"))
    assert data["episodes"] == 3 and data["failed"] == []
    [summary] = data["facts"]
    assert summary["extractor"] == "compress" and "Biscuit" in summary["content"]
    assert summary["content"].startswith("Summary of conversation old (2023-01-05 to 2023-01-05)")
    assert sorted(summary["source_episodes"]) == sorted(episodes)
    why = ok(api.why(summary["uuid"]))
    assert {e["text"] for e in why["source_episodes"]} >= {"We moved to Porto in May."}
    assert "Biscuit loves the beach." in next(c.user for c in client.calls if "compress" in c.system)
    assert ok(api.compress(before="2024-01-01"))["episodes"] == 0  # already summarised
    assert len(ok(api.get_latest(10))) == 4  # the turns stay


def test_reflect_stores_insights_citing_their_episodes(llm_api: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = llm_api
    _old_session(api)
    data = ok(api.reflect(limit=10))
    [insight] = data["facts"]
    assert insight["extractor"] == "reflect" and insight["content"].startswith("Dana is settling")
    texts = {e["text"] for e in ok(api.why(insight["uuid"]))["source_episodes"]}
    assert texts == {"I adopted a beagle named Biscuit.", "We moved to Porto in May."}  # sources 1 and 2
    # An insight citing a message that does not exist is refused (after one refinement): nothing stored.
    made_up = {"insights": [{"text": "Made up.", "sources": [9]}]}
    client.default = lambda s, u: made_up if "reflect" in s else {"facts": []}
    bad = ok(api.reflect(limit=10))
    assert bad["facts"] == [] and "names no message" in bad["failed"][0]["error"]


# -- list_agents and cross-agent recall ---------------------------------------------------------------------
def test_agents_are_isolated_by_default_and_read_across_when_allowed(open_api: Open) -> None:
    planner = open_api(**{"scope.name": "planner"})
    coder = open_api(**{"scope.name": "coder"})
    ok(planner.remember_message("Decided to migrate the billing database to PostgreSQL.", "p1"))
    ok(coder.remember_message("Started the migration branch feat/pg-migration.", "c1"))
    assert ok(planner.flush(60))["drained"] and ok(coder.flush(60))["drained"]

    def texts(api: MemoryAPI) -> list[str]:
        return [h["text"] for h in ok(api.recall("migration branch PostgreSQL", limit=10))["hits"]]

    assert not any("feat/pg-migration" in t for t in texts(planner))  # isolated by default
    agents = {a["scope"]: a for a in ok(planner.list_agents())}
    assert set(agents) == {"planner", "coder"}
    assert agents["planner"]["own"] and agents["planner"]["episodes"] == 1
    assert not agents["coder"]["readable"] and agents["coder"]["episodes"] is None  # not counted for it

    reader = open_api(**{"scope.name": "planner", "scope.read_also": ["coder"]})
    assert any("feat/pg-migration" in t for t in texts(reader))
    assert {a["scope"]: a["readable"] for a in ok(reader.list_agents())} == {"planner": True, "coder": True}
    ok(reader.remember_message("Reader's own note about migration.", "p2"))
    assert ok(reader.flush(60))["drained"]
    assert not any("Reader's own note" in t for t in texts(coder))  # it still writes only its own scope


def test_read_also_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"scope\.read_also"):
        MemoryAPI(hermes_home=tmp_path, **{"scope.read_also": "coder"})
    with pytest.raises(ConfigError, match=r"read_also"):
        MemoryAPI(hermes_home=tmp_path, **{"scope.read_also": ["../x"]})


# -- assert_fact with valid time ----------------------------------------------------------------------------
def test_assert_fact_supersedes_an_overlapping_older_value(open_api: Open) -> None:
    api = open_api()
    acme = ok(api.assert_fact("Ivan", "works_at", "Acme", "2020-01-01", "2022-01-01"))
    assert (acme["subject"], acme["predicate"], acme["object"]) == ("Ivan", "works_at", "Acme")
    assert acme["content"] == "Ivan works at Acme" and acme["valid_to"] == ts("2022-01-01")
    globex = ok(api.assert_fact("Ivan", "works at", "Globex", "2022-01-01"))
    assert globex["superseded"] == []  # Acme had ended: no overlap, both stand
    initech = ok(api.assert_fact("Ivan", "works_at", "Initech", "2023-06-01"))
    assert initech["superseded"] == [globex["uuid"]]
    closed = ok(api.fact_get(globex["uuid"]))
    assert closed["valid_to"] == ts("2023-06-01") and closed["superseded_by"] == initech["uuid"]
    assert ok(api.assert_fact("Ivan", "works_at", "Initech", "2023-06-01"))["created"] is False
    assert [f["object"] for f in ok(api.fact_history("Ivan"))] == ["Acme", "Globex", "Initech"]


def test_an_older_value_learned_late_ends_where_the_known_one_begins(open_api: Open) -> None:
    api = open_api()
    lisbon = ok(api.assert_fact("Maya", "lives_in", "Lisbon", "2021-01-01"))
    porto = ok(api.assert_fact("Maya", "lives_in", "Porto", "2019-01-01"))
    assert porto["superseded"] == [] and porto["valid_to"] == ts("2021-01-01")
    assert ok(api.fact_get(lisbon["uuid"]))["superseded_at"] is None
    env = api.assert_fact("Maya", "lives_in", "Faro", "2020-01-01", "2019-01-01")
    assert not env["success"] and "valid_to" in env["error"]


# -- salience on write ---------------------------------------------------------------------------------------
def test_salience_is_computed_when_a_fact_is_written(open_api: Open) -> None:
    api = open_api()
    cue = ok(api.fact_store("Remember this: my passport is in the blue folder!"))["importance"]
    plain = ok(api.fact_store("The weather is nice today."))["importance"]
    given = ok(api.fact_store("Atlas stores routes in Postgres.", importance=0.5))["importance"]
    assert cue >= 0.6 > 0.3 > plain and given == 0.5
    # Novelty: the same statement beside a near-copy already believed is worth less than alone.
    ok(api.fact_store("Maya works at Nordlicht Labs in Berlin.", importance=0.5))
    repeat = ok(api.fact_store("Maya works at Nordlicht Labs in Berlin now."))["importance"]
    fresh = ok(open_api(**{"profile": "other"}).fact_store("Maya works at Nordlicht Labs in Berlin now."))
    assert repeat < fresh["importance"]


def test_prune_keeps_salient_facts_and_lets_trivia_fade(open_api: Open) -> None:
    api = open_api()
    cue = ok(api.fact_store("Remember this: my passport is in the blue folder!"))
    plain = ok(api.fact_store("The weather is nice today."))
    ok(api.prune(now=time.time() + 3650 * 86400.0))
    assert ok(api.fact_get(plain["uuid"]))["is_archived"] is True
    assert ok(api.fact_get(cue["uuid"]))["is_archived"] is False


# -- bitemporal as_of ---------------------------------------------------------------------------------------
@pytest.fixture
def ivan(open_api: Open) -> tuple[MemoryAPI, dict[str, Any]]:
    api = open_api()
    facts = {"acme": ok(api.assert_fact("Ivan", "works_at", "Acme", "2020-01-01", "2022-01-01")),
             "globex": ok(api.assert_fact("Ivan", "works_at", "Globex", "2022-01-01"))}  # fmt: skip
    time.sleep(0.01)  # so Initech is recorded strictly after Globex
    facts["initech"] = ok(api.assert_fact("Ivan", "works_at", "Initech", "2023-06-01"))
    return api, facts


@pytest.mark.parametrize(
    ("valid", "employer"), [("2021-03-01", "Acme"), ("2022-06-01", "Globex"), ("2024-01-01", "Initech")]
)
def test_as_of_answers_by_valid_time(
    ivan: tuple[MemoryAPI, dict[str, Any]], valid: str, employer: str
) -> None:
    api, _ = ivan
    assert [f["object"] for f in ok(api.as_of(valid=valid, subject="Ivan"))] == [employer]
    assert [f["object"] for f in ok(api.as_of(valid, query="Ivan works"))] == [employer]
    history = ok(api.fact_history("Ivan", as_of={"valid": valid}))
    assert [f["object"] for f in history] == [employer]
    found = ok(api.fact_query("Ivan works", as_of={"valid": valid}))
    assert [f["object"] for f in found] == [employer]
    hits = ok(api.recall("where does Ivan work", as_of={"valid": valid}))["hits"]
    hits = [h for h in hits if h["kind"] == "fact"]
    assert [h["text"] for h in hits] == [f"Ivan works at {employer}"]


def test_as_of_answers_what_was_known_then(ivan: tuple[MemoryAPI, dict[str, Any]]) -> None:
    api, facts = ivan
    before_initech = facts["globex"]["recorded_at"]
    # Known before Initech was recorded: Globex was still open-ended, so true in 2024 as known then.
    then = ok(api.as_of(valid="2024-01-01", known=before_initech, subject="Ivan"))
    assert [f["object"] for f in then] == ["Globex"]
    assert [f["object"] for f in ok(api.as_of(known=before_initech, subject="Ivan"))] == ["Globex"]
    assert ok(api.as_of(valid="2024-01-01", known=facts["acme"]["recorded_at"] - 1, subject="Ivan")) == []
    # A plain time keeps today's meaning (record time: what was believed then).
    believed = ok(api.fact_query("Ivan works", as_of=before_initech))
    assert sorted(f["object"] for f in believed) == ["Acme", "Globex"]
    recalled = ok(api.recall("Ivan works", as_of={"valid": "2024-01-01", "known": before_initech}))["hits"]
    assert [h["text"] for h in recalled if h["kind"] == "fact"] == ["Ivan works at Globex"]


@pytest.mark.parametrize("value", ["2023-05-08", "2023-05-08T13:56", "2023-05-08T13:56:00+02:00", 1683504000])
def test_as_of_takes_iso_dates_and_numbers(open_api: Open, value: Any) -> None:
    api = open_api()
    assert api.recall("anything", as_of=value)["success"]
    assert api.fact_query("anything", as_of=value)["success"]


@pytest.mark.parametrize("value", ["last tuesday", {"valid": "2023-05-08", "when": 1}, True, [1]])
def test_as_of_refuses_what_is_no_time(open_api: Open, value: Any) -> None:
    env = open_api().recall("anything", as_of=value)
    assert not env["success"] and env["meta"]["error_type"] == "invalid_input"


def test_cli_as_of_takes_iso_dates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "home").mkdir()  # the CLI refuses a --home that does not exist (a typo)
    home = ["--home", str(tmp_path / "home")]
    assert main(["assert-fact", "Ivan", "works_at", "Acme", "--valid-from", "2020-01-01", *home]) == 0
    assert main(["assert-fact", "Ivan", "works_at", "Globex", "--valid-from", "2022-01-01T09:30", *home]) == 0
    capsys.readouterr()
    for flag in ("2023-05-08", "2023-05-08T13:56", str(time.time())):
        assert main(["recall", "Ivan works", "--as-of", flag, *home]) == 0
        assert main(["fact", "query", "Ivan", "--as-of", flag, *home]) == 0
    capsys.readouterr()
    assert main(["fact", "query", "Ivan works", "--valid-at", "2021-05-01", *home]) == 0
    out = capsys.readouterr().out
    assert "Acme" in out and "Globex" not in out
    assert main(["as-of", "--valid", "2023-05-08", "--subject", "Ivan", *home]) == 0
    out = capsys.readouterr().out
    assert "Globex" in out and "Acme" not in out and "(valid 2022-01-01" in out
    assert main(["recall", "Ivan", "--as-of", "not a date", *home]) == 1
    assert main(["list-agents", *home]) == 0
    assert capsys.readouterr().out.startswith("default (this agent): 0 turns, 2 facts")
