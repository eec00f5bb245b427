"""``EpisodeStore.speakers``: the view's distinct speakers in the order each first spoke, read through the
(scope, speaker) index (migration 17) — the same list ``SELECT DISTINCT`` over every turn gave."""

from __future__ import annotations

from pathlib import Path

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import Tier2


def _distinct_in_row_order(tier2: Tier2, scopes: tuple[str, ...] | None) -> list[str]:
    where = "" if scopes is None else f"AND scope IN ({', '.join('?' * len(scopes))})"
    rows = tier2.db.query(
        f"SELECT speaker FROM episodes WHERE speaker IS NOT NULL {where} ORDER BY id", scopes or ()
    )
    return list(dict.fromkeys(str(r["speaker"]) for r in rows))


def test_speakers_in_the_order_each_first_spoke_per_view(tmp_path: Path) -> None:
    a = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("a"))
    b = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("b"))
    both = Tier2.open(tmp_path / "t2.db", view=ScopeView(own="b", fact_scope="b", readable=("b", "a")))
    try:
        said = [(a, "Zoe"), (b, "Omar"), (a, None), (a, "Ana"), (b, "Zoe"), (a, ""), (b, "ana"), (a, "Zoe"),
                (b, "Ana"), (a, "Mia")]  # fmt: skip
        with a.db.atomic() as conn:
            for i, (store, speaker) in enumerate(said):
                store.episodes.add(conn, session_id=f"s{i % 3}", role="user", text=f"turn {i}",
                                   timestamp=float(i), speaker=speaker)  # fmt: skip
        assert a.episodes.speakers() == ["Zoe", "Ana", "", "Mia"] == _distinct_in_row_order(a, ("a",))
        assert b.episodes.speakers() == ["Omar", "Zoe", "ana", "Ana"] == _distinct_in_row_order(b, ("b",))
        assert both.episodes.speakers() == _distinct_in_row_order(both, ("b", "a"))
        assert both.episodes.speakers() == ["Zoe", "Omar", "Ana", "", "ana", "Mia"]
        admin = a.admin()
        assert admin.episodes.speakers() == _distinct_in_row_order(a, None)
    finally:
        both.close()
        b.close()
        a.close()


def test_no_turns_no_speakers(tmp_path: Path) -> None:
    store = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("a"))
    try:
        assert store.episodes.speakers() == [] and store.admin().episodes.speakers() == []
    finally:
        store.close()
