"""The LoCoMo harness in LLM mode, end to end against a scripted OpenAI-compatible server on 127.0.0.1:
``--both-modes`` runs every conversation without the LLM and with it (instances at write time, query
decomposition at read time) and prints both side by side; LLM failures are counted, never hidden."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import FakeChatServer, Scripted
from test_llm_recall import ANA_BEN, DECOMPOSER, JON_GINA, LIST_QUESTION, SUB_QUERIES, WINE, Turn

from hermes_memory.bench import locomo

_DATES = {"s1": "10:00 am on 20 January, 2023", "s2": "10:00 am on 3 February, 2023",
          "s3": "10:00 am on 1 March, 2023"}  # fmt: skip


def conversation(sample_id: str, turns: list[Turn], qa: list[dict[str, Any]]) -> dict[str, Any]:
    """A LoCoMo-format sample of ``turns`` (each session on its date)."""
    talk: dict[str, Any] = {"speaker_a": turns[0][0], "speaker_b": turns[1][0]}
    for who, session, _, text, dia in turns:
        key = f"session_{session[1:]}"
        talk.setdefault(key, []).append({"speaker": who, "dia_id": dia, "text": text})
        talk[f"{key}_date_time"] = _DATES[session]
    return {"sample_id": sample_id, "conversation": talk, "qa": qa}


SAMPLES = [
    conversation("jon-gina", JON_GINA, [
        {"question": "What indoor activities has Jon done?", "answer": "wine tasting",
         "evidence": ["D1:1"], "category": 1},
    ]),
    conversation("ana-ben", ANA_BEN, [
        {"question": LIST_QUESTION, "answer": "a beagle, the violin", "evidence": ["D1:1", "D2:2"],
         "category": 1},
    ]),
]  # fmt: skip


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model behind the endpoint: sub-queries, or the wine tasting for its turn."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system.startswith(DECOMPOSER):  # the list question has parts; the other is one search
        return {"queries": SUB_QUERIES if LIST_QUESTION in user else []}
    if "wine tasting" in user:
        return {"facts": [], "instances": [WINE]}
    return {"facts": []}


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer(default=Scripted(answer)).start()
    yield fake
    fake.stop()


def run(tmp_path: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(SAMPLES), encoding="utf-8")
    out = tmp_path / "out.json"
    code = locomo.main(["--data", str(data), "--k", "3", "--json", str(out), "--embedder", "hashing",
                        "--backend", "memory", *flags])  # fmt: skip
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_both_modes_side_by_side_with_the_llm_helping(
    tmp_path: Path, server: FakeChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = run(tmp_path, "--both-modes", "--llm-base-url", server.url, "--llm-model", "fake",
                       "--query-decomposition")  # fmt: skip
    assert code == 0
    plain, llm = result["no_llm"], result["llm"]
    assert plain["llm"] is None
    assert plain["per_category"]["1"]["recall@3"] == 0.0  # neither question's evidence without the LLM
    assert llm["per_category"]["1"]["recall@3"] == 1.0  # the instance and the two sub-queries find it
    assert llm["llm"] == {
        "model": "fake", "instance_extraction": True, "query_decomposition": True,
        "extraction_failures": 0, "instance_facts": 1, "decomposed_questions": 1,
        "decomposition_fallbacks": 0,
    }  # fmt: skip
    extraction_calls = sum(not r["body"]["messages"][0]["content"].startswith(DECOMPOSER)
                           for r in server.requests)  # fmt: skip
    assert extraction_calls == len(JON_GINA) + len(ANA_BEN)  # once per turn, in the LLM mode only
    printed = capsys.readouterr()
    assert json.loads(printed.out) == result
    assert "| category | n | recall@3 no LLM | recall@3 LLM | hit@3 no LLM | hit@3 LLM |" in printed.err
    assert "| 1 | 2 | 0.0000 | 1.0000 | 0.0000 | 1.0000 |" in printed.err


def test_a_failing_llm_is_counted_not_hidden(tmp_path: Path) -> None:
    dead = FakeChatServer(default=Scripted(status=400, body=b'{"error": "no such model"}')).start()
    try:
        flags = ("--llm-base-url", dead.url, "--llm-model", "fake", "--query-decomposition")
        code, result = run(tmp_path, *flags)
    finally:
        dead.stop()
    assert code == 0
    assert result["llm"]["extraction_failures"] == len(JON_GINA) + len(ANA_BEN)
    assert result["llm"]["decomposition_fallbacks"] == 2
    assert result["llm"]["instance_facts"] == 0


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--both-modes"], "the LLM options need --llm-base-url and --llm-model"),
        (["--query-decomposition"], "the LLM options need --llm-base-url and --llm-model"),
        (["--llm-base-url", "http://127.0.0.1:9/v1"], "--llm-base-url and --llm-model go together"),
    ],
)
def test_llm_options_without_an_endpoint_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], words: str
) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(SAMPLES), encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        locomo.main(["--data", str(data), *flags])
    assert stopped.value.code == 2
    assert words in capsys.readouterr().err
