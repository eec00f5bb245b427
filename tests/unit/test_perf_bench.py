"""The pure parts of the performance bench: percentiles, target verdicts, the printed table, the rows
built from phase results, and the holographic peer's mapping of its hits back to turns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hermes_memory.bench import perf
from hermes_memory.bench._proc import run_measured
from hermes_memory.bench.perf_report import (
    Row,
    Target,
    fmt_number,
    format_table,
    latency_row,
    latency_summary,
    percentile,
)


def test_percentile_is_nearest_rank_over_sorted_values() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 50) == 3.0
    assert percentile(values, 100) == 5.0
    assert percentile(list(range(1, 101)), 95) == 95


@pytest.mark.parametrize("bad", [-1, 100.5])
def test_percentile_refuses_q_outside_0_100(bad: float) -> None:
    with pytest.raises(ValueError, match="q must be"):
        percentile([1.0], bad)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


def test_latency_summary() -> None:
    assert latency_summary([10.0, 30.0, 20.0]) == {"n": 3, "p50": 20.0, "p95": 30.0, "max": 30.0}


def test_fmt_number_keeps_three_significant_digits_below_100() -> None:
    assert fmt_number(12.345) == "12.3"
    assert fmt_number(0.51234) == "0.512"
    assert fmt_number(1234.5) == "1,234"
    assert fmt_number(0) == "0"
    assert fmt_number(float("nan")) == "n/a"


def test_target_ops() -> None:
    assert Target("<=", 15).met_by(15) and not Target("<=", 15).met_by(15.1)
    assert Target(">=", 200).met_by(250) and not Target(">=", 200).met_by(199)
    assert str(Target("<=", 0.5)) == "<= 0.5"
    with pytest.raises(ValueError, match="op"):
        Target("<", 1)


def test_a_latency_row_is_met_only_when_p50_and_p95_both_are() -> None:
    fast = latency_row("recall", {"p50": 10.0, "p95": 30.0}, 15, 40)
    slow_tail = latency_row("recall", {"p50": 10.0, "p95": 41.0}, 15, 40)
    assert fast.verdict() == "yes"
    assert slow_tail.verdict() == "NO"
    assert fast.ours == "10 / 30"
    assert latency_row("recall", None, 15, 40).verdict() == "n/a"


def test_row_verdicts() -> None:
    assert Row("ingest", 250.0, "turns/s", (Target(">=", 200),)).verdict() == "yes"
    assert Row("ingest", 150.0, "turns/s", (Target(">=", 200),)).verdict() == "NO"
    assert Row("ingest", None, "turns/s", (Target(">=", 200),)).verdict() == "n/a"
    assert Row("info", 3.0).verdict() == ""
    text_with_check = Row("rss", "300 / 500", "MB", (Target("<=", 600),), checks=(500.0,))
    assert text_with_check.verdict() == "yes"


def test_table_has_one_line_per_row_and_the_peer_column() -> None:
    rows = [
        latency_row("recall p50 / p95", {"p50": 12.0, "p95": 35.0}, 15, 40, peer={"p50": 91.0, "p95": 130.0}),
        Row("ingest", 250.0, "turns/s", (Target(">=", 200),), note="a | b"),
        Row("missing", None),
    ]
    lines = format_table(rows).splitlines()
    assert lines[0] == "| measure | hermes-memory | target | met | holographic | note |"
    assert len(lines) == 2 + len(rows)
    assert lines[2] == "| recall p50 / p95 | 12 / 35 ms | <= 15 / <= 40 ms | yes | 91 / 130 ms |  |"
    assert lines[3] == "| ingest | 250 turns/s | >= 200 turns/s | yes |  | a / b |"
    assert lines[4] == "| missing | n/a |  |  |  |  |"


def _locomo_result(embedded_texts: int) -> dict[str, object]:
    ingest = {
        "turns": 100, "enqueue_s": 0.1, "write_s": 0.4, "embed_phase_s": 4.5,
        "embedded_texts": embedded_texts, "embedded_tokens": embedded_texts * 30, "embedded_seconds": 4.0,
    }  # fmt: skip
    ingest.update({f"embedded_during_write_{key}": 0 for key in ("texts", "tokens", "seconds")})
    return {
        "conversations": ["conv-x"],
        "k": 10,
        "ours": {
            "latency_ms": {"n": 5, "p50": 12.0, "p95": 30.0, "max": 40.0},
            "recall_at_k": 0.8,
            "questions": 5,
            "ingest": ingest,
            "instrument_note": "",
        },
        "holographic": {
            "latency_ms": {"n": 5, "p50": 80.0, "p95": 120.0, "max": 130.0},
            "recall_at_k": 0.5,
            "questions": 5,
            "ingest_s": 2.0,
            "turns": 100,
        },
    }


def test_locomo_rows_compute_rates_from_the_phase_result() -> None:
    rows = {r.measure.split(",")[0]: r for r in perf.locomo_rows(_locomo_result(embedded_texts=400))}
    write = rows["ingest"]
    assert write.ours == pytest.approx(200.0)  # 100 turns in 0.1 + 0.4 s
    assert write.peer == pytest.approx(50.0)  # holographic: 100 turns in 2 s
    assert write.verdict() == "yes"
    with_embedder = rows["ingest with the real embedder"]
    assert with_embedder.ours == pytest.approx(20.0)  # 100 turns in 5 s
    assert rows["embedded per turn: texts / model tokens"].ours == "4.00 / 120"
    assert rows["embedder on the batch path"].ours == pytest.approx(3000.0)  # 12,000 tokens in 4 s
    assert rows["retrieval recall@10"].peer == 0.5


def test_locomo_rows_say_why_when_nothing_was_counted() -> None:
    result = _locomo_result(embedded_texts=0)
    result["ours"]["instrument_note"] = "tier 3 is off"  # type: ignore[index]
    rows = perf.locomo_rows(result)
    counted = [r for r in rows if r.measure.startswith("embedded per turn")]
    assert counted[0].ours is None and counted[0].note == "tier 3 is off"


def test_run_measured_reports_output_exit_code_and_peak_rss(tmp_path: Path) -> None:
    code = "import sys; data = bytearray(64 * 1024 * 1024); print(len(data)); sys.exit(3)"
    done = run_measured([sys.executable, "-c", code], cwd=tmp_path)
    assert done.returncode == 3
    assert done.stdout.strip() == str(64 * 1024 * 1024)
    assert done.peak_rss_mb >= 64


def test_run_measured_kills_a_child_past_its_timeout() -> None:
    with pytest.raises(TimeoutError):
        run_measured([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_holographic_peer_maps_its_hits_back_to_turns(tmp_path: Path) -> None:
    peer_module = pytest.importorskip("hermes_memory.bench.holographic_peer")
    pytest.importorskip("plugins.memory.holographic.store", reason="hermes-agent is not installed")
    with peer_module.HolographicPeer(tmp_path / "memory_store.db") as peer:
        peer.add_turn("D1:1", "Ana: I adopted a beagle puppy called Rex!")
        peer.add_turn("D1:2", "Ben: Congrats! Where did you get him?")
        peer.add_turn("D2:1", "Ben: I started learning the violin last week.")
        same = peer.add_turn("D3:1", "Ana: I adopted a beagle puppy called Rex!")  # same text, same fact
        assert same == peer.add_turn("D1:1", "Ana: I adopted a beagle puppy called Rex!")
        assert peer.search("What is the name of the beagle puppy?", k=10) == ["D1:1", "D3:1"]
        assert peer.search("violin lessons", k=10) == ["D2:1"]
        assert peer.search("beagle puppy", k=1) == ["D1:1"]
        assert peer.search("quantum chromodynamics", k=10) == []


def test_a_yes_no_row_checks_its_expected_answer() -> None:
    assert Row("cold prefetch by meaning", "yes", expect=True).verdict() == "yes"
    assert Row("cold prefetch by meaning", "no", expect=True).verdict() == "NO"
    assert Row("cold prefetch by meaning", None, expect=True).verdict() == "n/a"
    line = format_table([Row("cold prefetch by meaning", "no", expect=True)]).splitlines()[2]
    assert line == "| cold prefetch by meaning | no | yes | NO |  |  |"


def test_parts_follow_only_quick_and_the_skips() -> None:
    data = ["--data", __file__]  # any existing file: the arguments are only parsed
    assert perf._args(data).parts == list(perf.PARTS)
    assert perf._args([*data, "--quick"]).parts == ["conversations", "embedder", "scale", "oneshot"]
    assert perf._args([*data, "--only", "scale", "--scale", "10000"]).parts == ["scale"]
    skipped = perf._args([*data, "--skip-oneshot", "--scale", "0"])
    assert skipped.parts == ["conversations", "embedder", "locomo"]
    assert perf._args([*data, "--only", "locomo", "--skip-locomo"]).parts == []


def test_bad_sizes_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        perf._args(["--data", __file__, "--scale", "-1"])
    assert "--scale must be >= 0" in capsys.readouterr().err


def test_the_benchmark_counts_what_the_stores_embedder_embeds(tmp_path: Path) -> None:
    # The per-turn embedding figures come from wrapping the store's own embedder; a store whose
    # embedder the benchmark cannot reach would silently print "n/a" instead.
    from hermes_memory import MemoryAPI
    from hermes_memory.bench._perf_phases import instrument

    with MemoryAPI(hermes_home=tmp_path, **{"tier3.embedding_model": "hashing"}) as api:
        counter, why = instrument(api)
        assert counter is not None, why
        api.remember_message("I adopted a beagle called Biscuit.", "s1", 1_700_000_000.0)
        api.flush(timeout=30)
        assert counter.snapshot()["texts"] > 0
