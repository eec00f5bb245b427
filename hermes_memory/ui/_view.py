"""What every page of the memory browser is given: the store, the provider settings, the session's
CSRF token; and the request's parameters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.hermes.settings import ProviderSettings

Params = Mapping[str, str]


@dataclass(frozen=True)
class View:
    """What every page works with: the store, the provider settings, the session's CSRF token."""

    api: MemoryAPI
    settings: ProviderSettings
    csrf: str
    tier3: bool


__all__ = ["Params", "View"]
