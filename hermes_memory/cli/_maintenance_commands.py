"""CLI command `maintain`: run the maintenance jobs (all, one, or those due), or show their status."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hermes_memory._names import JOB_NAMES
from hermes_memory.cli._common import EXIT_FAILED, EXIT_OK, add_global_options, emit, open_api
from hermes_memory.cli._progress import ProgressBar
from hermes_memory.cli._records import when

# Result keys shown on a job's summary line (everything else is in --json).
_SKIP_KEYS = {"central_entities", "duration_s", "error_type", "skipped_relations"}


class JobBars:
    """One progress bar per job on stderr; a finished bar is not redrawn for the same total."""

    def __init__(self) -> None:
        self._bars: dict[str, ProgressBar] = {}
        self._closed: dict[str, int] = {}

    def __call__(self, job: str, done: int, total: int) -> None:
        if done >= total and self._closed.get(job) == total:
            return
        bar = self._bars.setdefault(job, ProgressBar(f"{job:<13}"))
        bar(done, total)
        if done >= total:
            self._closed[job] = total


def register(sub: Any) -> None:
    p = sub.add_parser(
        "maintain",
        help="run the maintenance jobs: consolidate, prune, embed_queue, graph_refresh (default: all)",
    )
    add_global_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--job", choices=JOB_NAMES, help="run only this job")
    which.add_argument("--all", action="store_true", help="run every job in order (the default)")
    which.add_argument(
        "--due", action="store_true", help="run only the jobs whose cron schedule is due (for a crontab)"
    )
    which.add_argument("--status", action="store_true", help="show schedules, last runs and what is due")
    p.set_defaults(handler=_maintain)


def _summary(name: str, run: dict[str, Any]) -> str:
    if run["status"] == "skipped":
        return f"{name:<13} skipped  ({run.get('reason', '')})"
    duration = run.get("duration_s")
    took = f"{duration:7.2f} s" if duration is not None else "      - s"
    if run["status"] == "failed":
        return f"{name:<13} failed {took}  {run['error']}"
    result = run.get("result") or {}
    counts = "  ".join(f"{k}={v}" for k, v in result.items() if k not in _SKIP_KEYS)
    return f"{name:<13} ok     {took}  {counts}"


def _status_table(data: dict[str, Any]) -> str:
    lines = [f"{'job':<13} {'schedule':<14} {'last run':<26} {'next run':<17} due"]
    for name, info in data.items():
        last = info["last_run"]
        last_text = "never" if last is None else f"{when(last['started_at'])} {last['status']}"
        due = "yes" if info["due"] else ("no" if not info["blocked"] else f"no ({info['blocked']})")
        lines.append(f"{name:<13} {info['schedule']:<14} {last_text:<26} {when(info['next_run']):<17} {due}")
    return "\n".join(lines) + "\n(times in UTC)"


def _maintain(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        if args.status:
            return emit(args, api.maintenance_status(), _status_table)
        bars = None if args.json else JobBars()
        envelope = api.maintain_due(progress=bars) if args.due else api.maintain(args.job, progress=bars)
    if args.json:
        print(json.dumps(envelope, ensure_ascii=False, indent=2, default=str))
        return EXIT_OK if envelope["success"] else EXIT_FAILED
    data = envelope["data"]
    if data is None or "jobs" not in data:  # the call itself failed (bad input, store unusable)
        print(f"error: {envelope['error']}", file=sys.stderr)
        return EXIT_FAILED
    if data.get("skipped"):
        print(f"skipped: {data['skipped']}")
    elif not data["jobs"]:
        print("nothing due")
    for name, run in data["jobs"].items():
        print(_summary(name, run))
    if not envelope["success"]:
        print(f"error: {envelope['error']}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
