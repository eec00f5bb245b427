"""CLI commands `export`, `import`, `backup`, `restore`, `migrate`, `forget`: whole-home operations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hermes_memory.cli._common import EXIT_FAILED, EXIT_OK, add_global_options, emit, open_api, resolve


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="export every tier to a JSON file (vectors are re-derived on import)")
    add_global_options(p)
    p.add_argument("file", help="the JSON file to write")
    p.set_defaults(handler=_export)

    p = sub.add_parser(
        "import", help="import a JSON export (into an empty home, or --merge skipping duplicates)"
    )
    add_global_options(p)
    p.add_argument("file", help="the JSON export to read")
    p.add_argument("--merge", action="store_true", help="merge into existing memory, skipping duplicates")
    p.set_defaults(handler=_import)

    p = sub.add_parser("backup", help="hot backup (safe while writers run) into a new directory")
    add_global_options(p)
    p.add_argument("dest", help="the backup directory (must not exist or be empty)")
    p.set_defaults(handler=_backup)

    p = sub.add_parser("restore", help="restore a backup into this home/profile and check it")
    add_global_options(p)
    p.add_argument("src", help="the backup directory")
    p.add_argument("--force", action="store_true", help="overwrite memory that already exists")
    p.set_defaults(handler=_restore)

    p = sub.add_parser(
        "migrate", help="copy this profile's store to another engine (SQLite <-> PostgreSQL), all or nothing"
    )
    add_global_options(p)
    p.add_argument(
        "--to", required=True, metavar="URL|sqlite",
        help="a PostgreSQL URL (postgresql://user:password@host:port/db), or sqlite: the profile's file",
    )  # fmt: skip
    p.set_defaults(handler=_migrate)

    p = sub.add_parser("forget", help="erase a record or every trace of an entity (preview without --yes)")
    add_global_options(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--id",
        help="uuid of a fact, episode, timeline event, relation, entity or indexed chunk, or a recall hit's "
        "id (episode:<uuid>, fact:<uuid>, ...)",
    )
    target.add_argument("--entity", help="name or alias of an entity: forget every mention")
    p.add_argument("--yes", action="store_true", help="really forget (default: show what would go)")
    p.add_argument(
        "--all-turns", action="store_true",
        help="with --yes: confirm a large forget (more than a few stored turns), which the preview names",
    )  # fmt: skip
    p.add_argument(
        "--include-related", nargs="*", metavar="NAME",
        help="also forget the related names the preview lists (first name, title + surname, aliases given "
        "in the text, related entities): all of them, or the NAMEs given",
    )  # fmt: skip
    p.set_defaults(handler=_forget)


def _counts(data: dict[str, Any]) -> str:
    return "\n".join(f"{name:<12} {count}" for name, count in data.items())


def _export(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        return emit(
            args, api.export_json(args.file), lambda d: f"exported to {d['path']}\n{_counts(d['counts'])}"
        )


def _import(args: argparse.Namespace) -> int:
    def render(d: dict[str, Any]) -> str:
        lines = [f"{t:<15} imported {n}  skipped {d['skipped'][t]}" for t, n in d["imported"].items()]
        flagged = ", ".join(f"{t} {n}" for t, n in d["flagged"].items())
        return "\n".join([
            *lines, f"curated entries added: {d['tier1_added']}", f"vectors: {d['vectors']}",
            f"flagged by the threat scan (neutralised when recalled): {flagged}",
        ])  # fmt: skip

    with open_api(args) as api:
        return emit(args, api.import_json(args.file, merge=args.merge), render)


def _migrate(args: argparse.Namespace) -> int:
    from hermes_memory.api.envelope import run
    from hermes_memory.ops.migrate import migrate
    from hermes_memory.tier2.engines import safe_url

    def render(d: dict[str, Any]) -> str:
        switch = (
            f"set tier2.url: {safe_url(args.to)!r} (with its password) in the settings, or "
            "HERMES_MEMORY_TIER2_URL"
            if args.to != "sqlite"
            else "remove tier2.url from the settings (and HERMES_MEMORY_TIER2_URL)"
        )
        return f"copied {d['from']} -> {d['to']}\n{_counts(d['copied'])}\nto use the copy: {switch}"

    config = resolve(args).config
    return emit(args, run("tier2", lambda: migrate(config, args.to), tiers=["tier2"]), render)


def _backup(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        return emit(
            args, api.backup(args.dest), lambda d: f"backup written: {args.dest}\n{_counts(d['counts'])}"
        )


def _restore(args: argparse.Namespace) -> int:
    from hermes_memory.api.memory_api import MemoryAPI

    # No MemoryAPI is opened here: restore must write the files before anything holds them open.
    config = resolve(args).config
    envelope = MemoryAPI.restore(args.src, force=args.force, config=config)

    def render(d: dict[str, Any]) -> str:
        check = d["check"]
        return (
            f"restored from {d['restored_from']}; consistency check: {'ok' if check['ok'] else 'FAILED'}\n"
            f"{_counts(check['counts'])}\n"
            f"vector index: {check['vectors_queued']} entries queued to rebuild it; "
            f"{check.get('vectors_stored', 0)} stored vectors came with the backup and are reused "
            "(only texts without one are embedded)\n"
            "flagged by the threat scan (neutralised when recalled): "
            + ", ".join(f"{t} {n}" for t, n in check["flagged"].items())
        )

    return emit(args, envelope, render)


def _forget(args: argparse.Namespace) -> int:
    related: bool | list[str] = False if args.include_related is None else (args.include_related or True)
    with open_api(args) as api:
        if args.id is not None:
            envelope = api.forget(
                args.id, confirm=args.yes, include_related=related, confirm_large=args.all_turns
            )
        else:
            envelope = api.forget_entity(
                args.entity, confirm=args.yes, include_related=related, confirm_large=args.all_turns
            )
    if args.json:
        print(json.dumps(envelope, ensure_ascii=False, indent=2, default=str))
        return EXIT_OK if envelope["success"] else EXIT_FAILED
    if not envelope["success"]:
        print(f"error: {envelope['error']}", file=sys.stderr)
        return EXIT_FAILED
    data = envelope["data"]
    lines = [f"{'forgotten' if data['confirmed'] else 'would forget'} ({data['target']}):"]
    for tier, counts in data["counts"].items():
        lines.append(f"  {tier}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    for store, entries in data.get("curated_entries", {}).items():
        lines.extend(f"  curated {store}: {entry}" for entry in entries)
    for item in data.get("related", []):
        entities = f"; entities: {', '.join(item['entities'])}" if item["entities"] else ""
        state = "included" if item["included"] else "not included"
        lines.append(
            f"  related ({item['kind']}, {state}): {item['name']}: {item['mentions']} more rows{entities}"
        )
    if data.get("unfinished"):
        left = ", ".join(data["unfinished"])
        lines.append(f"  not finished yet (finished on the next open or by doctor --repair): {left}")
    if not data["confirmed"]:
        if data.get("warning"):
            lines.append(f"WARNING: {data['warning']}")
        if any(not item["included"] for item in data.get("related", [])):
            lines.append("related names are kept unless given with --include-related [NAME ...]")
        again = "--yes --all-turns" if data.get("warning") else "--yes"
        lines.append(f"nothing changed; run again with {again} to forget")
    print("\n".join(lines))
    return EXIT_OK
