"""The LoCoMo harness accepts any file of the same format and writes exactly the documented JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.bench import locomo

SAMPLE = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a beagle puppy called Rex!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! Where did you get him?"},
                {
                    "speaker": "Ana",
                    "dia_id": "D1:3",
                    "text": "From the shelter downtown.",
                    "blip_caption": "a photo of a small dog",
                },
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I started learning the violin last week."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "That sounds hard but fun."},
            ],
            "session_3": [],
        },
        "qa": [
            {
                "question": "What is the name of Ana's dog?",
                "answer": "Rex",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "When did Ben start the violin?",
                "answer": "June 2023",
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "Where did Ana get her puppy?",
                "answer": "shelter",
                "evidence": ["D1:3; D1:1"],
                "category": 1,
            },
            {"question": "Is this skipped?", "answer": "x", "evidence": [], "category": 3},
            {"question": "Adversarial", "answer": "n/a", "evidence": ["D1:2"], "category": 5},
        ],
        "observation": {"must": "not be ingested"},
        "session_summary": {"session_1": "SUMMARY-SHOULD-NOT-APPEAR"},
    }
]


def test_harness_writes_the_documented_shape(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(SAMPLE), encoding="utf-8")
    out = tmp_path / "out.json"
    code = locomo.main(
        [
            "--data",
            str(data),
            "--k",
            "5",
            "10",
            "--json",
            str(out),
            "--embedder",
            "hashing",
            "--backend",
            "memory",
        ]
    )
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    keys = {"n", "hit@5", "recall@5", "hit@10", "recall@10"}
    assert set(result["overall"]) == keys
    assert set(result["per_category"]) == {"1", "2", "3", "4"}
    assert all(set(v) == keys for v in result["per_category"].values())
    assert set(result["latency_ms"]) == {"p50", "p95"}
    assert isinstance(result["ingest_ms_per_turn"], float)
    assert result["embedder"] == "hashing" and result["llm"] is None
    assert result["overall"]["n"] == 3  # category 5 and the empty-evidence question are not scored
    assert result["skipped_questions_without_evidence"] == 1
    assert result["evidence_ids_repaired"] == 0 and result["turns"] == 5
    # with five turns every evidence turn is within the top 10
    assert result["overall"]["recall@10"] == 1.0


def test_evidence_ids_are_normalised() -> None:
    stats = locomo.Stats()
    assert locomo.normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"], stats) == {
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
    }
    assert stats.repaired_evidence == 2 and stats.dropped_evidence == 1


def test_unreadable_file_is_a_clear_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert locomo.main(["--data", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_misses_are_printed_with_what_came_back(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(SAMPLE), encoding="utf-8")
    # With k = 1 the two-turn evidence of the category-1 question cannot be complete.
    args = ["--data", str(data), "--k", "1", "--embedder", "hashing", "--backend", "memory"]
    assert locomo.main([*args, "--misses", "3"]) == 0
    err = capsys.readouterr().err
    assert "[category 1] Where did Ana get her puppy?" in err
    assert "evidence D1:1" in err and "evidence D1:3" in err
    assert "MISSED" in err and "Ana: " in err
    assert locomo.main(args) == 0
    assert "[category" not in capsys.readouterr().err  # only on request
