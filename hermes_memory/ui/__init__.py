"""The memory browser (`hermes-memory ui`): see and correct what the agent remembers, on this machine.

``serve`` runs it until interrupted; ``make_server`` (``server.py``) builds it for tests and scripts.
"""

from __future__ import annotations

from hermes_memory.ui.server import CSP, RemoteBindError, check_bind, make_server

__all__ = ["CSP", "RemoteBindError", "check_bind", "make_server"]
