"""A small store for the memory browser's tests and screenshots, and the browser served in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING

from hermes_memory.hermes.settings import ProviderSettings

if TYPE_CHECKING:
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.ui.server import App

# (session, when it was said (UTC), what the user said, the answer): sessions months apart,
# so the pages show when each thing was said, not when the demo store was filled.
TURNS = (
    (
        "s-2025-03",
        "2025-03-10T19:12:04Z",
        "I moved to Berlin last year. My dog Biscuit loves the Tiergarten.",
        "Nice, Biscuit sounds fun.",
    ),
    ("s-2025-03", "2025-03-10T19:14:40Z", "My manager is Tom Baker, he runs the data team.",
     "Got it."),
    ("s-2025-06", "2025-06-16T08:30:10Z", "Tom and I went hiking in the Harz on 2025-06-14.",
     "Sounds like a great trip."),
    ("s-2025-09", "2025-09-21T12:04:55Z", "I now live in Lisbon, I moved there in September.",
     "Lisbon, lovely."),
    ("s-2025-09", "2025-09-21T12:07:31Z", "My sister Anna works as a nurse in Porto.",
     "Thanks for telling me."),
)  # fmt: skip


def fill(api: MemoryAPI) -> None:
    """Turns (a move that supersedes an older home), a timeline event, curated entries; flushed."""
    for session, said_at, user, assistant in TURNS:
        api.remember_turn(user, assistant, session_id=session, time_=said_at)
        api.flush()
    api.curated_add("User prefers green tea to coffee.", "user")
    api.curated_add("Project notes live in ~/notes (Markdown).", "memory")
    api.timeline_add("milestone", "Started at the data team", "First day with Tom Baker's team.",
                     related_entities=["Tom Baker"], timestamp=1_735_689_600.0)  # fmt: skip


@dataclass
class Served:
    app: App
    server: ThreadingHTTPServer

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def login(self) -> str:
        return self.app.gate.url()


@contextmanager
def serve(api: MemoryAPI, settings: ProviderSettings | None = None) -> Iterator[Served]:
    """The memory browser on 127.0.0.1 (a free port) in a thread, stopped on exit."""
    from hermes_memory.ui import make_server

    server, app = make_server(
        {"api": api, "settings": settings or ProviderSettings(), "tier3": api.config.tier3.enabled},
        "127.0.0.1",
        0,
    )
    thread = threading.Thread(target=server.serve_forever, name="ui-server", daemon=True)
    thread.start()
    try:
        yield Served(app, server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


__all__ = ["TURNS", "Served", "fill", "serve"]
