"""CLI command `ui`: the memory browser, a small web app on 127.0.0.1 over the same store."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hermes_memory.cli._common import EXIT_OK, EXIT_USAGE, CommandError, add_global_options, resolve


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ui",
        help="the memory browser: search, facts and their history, corrections, forget, health "
        "(a local web page)",
    )
    add_global_options(p, ("home", "profile", "config", "scope"))
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--allow-remote", action="store_true", help="allow a --host that is not loopback (prints a warning)"
    )
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.set_defaults(handler=_ui)


def _ui(args: argparse.Namespace) -> int:
    from hermes_memory.ui import RemoteBindError, check_bind, make_server

    if not 0 <= args.port <= 65535:
        raise CommandError(f"error: --port {args.port}: not a port", EXIT_USAGE)
    try:
        warning = check_bind(args.host, args.allow_remote)
    except RemoteBindError as exc:
        raise CommandError(f"error: {exc}", EXIT_USAGE) from exc
    if warning:
        print(warning, file=sys.stderr)
    resolved = resolve(args)
    from hermes_memory.api.memory_api import MemoryAPI

    # It works the turn queue like any process on the store (a Hermes session may have left turns queued).
    api = MemoryAPI(resolved.config, actor="ui", scope=getattr(args, "scope", None), background=True)
    try:
        try:
            server, app = make_server(
                {"api": api, "settings": resolved.settings, "tier3": resolved.config.tier3.enabled},
                args.host,
                args.port,
            )
        except OSError as exc:
            raise CommandError(f"error: cannot listen on {args.host}:{args.port}: {exc}") from exc
        url = app.gate.url()
        print(f"memory browser: {url}\n(the link carries this session's key; Ctrl-C stops it)", flush=True)
        if args.open:
            import webbrowser

            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    finally:
        api.close()
    return EXIT_OK


__all__ = ["register"]
