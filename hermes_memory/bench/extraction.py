"""Extraction-quality benchmark: hand-labelled conversational turns, scored against what the store keeps.

    python -m hermes_memory.bench.extraction [--data F] [--json OUT] [--misses N]

Each conversation of the labelled set (``tests/data/extraction_bench.json``; its ``about`` field holds the
labelling rules) goes into a fresh memory through the public write path, as Hermes would write it:
"hermes" conversations as ``remember_turn(user, assistant, user_name=..., assistant_name=...)`` pairs,
"human" (LoCoMo-style) ones one ``remember_message`` per turn with the speaker's name; each turn at its own
time; then ``flush``. What the store then holds is compared with the labels (hashing embedder: vectors
play no part in extraction).

Matching (documented here, tested in tests/unit/test_extraction_bench.py):
- names are compared case-insensitively with whitespace, punctuation (but apostrophes) and a leading
  article dropped ("&" reads "and"); in "hermes" conversations "user", "the user", "me" and the user's
  name all read "user", also as an owner ("Dana's dog" = "user's dog");
- entities, per conversation: (name, type), tool and tech one type; a stored entity matches by its name or
  any of its aliases; the conversation's participants are left out on both sides;
- relations, per conversation: (subject, type, object) with the endpoints alias-aware ("a|b" objects
  too); moved_to and lives_in count as one edge type, like adopted/has_pet, likes/loves/enjoys and
  works_at/works_for;
- facts, per turn (a stored fact belongs to every turn in its ``source_episodes``): subject alias-aware;
  predicate equal up to synonyms (owns = has_pet); the object equal for predicates whose object is an
  entity (lives_in, works_at, has_pet, ...), else the labelled key phrase must occur (whole words) in the
  stored object, or in the stored sentence when there is no object; a labelled ``states`` fact matches a
  stored fact of any predicate whose sentence contains the key phrase; "a|b" in a label lists acceptable
  alternatives. "facts" also lets a stored ``states`` sentence (no predicate) match a labelled fact of any
  predicate when it names the subject and contains the object: the sentence is right, only untyped;
  "typed facts" does not (supersession needs the predicate);
- dates, per turn: the (start, end) days of the timeline events that came from the turn against the
  labelled periods (end exclusive). ``date_resolution`` checks the resolver alone: for each labelled date
  phrase, the time mention ``extract`` finds in it and whether its period is the labelled one.
Error classes: facts with the assistant as subject, facts from assistant turns, facts from user turns
that are only questions/greetings/acknowledgements, junk entities (sentence-length names, booleans,
status strings, tool echoes), one name stored as several entities, dates in the future of a turn that only
states past periods.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hermes_memory.bench.extraction_labels import (
    DEFAULT_DATA,
    ENTITY_TYPES,
    KINDS,
    ROLES,
    Conversation,
    Turn,
    load_dataset,
    norm,
)
from hermes_memory.bench.extraction_predict import Prediction, StoredFact, predict, prediction_from_labels
from hermes_memory.bench.extraction_score import (
    CATEGORIES,
    ENTITY_PREDICATES,
    Report,
    Tally,
    canonical,
    is_junk_entity,
    score_conversation,
    score_resolution,
    user_names,
)
from hermes_memory.errors import ValidationError


def summary(report: Report, seconds: float) -> dict[str, Any]:
    resolved = sum(report.resolution[k] for k in ("correct", "wrong", "not_found"))
    return {
        "per_category": {c: report.tallies[c].as_dict() for c in CATEGORIES},
        "date_resolution": {
            "phrases": resolved,
            "correct": report.resolution["correct"],
            "wrong": report.resolution["wrong"],
            "not_found": report.resolution["not_found"],
            "future_for_past": report.resolution["future_for_past"],
            "accuracy": round(report.resolution["correct"] / resolved, 4) if resolved else 1.0,
        },
        "errors": {
            key: report.errors[key]
            for key in (
                "facts_about_assistant",
                "facts_from_assistant_turns",
                "facts_from_questions_and_acks",
                "junk_entities",
                "names_stored_as_several_entities",
                "entities_with_wrong_type",
                "future_dates_for_past_statements",
            )
        },
        "conversations": report.conversations,
        "turns": report.turns,
        "turns_without_episode": report.unmapped_turns,
        "seconds": round(seconds, 1),
    }


def table(result: dict[str, Any]) -> str:
    """The table of docs/benchmarks.md (markdown)."""
    lines = [
        "| category | labelled | stored | precision | recall | F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for cat, row in result["per_category"].items():
        lines.append(
            f"| {cat} | {row['labelled']} | {row['stored']} | {row['precision']:.3f} | {row['recall']:.3f} "
            f"| {row['f1']:.3f} |"
        )
    res = result["date_resolution"]
    lines += [
        "",
        f"Date phrases resolved by the resolver: {res['correct']}/{res['phrases']} right "
        f"({res['wrong']} wrong, {res['future_for_past']} of them in the future for a past statement; "
        f"{res['not_found']} not recognised).",
        "",
        "| error class | count |",
        "|---|---:|",
    ]
    lines += [f"| {key.replace('_', ' ')} | {value} |" for key, value in result["errors"].items()]
    return "\n".join(lines)


def run(conversations: Iterable[Conversation], overrides: dict[str, Any] | None = None) -> Report:
    """Ingest and score every conversation."""
    report = Report()
    for conv in conversations:
        score_conversation(conv, predict(conv, overrides), report)
        score_resolution(conv, report)
    return report


def print_misses(report: Report, per_category: int) -> None:
    for category in (*CATEGORIES, "date_resolution"):
        lines = report.misses.get(category, [])
        if lines:
            print(
                f"--- {category}: {len(lines)} misses and false positives, first {per_category}",
                file=sys.stderr,
            )
            for line in lines[:per_category]:
                print(f"  {line}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_memory.bench.extraction",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="the labelled set (default: %(default)s)")
    parser.add_argument("--json", dest="json_out", help="write the numbers here")
    parser.add_argument(
        "--misses", type=int, default=0, help="print N misses and false positives per category"
    )
    args = parser.parse_args(argv)
    if args.misses < 0:
        parser.error("--misses must be >= 0")
    try:
        conversations = load_dataset(args.data)
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report = run(conversations)
    result = summary(report, time.perf_counter() - started)
    if args.misses:
        print_misses(report, args.misses)
    print(table(result))
    print(f"\n{result['turns']} turns in {result['conversations']} conversations, {result['seconds']} s")
    if report.unmapped_turns:
        print(
            f"warning: {report.unmapped_turns} turns have no stored episode; "
            "their facts and dates count as missed"
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CATEGORIES",
    "DEFAULT_DATA",
    "ENTITY_PREDICATES",
    "ENTITY_TYPES",
    "KINDS",
    "ROLES",
    "Conversation",
    "Prediction",
    "Report",
    "StoredFact",
    "Tally",
    "Turn",
    "canonical",
    "is_junk_entity",
    "load_dataset",
    "main",
    "norm",
    "predict",
    "prediction_from_labels",
    "print_misses",
    "run",
    "score_conversation",
    "score_resolution",
    "summary",
    "table",
    "user_names",
]
