"""Working memory: Engram's short-term store, the last observations of each running session.

Every message remembered through ``Ingest`` (``remember_turn``, ``remember_message``, ``observe_many``,
the Hermes provider's ``sync_turn``) is also put here, in this process, under its session id: the
newest ``capacity`` messages of a session are kept (older ones roll out; they are in the durable queue
and the episodes already, so nothing is lost), and at most ``MAX_SESSIONS`` sessions are held (the
least recently written one is dropped first). ``end(session_id)`` clears a session's buffer: the Hermes
provider calls it when Hermes ends or switches the session. The buffer is a view of the session in
this process, never a second copy on disk: another process sees its own sessions' buffers only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.records import TurnMessage

# Sessions held at once (a gateway serves many users; each buffer is small).
MAX_SESSIONS = 256


@dataclass(frozen=True, slots=True)
class Observation:
    """One message of the current session, as it was remembered (credentials already redacted)."""

    session_id: str
    role: str
    speaker: str | None
    text: str
    time: float
    turn_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "role": self.role, "speaker": self.speaker,
                "text": self.text, "time": self.time, "turn_id": self.turn_id}  # fmt: skip


class WorkingMemory:
    """The bounded buffers of the sessions running in this process (thread-safe)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, deque[Observation]] = OrderedDict()

    def add(self, session_id: str, messages: Sequence[TurnMessage], time_: float, turn_id: str) -> None:
        """Put a remembered turn's messages at the end of its session's buffer (the oldest roll out)."""
        if self.capacity <= 0:
            return
        with self._lock:
            buffer = self._sessions.get(session_id)
            if buffer is None:
                buffer = self._sessions[session_id] = deque(maxlen=self.capacity)
            self._sessions.move_to_end(session_id)
            for m in messages:
                if m.text.strip():
                    buffer.append(Observation(session_id, m.role, m.speaker, m.text, time_, turn_id))
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def items(self, session_id: str) -> list[Observation]:
        """The session's buffer, oldest first (empty for a session this process has not seen)."""
        with self._lock:
            return list(self._sessions.get(session_id, ()))

    def end(self, session_id: str) -> int:
        """Clear a session's buffer (the session ended); returns how many observations it held."""
        with self._lock:
            buffer = self._sessions.pop(session_id, None)
        return 0 if buffer is None else len(buffer)

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)


__all__ = ["MAX_SESSIONS", "Observation", "WorkingMemory"]
