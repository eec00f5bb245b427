"""CLI commands `doctor` (integrity checks and repairs) and `mcp` (the MCP server on stdio)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hermes_memory.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CommandError,
    add_global_options,
    add_scope_option,
    open_api,
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
    m.add_argument("--home", help="HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")
    m.add_argument("--profile", help="memory profile (default: from config, 'default')")
    m.add_argument("--config", help="a YAML config file merged over the defaults")
    add_scope_option(m)
    m.set_defaults(handler=_mcp)


def _table(data: dict[str, Any]) -> str:
    lines = []
    if data["repairs"]:
        for repair in data["repairs"]:
            state = "done" if repair["ok"] else f"FAILED: {repair.get('error', '')}"
            lines.append(f"repair {repair['action']}: {state}")
        lines.append("")
    for finding in data["findings"]:
        hint = "  (repairable: --repair)" if finding["repairable"] else ""
        lines.append(f"{_MARK[finding['status']]} {finding['check']:<24} {finding['detail']}{hint}")
    problems = sum(1 for f in data["findings"] if f["status"] != "ok")
    lines.append("clean" if problems == 0 else f"{problems} problem(s) found")
    return "\n".join(lines)


def _doctor(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        envelope = api.doctor(repair=args.repair)
    if args.json:
        print(json.dumps(envelope, ensure_ascii=False, indent=2, default=str))
    elif not envelope["success"]:
        raise CommandError(f"error: {envelope['error']}")
    else:
        print(_table(envelope["data"]))
    if not envelope["success"]:
        return EXIT_FAILED
    return EXIT_OK if envelope["data"]["clean"] else EXIT_FAILED


def _mcp(args: argparse.Namespace) -> int:
    # Imported here: the MCP library is an optional extra and heavy to import.
    from hermes_memory.mcp_server import serve_stdio

    serve_stdio(home=args.home, profile=args.profile, config=args.config, scope=args.scope)
    return EXIT_OK
