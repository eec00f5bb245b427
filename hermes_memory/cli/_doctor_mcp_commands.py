"""CLI commands `doctor` (integrity checks and repairs) and `mcp` (the MCP server on stdio)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hermes_memory.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CommandError,
    add_global_options,
    home_flag,
    open_api,
    resolve,
)

_MARK = {"ok": "ok   ", "warn": "WARN ", "error": "ERROR"}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "doctor",
        help="integrity checks (SQLite, FTS, vectors, graph, queues, fact invariants); --repair fixes them",
    )
    add_global_options(p)
    p.add_argument("--repair", action="store_true", help="apply every available repair, then check again")
    p.set_defaults(handler=_doctor)

    m = sub.add_parser("mcp", help="serve recall/remember/timeline/why/forget/stats as an MCP server (stdio)")
    add_global_options(m, ("home", "profile", "config", "scope"))
    m.set_defaults(handler=_mcp)


def _table(data: dict[str, Any], repair_hint: str = "--repair") -> str:
    lines = []
    if data["repairs"]:
        for repair in data["repairs"]:
            state = "done" if repair["ok"] else f"FAILED: {repair.get('error', '')}"
            lines.append(f"repair {repair['action']}: {state}")
        lines.append("")
    for finding in data["findings"]:
        hint = f"  (repairable: {repair_hint})" if finding["repairable"] else ""
        lines.append(f"{_MARK[finding['status']]} {finding['check']:<24} {finding['detail']}{hint}")
    problems = sum(1 for f in data["findings"] if f["status"] != "ok")
    lines.append("clean" if problems == 0 else f"{problems} problem(s) found")
    return "\n".join(lines)


def _doctor(args: argparse.Namespace) -> int:
    resolved = resolve(args)
    def progress(step: str) -> None:  # a repair can take many seconds: say what runs (stderr)
        if args.repair and not args.json:
            print(f"doctor: {step} ...", file=sys.stderr, flush=True)

    with open_api(args) as api:
        envelope = api.doctor(repair=args.repair, progress=progress)
    from hermes_memory.hermes.people_status import people_status

    people = people_status(resolved.config)
    from hermes_memory.hermes import ownership

    clashes = ownership.clashes(ownership.installed_owners(), sys.executable)
    if args.json:
        envelope["meta"]["settings"] = str(resolved.source) if resolved.source else None
        envelope["meta"]["clashes"] = [{"problem": c.problem, "fix": c.fix} for c in clashes]
        print(json.dumps(envelope, ensure_ascii=False, indent=2, default=str))
    elif not envelope["success"]:
        raise CommandError(f"error: {envelope['error']}")
    else:
        # Say which store was checked: the one Hermes uses for this home (same settings file).
        origin = f"settings {resolved.source}" if resolved.source else "default settings (no nextlevel.yaml)"
        tier3 = resolved.config.tier3
        vectors = f"{tier3.backend}, embedder {tier3.embedding_model}" if tier3.enabled else "off"
        from hermes_memory.tier2.engines import where

        store = where(resolved.config.db_path, resolved.config.tier2.url)
        print(f"checking {store} (vectors: {vectors}; {origin})")
        for line in people.lines:
            print(f"people: {line}")
        for problem, fix in people.problems:
            print(f"! people: {problem}\n  fix: {fix}")
        for clash in clashes:
            print(f"! install: {clash.problem}\n  fix: {clash.fix}")
        print(_table(envelope["data"], f"hermes-memory doctor --repair{home_flag(args)}"))
    if not envelope["success"]:
        return EXIT_FAILED
    healthy = envelope["data"]["clean"] and not people.problems and not clashes
    return EXIT_OK if healthy else EXIT_FAILED


def _mcp(args: argparse.Namespace) -> int:
    # Imported here: the MCP library is an optional extra and heavy to import.
    from hermes_memory.mcp_server import serve_stdio

    serve_stdio(home=args.home, profile=args.profile, config=args.config, scope=args.scope)
    return EXIT_OK
