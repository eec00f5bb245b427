"""The pure parts of the performance bench: percentiles, latency summaries and the printed table.

Nothing here measures anything; ``perf`` collects the numbers and hands them over as ``Row``s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

_OPS = {"<=": lambda ours, goal: ours <= goal, ">=": lambda ours, goal: ours >= goal}


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank over the sorted values.

    Raises ValueError for an empty sequence or q outside [0, 100].
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within [0, 100], got {q}")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def latency_summary(values_ms: Sequence[float]) -> dict[str, float]:
    """n, p50, p95 and max of latencies in milliseconds (rounded to 0.01 ms). Raises ValueError if empty."""
    return {
        "n": len(values_ms),
        "p50": round(percentile(values_ms, 50), 2),
        "p95": round(percentile(values_ms, 95), 2),
        "max": round(max(values_ms), 2),
    }


@dataclass(frozen=True)
class Target:
    """A goal of the issue: ``op`` is "<=" or ">=", ``value`` in the row's unit."""

    op: str
    value: float

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"target op must be one of {sorted(_OPS)}, got {self.op!r}")

    def met_by(self, ours: float) -> bool:
        return bool(_OPS[self.op](ours, self.value))

    def __str__(self) -> str:
        return f"{self.op} {fmt_number(self.value)}"


@dataclass(frozen=True)
class Row:
    """One printed measure: our number, its targets (if the issue sets any), the peer's, and a note.

    ``ours``/``peer`` are numbers in ``unit`` or already formatted text (e.g. "93 / 130" for p50 / p95);
    ``None`` prints as "n/a". ``checks`` are the numbers checked against ``targets``, pairwise (for a
    number ``ours`` and one target they default to ``ours``).
    """

    measure: str
    ours: float | str | None
    unit: str = ""
    targets: tuple[Target, ...] = ()
    peer: float | str | None = None
    note: str = ""
    checks: tuple[float | None, ...] = ()
    expect: bool | None = None  # a yes/no measure: ``ours`` is "yes" or "no", the target is this

    def goal(self) -> str:
        """The target column: the targets joined, with the unit ("<= 15 / <= 40 ms")."""
        if self.expect is not None:
            return "yes" if self.expect else "no"
        unit = f" {self.unit}" if self.targets and self.unit else ""
        return " / ".join(str(t) for t in self.targets) + unit

    def verdict(self) -> str:
        """Whether the targets are met: yes, NO, n/a (a number is missing), or empty (no target)."""
        if self.expect is not None:
            if self.ours not in ("yes", "no"):
                return "n/a"
            return "yes" if (self.ours == "yes") == self.expect else "NO"
        if not self.targets:
            return ""
        checks = self.checks
        if not checks and len(self.targets) == 1 and isinstance(self.ours, int | float):
            checks = (float(self.ours),)
        if len(checks) != len(self.targets):
            return "n/a"
        if any(c is None or math.isnan(c) for c in checks):
            return "n/a"
        met = all(t.met_by(float(c)) for t, c in zip(self.targets, checks, strict=True) if c is not None)
        return "yes" if met else "NO"


def latency_row(
    measure: str,
    ours: dict[str, float] | None,
    p50_max: float | None = None,
    p95_max: float | None = None,
    *,
    peer: dict[str, float] | None = None,
    note: str = "",
) -> Row:
    """A "p50 / p95 ms" row from two latency summaries, checked against the p50 and p95 goals."""
    targets: list[Target] = []
    checks: list[float | None] = []
    for key, goal in (("p50", p50_max), ("p95", p95_max)):
        if goal is not None:
            targets.append(Target("<=", goal))
            checks.append(None if ours is None else ours[key])
    return Row(measure, fmt_pair(ours), "ms", tuple(targets), fmt_pair(peer), note, tuple(checks))


def fmt_number(value: float) -> str:
    """Short human form: 3 significant digits below 100, integers above (12.3, 0.512, 1234)."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a measurement")
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    return f"{value:.3g}"


def fmt_value(value: float | str | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    text = value if isinstance(value, str) else fmt_number(value)
    return f"{text} {unit}".strip() if unit and text != "n/a" else text


def fmt_pair(summary: dict[str, float] | None) -> str | None:
    """'p50 / p95' of a latency summary (None stays None)."""
    if summary is None:
        return None
    return f"{fmt_number(summary['p50'])} / {fmt_number(summary['p95'])}"


def format_table(rows: Sequence[Row], peer_name: str = "holographic") -> str:
    """A Markdown table of the rows: measure | ours | target | met | peer | note."""
    header = ["measure", "hermes-memory", "target", "met", peer_name, "note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [
            row.measure,
            fmt_value(row.ours, row.unit),
            row.goal(),
            row.verdict(),
            "" if row.peer is None else fmt_value(row.peer, row.unit),
            row.note,
        ]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


__all__ = [
    "Row",
    "Target",
    "fmt_number",
    "fmt_pair",
    "fmt_value",
    "format_table",
    "latency_row",
    "latency_summary",
    "percentile",
]
