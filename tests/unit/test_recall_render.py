"""The one renderer (``recall.render``) and the one recall result (``core.recall.RecallResult``): one
budget rule, one "already shown" filter, each line quoted once, the API and the Hermes prefetch alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.hermes.prefetch import HEADER, Prefetcher, Recalled, recall_lines
from hermes_memory.hermes.registry import SharedStore
from hermes_memory.hermes.settings import ProviderSettings
from hermes_memory.recall import render
from hermes_memory.recall.render import Line, Shown, approx_tokens, join, select
from hermes_memory.records import Hit
from hermes_memory.security import fence

T0 = 1_683_540_000.0
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **HASHING)
    yield mem
    mem.close()


def _hit(text: str, hit_id: str, session: str = "s1", **meta: Any) -> Hit:
    return Hit(id=hit_id, score=1.0, text=text, tier="tier2", kind="episode", timestamp=T0,
               metadata={"speaker": "Bob", "session_id": session, **meta})  # fmt: skip


def _line(key: str, tokens: int, session_turn: str | None = None) -> Line:
    return Line(key, f"- [2025-01-01 10:00] line {key} (fact)", tokens, session_turn)


def test_lines_fit_the_budget_in_rank_order_and_stop_at_the_first_that_does_not() -> None:
    lines = [_line("a", 10), _line("b", 10), _line("c", 5)]
    assert [x.key for x in select(lines, 20)] == ["a", "b"]
    assert [x.key for x in select(lines, 25)] == ["a", "b", "c"]
    assert [x.key for x in select([_line("a", 10), _line("b", 30), _line("c", 5)], 25)] == ["a"]
    assert [x.key for x in select(lines)] == ["a", "b", "c"]  # no budget: every line


def test_a_first_line_that_does_not_fit_is_kept_cut_to_the_budget() -> None:
    hit = _hit("word " * 200, "episode:long")
    chosen = select(render.lines([hit]), 30)
    assert len(chosen) == 1 and chosen[0].key == "episode:long"
    assert len(chosen[0].text) <= 30 * render.CHARS_PER_TOKEN and chosen[0].text.startswith("- [2023-05-08")
    # A budget already spent (the prefetch's header and footer can take it all) shows nothing.
    assert select(render.lines([hit]), 0) == [] and select(render.lines([hit]), -12) == []


def test_shown_lines_are_not_repeated_and_turns_of_the_running_session_not_shown() -> None:
    shown = Shown("now")
    lines = [_line("a", 10), _line("b", 10, session_turn="now"), _line("c", 10, session_turn="old")]
    assert [x.key for x in select(lines, 100, shown)] == ["a", "c"]
    assert select(lines, 100, shown) == []  # every line already shown (or of this session)
    assert [x.key for x in select([_line("d", 10), *lines], 100, shown)] == ["d"]
    shown.reset("later")
    assert [x.key for x in select(lines, 100, shown)] == ["a", "b", "c"]
    assert [x.key for x in select([_line("e", 60), _line("f", 60)], 100, Shown())] == ["e"]


def test_a_line_is_quoted_once_however_often_it_is_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    quoted: list[str] = []
    real = fence.quote

    def counting(text: str) -> str:
        quoted.append(text)
        return real(text)

    monkeypatch.setattr(fence, "quote", counting)
    hits = [_hit(f"Fact number {i} about <b>Ana</b>.", f"episode:{i}") for i in range(3)]
    lines = render.lines(hits)
    assert len(quoted) == 3
    block = join(select(lines, None))
    again = join(select(lines, lines[0].tokens + 1))  # room for one line
    assert len(quoted) == 3  # selecting and joining quote nothing again
    assert block.count("&lt;b&gt;Ana&lt;/b&gt;") == 3 and again == lines[0].text
    assert render.render(hits) == block == "\n".join(render.hit_line(h) for h in hits)


def test_the_prefetch_header_needs_no_quoting() -> None:
    # The prefetch block is the header, the lines (quoted when built) and the quoted footer: the header
    # is shown as it is, so it must be what quoting it gives.
    assert fence.quote(HEADER) == HEADER


def test_the_api_and_the_prefetch_render_the_same_lines(api: MemoryAPI) -> None:
    for i, text in enumerate(["My sister Lena lives in Porto.", "Lena has a cat called Miso."]):
        api.remember_message(text, "old", T0 + i, speaker="Dana")
    assert api.flush(30)["data"]["drained"]
    envelope = api.recall("Lena Porto cat", tiers=["tier1", "tier2"], limit=5)
    assert envelope["success"] and envelope["data"]["rendered"]
    settings = ProviderSettings()
    shared = SharedStore(key=("h", "p", ""), api=api, settings=settings)
    answer = recall_lines(shared, "Lena Porto cat", ("tier1", "tier2"), 5)
    assert "\n".join(line.text for line in answer.lines) == envelope["data"]["rendered"]
    assert answer.answered == tuple(envelope["meta"]["tiers_answered"]) == ("tier1", "tier2")
    block = Prefetcher(shared, settings, tier3=False).emit(Recalled(answer.lines, 0.0, answer.answered))
    assert block.splitlines()[1:-1] == envelope["data"]["rendered"].splitlines()
    assert approx_tokens(block) <= settings.prefetch_budget_tokens + 2


def test_the_prefetch_reads_the_core_records_not_the_envelope(api: MemoryAPI) -> None:
    api.remember_message("The lighthouse keeper is called Ortega.", "old", T0)
    assert api.flush(30)["data"]["drained"]

    def no_envelopes(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the prefetch called MemoryAPI.recall")

    api.recall = no_envelopes  # type: ignore[method-assign]
    shared = SharedStore(key=("h", "p", ""), api=api, settings=ProviderSettings())
    answer = recall_lines(shared, "lighthouse keeper", ("tier1", "tier2"), 5)
    assert any("Ortega" in line.text for line in answer.lines) and answer.error_type is None


def test_recall_result_says_which_tiers_were_queried_answered_and_unavailable(api: MemoryAPI) -> None:
    found = api.core.recall.query("anything", tiers=["tier2", "graph"])
    assert found.queried == ("tier2", "graph") and found.answered == ("tier2", "graph")
    assert found.meta() == {
        "tiers_queried": ["tier2", "graph"], "tiers_answered": ["tier2", "graph"], "tiers_unavailable": {},
    }  # fmt: skip
    assert found.to_dict() == {"hits": [], "rendered": ""}


def test_the_prefetch_block_shows_a_first_line_too_long_for_its_budget_cut_to_fit() -> None:
    answered = ("tier1", "tier2")
    footer = "Tiers answered: notes, facts and past turns (keywords)."
    overhead = approx_tokens(HEADER) + approx_tokens(footer) + 2
    settings = ProviderSettings(prefetch_budget_tokens=overhead + 12)
    shared = SharedStore(key=("h", "p", ""), api=None, settings=settings)  # type: ignore[arg-type]
    prefetcher = Prefetcher(shared, settings, tier3=False)
    long = render.lines([_hit("A very long remembered sentence about the lighthouse. " * 4, "episode:l")])
    block = prefetcher.emit(Recalled(long, 0.0, answered))
    assert block.splitlines()[0] == HEADER and block.splitlines()[-1] == footer
    (cut,) = block.splitlines()[1:-1]
    assert cut.startswith("- [2023-05-08 10:00] Bob: A very long") and cut in long[0].text
    assert approx_tokens(block) <= settings.prefetch_budget_tokens + 2
    assert prefetcher.emit(Recalled(long, 0.0, answered)) == ""  # shown (cut) once in this session


def test_a_stamp_shows_only_the_precision_the_time_has() -> None:
    from datetime import UTC, datetime

    from hermes_memory.recall.render import stamp

    def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> float:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()

    assert stamp(at(2026, 11, 24, 16, 49, 31)) == "2026-11-24 16:49"
    assert stamp(at(2026, 11, 24, 0, 0, 7)) == "2026-11-24 00:00"  # a moment: it has seconds
    assert stamp(at(2023, 5, 8)) == "2023-05-08"  # "on 8 May"
    assert stamp(at(2026, 5, 1)) == "2026-05"  # "in May"
    assert stamp(None) == "undated"


def test_a_replaced_statement_is_dated_by_when_it_stopped_being_true() -> None:
    """The mark (and the explain and fact pages) give the replacing statement's time (``valid_to``), not
    when the memory wrote the replacement down; a statement not replaced has no such time."""
    said, learned = 1_700_000_000.0, 1_790_000_000.0
    assert render.replaced_since({"superseded_at": learned, "valid_to": said}) == said
    assert render.replaced_since({"superseded_at": learned, "valid_to": None}) == learned
    assert render.replaced_since({"valid_to": said}) is None  # ended, not replaced
    note = render.superseded_note({"superseded_at": learned, "valid_to": said, "superseded_by": "New"})
    assert note == f"superseded {render.stamp(said)} by: New"
