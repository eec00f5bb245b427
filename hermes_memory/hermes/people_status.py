"""What ``status`` (and ``doctor``) say about the people a Hermes home serves: the privacy mode in
force, what the operator shares, and rows waiting in the quarantine scope (read-only queries)."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_memory.audience import QUARANTINE_SCOPE, Sharing
from hermes_memory.config import Config
from hermes_memory.tier2 import people


@dataclass(frozen=True)
class PeopleStatus:
    lines: list[str]
    problems: list[tuple[str, str]]  # (problem, fix)


def mode_lines(per_user: bool, sharing: Sharing, read_also: tuple[str, ...]) -> list[str]:
    """The privacy mode in words: private per person and group, or one memory; links; what is shared."""
    if not per_user:
        return ["ONE memory for everyone (scope.per_user: false): a gateway's people read each other's"]
    out = ["private: each person and each group chat has its own memory"]
    out += [f"linked: {name} = {', '.join(handles)}" for name, handles in sharing.people.items()]
    for pool in sharing.pools:
        members, readers = ", ".join(pool.members) or "nobody", ", ".join(pool.readers) or "no one else"
        out.append(f"SHARED pool '{pool.name}': the facts of {members}, read by them and by {readers}")
    if read_also:
        out.append(f"SHARED scope.read_also: every session also reads {', '.join(read_also)}")
    return out


def people_status(config: Config) -> PeopleStatus:
    """The mode lines, plus problems: one memory (or sharing) on a store that holds gateway turns, and
    turns waiting in quarantine. Never raises: an unreadable store adds no problem (status says so)."""
    scope = config.scope
    sharing = Sharing.of(scope.people, scope.pools)
    lines = mode_lines(scope.per_user, sharing, scope.read_also)
    problems: list[tuple[str, str]] = []
    gateway, quarantined = people.peek(config.db_path, QUARANTINE_SCOPE)
    if gateway and not scope.per_user:
        problems.append((
            "this store holds gateway turns and every person reads every other person's memory "
            "(scope.per_user: false)",
            "remove 'per_user: false' from the settings' memory.scope (then the first gateway session "
            "splits the store by person)",
        ))  # fmt: skip
    elif gateway and (sharing.on or scope.read_also):
        lines.append("WARNING a multi-user gateway runs with sharing on: check the SHARED lines above")
    if quarantined:
        problems.append((
            f"{quarantined} turn(s) of gateway sessions could not be attributed to a person and wait in "
            f"scope '{QUARANTINE_SCOPE}' (no session reads them)",
            f"read them: hermes-memory --scope {QUARANTINE_SCOPE} export; give a session to its person: "
            "hermes-memory people assign SESSION_ID user:<platform>:<user_id>",
        ))  # fmt: skip
    return PeopleStatus(lines, problems)


__all__ = ["PeopleStatus", "mode_lines", "people_status"]
