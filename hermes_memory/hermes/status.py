"""``hermes-memory status``: what is installed where, and whether the Python Hermes runs in can import it.

The usual failure is hermes-memory installed into one Python environment and Hermes running from
another: Hermes then silently runs without the provider. This finds Hermes' interpreter (the
``hermes`` command's shebang, or ``--hermes-python``), asks it to import ``hermes_memory`` and the
optional packages the configured tiers need, and says plainly what to run when that fails.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.config import Config
from hermes_memory.errors import ConfigError
from hermes_memory.hermes import PROVIDER_NAME, config_yaml, install, ownership
from hermes_memory.hermes.interpreter import (
    NEEDS,
    extras_for,
    find_hermes_python,
    fix_command,
    needed_modules,
    probe,
)
from hermes_memory.hermes.people_status import people_status
from hermes_memory.hermes.settings import ProviderSettings, load_memory_config, settings_path
from hermes_memory.hermes.setup import DEFAULT_OPENAI_MODEL, embedder_problem
from hermes_memory.recall.availability import busy_words
from hermes_memory.tier2 import leases
from hermes_memory.tier2.peek import (
    Failures,
    LastRun,
    count_rows,
    inbox_failure,
    last_runs,
    queue_failures,
    turns_behind,
)
from hermes_memory.tier2.turn_inbox import inbox_path
from hermes_memory.tier3.backend import resolve_backend, store_owner
from hermes_memory.tier3.embedder import EMBEDDERS


@dataclass
class StatusReport:
    hermes_home: Path
    this_python: str
    version: str
    plugin_installed: bool = False
    plugin_ours: bool = False
    skill_installed: bool = False
    configured_provider: str | None = None
    settings_file: str = ""
    database: str = ""
    database_exists: bool = False
    embedder: str = ""
    vector_backend: str = ""
    # The process that has the embedded vector store open (0: one that did not say its pid), if any:
    # every other process on this home then searches the stored vectors exactly (the same hits).
    vector_owner: int | None = None
    # Which path answers vector searches: the exact index below tier3.engine_min_vectors, else the engine.
    vector_search: str = ""
    # Work the durable queues hold for a later process or the background worker (None: unknown).
    pending: dict[str, int | None] = field(default_factory=dict)
    # Queued turns that failed to be written (they stay queued and are retried) and the newest error.
    failing_turns: int | None = 0
    failing_error: str | None = None
    # The maintenance jobs: whether Hermes runs them itself, who runs them now, each job's last run.
    maintenance: list[str] = field(default_factory=list)
    # A store on a server: the shared queues, this host's inbox, who drains them now.
    queues: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)  # the privacy mode of a gateway's people
    extras: list[str] = field(default_factory=list)
    hermes_command: str | None = None
    hermes_python: str | None = None
    probe: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["hermes_home"] = str(self.hermes_home)
        out["ok"] = self.ok
        return out


def collect(
    hermes_home: str | os.PathLike[str] | None = None, *, hermes_python: str | None = None, check: bool = True
) -> StatusReport:
    """Everything `hermes-memory status` reports. Never raises for a broken installation: what is
    wrong goes into ``problems`` with the command that fixes it in ``fixes``."""
    home = install.resolve_home(hermes_home)
    given = home if hermes_home else None
    report = StatusReport(home, sys.executable, install.package_version())
    add_clashes(report)
    shim = home / "plugins" / PROVIDER_NAME / "__init__.py"
    report.plugin_installed = shim.exists()
    report.plugin_ours = report.plugin_installed and install.SHIM_MARKER in shim.read_text(errors="replace")
    report.skill_installed = (home / "skills" / install.SKILL_NAME / "SKILL.md").exists()
    report.settings_file = str(settings_path(home))
    config = None
    try:
        report.configured_provider = config_yaml.read_provider(home / "config.yaml")
    except ConfigError as exc:
        report.problems.append(f"Hermes' config.yaml: {exc}")
        report.fixes.append(f"fix {home / 'config.yaml'}")
    settings = ProviderSettings()
    try:
        # The same loader Hermes' provider, the CLI, MCP and doctor use for this home.
        resolved = load_memory_config(home)
        config, settings = resolved.config, resolved.settings
    except ConfigError as exc:
        report.problems.append(f"configuration: {exc}")
        report.fixes.append(f"fix the file named above (settings live in {report.settings_file})")
    if config is not None:
        from hermes_memory.tier2.engines import where

        report.database = where(config.db_path, config.tier2.url)  # a server's URL without its password
        report.database_exists = config.tier2.url is None and config.db_path.exists()
        tier3 = config.tier3
        report.embedder = _embedder_text(config) if tier3.enabled else "off"
        report.vector_backend = (
            (tier3.backend + (f" ({tier3.url})" if tier3.url else "")) if tier3.enabled else "off"
        )
        report.extras = extras_for(config)
        why = embedder_problem(tier3, home)
        if why:
            report.problems.append(f"the embedder cannot work, so meaning search would fail: {why}")
            report.fixes.append(
                f"edit {report.settings_file}, or run `hermes memory setup {PROVIDER_NAME}` "
                "(it asks for what is needed)"
            )
        state = store_state(config)
        if state.schema_version is not None:
            report.database += f" (schema version {state.schema_version})"
        report.pending = state.pending
        report.queues = state.queues
        report.maintenance = maintenance_lines(state, settings)
        if state.error is not None:
            report.problems.append(f"the memory store cannot be read: {state.error}")
            report.fixes.append(
                "start the server, or fix tier2.url (or HERMES_MEMORY_TIER2_URL) and its credentials"
            )
        people = people_status(config)
        report.people = people.lines
        for problem, fix in people.problems:
            report.problems.append(problem)
            report.fixes.append(fix)
        report.failing_turns, report.failing_error = state.failing
        if report.failing_turns:
            report.problems.append(
                f"the turn queue is stuck: {report.failing_turns} queued turn(s) could not be written "
                f"(they stay queued); last error: {report.failing_error}"
            )
            report.fixes.append(
                "free disk space (or raise the file size limit), then run `hermes-memory maintain`; "
                "if the error names the turn itself, report it"
            )
        if tier3.enabled:
            report.vector_search = search_path_text(state.chunks, tier3.engine_min_vectors, tier3.backend)
        if tier3.enabled:
            engine = resolve_backend(tier3.backend, tier3.url)
            report.vector_owner = store_owner(engine, config.tier3_path / engine)
    if not report.plugin_installed:
        report.problems.append(f"the provider is not installed in {home}")
        report.fixes.append(install.hint("install --activate", home))
    elif not report.plugin_ours:
        report.problems.append(f"{shim.parent} exists but was not written by hermes-memory")
        report.fixes.append(f"move {shim.parent} away, then: {install.hint('install --activate', given)}")
    if report.configured_provider != PROVIDER_NAME:
        now = report.configured_provider or "none (built-in memory only)"
        report.problems.append(f"Hermes is not using it: memory.provider is {now}")
        report.fixes.append(install.hint("install --activate", home))
    report.hermes_command, report.hermes_python = find_hermes_python(hermes_python)
    if report.hermes_python is None:
        report.problems.append("cannot find the Python Hermes runs in (no `hermes` command on PATH)")
        report.fixes.append("rerun with --hermes-python /path/to/hermes/venv/bin/python")
    elif check:
        check_interpreter(report, needed_modules(config), report.extras if config is not None else None)
    return report


def _embedder_text(config: Config) -> str:
    tier3 = config.tier3
    info = EMBEDDERS[tier3.embedding_model]
    if info.label is not None:
        return f"{tier3.embedding_model} ({info.label})"
    if info.asks == "endpoint":
        model = tier3.embedding_model_name or DEFAULT_OPENAI_MODEL
        return f"{tier3.embedding_model} ({model} at {tier3.embedding_base_url or '?'})"
    return f"{tier3.embedding_model} ({tier3.embedding_model_name or 'no model set'})"


def pending_counts(db_path: Path) -> dict[str, int | None]:
    """Work waiting in the durable queues of the store at ``db_path``, read without opening the store
    for writing: turns not yet ingested (the inbox plus the ingest queue) and vector updates not yet
    embedded. A count that cannot be read is None."""
    turns = count_rows(inbox_path(db_path), "inbox")
    queued = count_rows(db_path, "ingest_queue")
    return {
        "turns_to_ingest": None if turns is None or queued is None else turns + queued,
        "embeddings": count_rows(db_path, "embed_queue"),
        "turns_behind": turns_behind(db_path),
    }


def failing_turns(db_path: Path) -> tuple[int | None, str | None]:
    """How many queued turns of the store at ``db_path`` failed to be written (in the queue with an
    error, or in the inbox when moving them on failed), and the newest error, read without opening the
    store for writing. (None, None) when it cannot be read."""
    return _failing(queue_failures(db_path), inbox_failure(inbox_path(db_path)))


def _failing(queued: Failures | None, inbox: Failures | None) -> tuple[int | None, str | None]:
    """The failed turns of the queue, and of the inbox when moving them on failed (its error is then the
    newest); (None, None) when either cannot be read."""
    if queued is None or inbox is None:
        return None, None
    count, last = queued.count, queued.last_error
    if inbox.last_error is not None:
        count, last = count + inbox.count, inbox.last_error
    return count, last


@dataclass
class StoreState:
    """What status reads of a store without opening it: the queues (``pending``, and per host on a
    server: ``queues``), failed turns, the maintenance lease's holder and each job's last run (None:
    unreadable), the stored chunks; ``error`` when the store cannot be read at all."""

    pending: dict[str, int | None]
    failing: tuple[int | None, str | None]
    holder: leases.Holder | None
    runs: dict[str, LastRun] | None
    chunks: int | None
    queues: list[str] = field(default_factory=list)
    error: str | None = None
    schema_version: int | None = None  # (read on a server only)


def store_state(config: Config) -> StoreState:
    """Read the store of ``config`` without opening it: the SQLite file read-only, or one read-only
    session on the server (``tier2.pg.peek``)."""
    db_path = config.db_path
    if not config.tier2.url:
        return StoreState(
            pending_counts(db_path), failing_turns(db_path), leases.holder(db_path, leases.JOBS),
            last_runs(db_path), count_rows(db_path, "chunks"),
        )  # fmt: skip
    from hermes_memory.tier2.pg.peek import peek

    found = peek(config.tier2.url, config.profile)
    failing = _failing(found.failures, inbox_failure(inbox_path(db_path)))
    mine = count_rows(inbox_path(db_path), "inbox")
    queued = None if found.queued_turns is None or mine is None else found.queued_turns + mine
    pending = {"turns_to_ingest": queued, "embeddings": found.embeddings, "turns_behind": found.turns_behind}
    queues = [
        f"shared by every host: {_num(found.queued_turns)} turn(s), {_num(found.embeddings)} embedding(s)",
        f"this host's inbox: {_num(mine)} turn(s) not yet moved to the shared queue",
        *(f"{what} drained now by: {found.holders[name].words()}"
          for name, what in ((leases.TURNS, "turns"), (leases.EMBEDDINGS, "embeddings"))
          if name in found.holders),
    ]  # fmt: skip
    return StoreState(
        pending, failing, found.holders.get(leases.JOBS), None if found.error else found.last_runs,
        found.chunks, queues, found.error, found.schema_version,
    )  # fmt: skip


def _num(value: int | None) -> str:
    return "?" if value is None else str(value)


def maintenance_lines(state: StoreState, settings: ProviderSettings) -> list[str]:
    """The maintenance jobs of a store (``store_state``): whether a Hermes process runs them itself
    (``provider.maintenance_interval_s``), who runs them right now (on any host of a shared store), and
    each job's last run (UTC)."""
    interval = settings.maintenance_interval_s
    lines = [
        f"in Hermes: every {interval:g} s from a long-lived process (provider.maintenance_interval_s)"
        if interval > 0
        else "in Hermes: off (provider.maintenance_interval_s: 0); schedule `hermes-memory maintain --due`"
    ]
    holder = state.holder
    if holder is not None:
        since = f" since {_utc(holder.since)}" if holder.since else ""
        lines.append(f"running now: {holder.words()}{since}")
    runs = state.runs
    if runs is None:
        lines.append("last runs: unknown (the store cannot be read)")
        return lines
    from hermes_memory.cron.jobs import JOB_NAMES  # the jobs' modules: only when status is shown

    for job in JOB_NAMES:
        run = runs.get(job)
        if run is None:
            lines.append(f"{job}: never ran")
            continue
        error = f": {run.error}" if run.error else ""
        lines.append(f"{job}: {run.status} {_utc(run.started_at)} ({run.triggered_by}){error}")
    return lines


def _utc(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def search_path_text(chunks: int | None, engine_min_vectors: int, backend: str) -> str:
    """Which path answers vector searches on a store of ``chunks`` stored chunks (None: unreadable):
    exact over the stored vectors below ``engine_min_vectors`` chunks, else the engine."""
    if chunks is None:
        return "unknown (the store cannot be read)"
    if chunks < engine_min_vectors:
        return f"exact over the stored vectors of {chunks} chunks (engine opens at {engine_min_vectors})"
    return f"engine {backend} ({chunks} chunks)"


def add_clashes(report: StatusReport) -> None:
    """Another distribution claiming ``hermes_memory`` or the ``hermes-memory`` command in this Python
    goes into ``report.problems`` with the one command that fixes it."""
    for clash in ownership.clashes(ownership.installed_owners(), sys.executable):
        report.problems.append(clash.problem)
        report.fixes.append(clash.fix)


def check_interpreter(report: StatusReport, needed: list[str], extras: list[str] | None) -> None:
    """Probe Hermes' Python (``report.hermes_python``) for hermes_memory and ``needed``; what is
    missing goes into ``report.problems`` with the one command that fixes it."""
    python = str(report.hermes_python)
    found = probe(python, needed)
    report.probe = found
    if "error" in found:
        report.problems.append(f"Hermes' Python could not be checked: {found['error']}")
        report.fixes.append("rerun with --hermes-python pointing at the Python that runs Hermes")
        return
    fix = fix_command(python, install.RUNTIME_EXTRAS.split(",") if extras is None else extras, found)
    if "hermes_memory" not in found:
        same = os.path.realpath(str(found.get("prefix", ""))) == os.path.realpath(sys.prefix)
        where = "" if same else f" hermes-memory is installed for {sys.executable}, a different environment."
        report.problems.append(
            f"Hermes runs in {found.get('python', python)}, which cannot import hermes_memory "
            f"({found.get('hermes_memory_error')}).{where} Hermes will run without this provider."
        )
        report.fixes.append(fix)
        return
    owners = found.get("owners")
    same = os.path.realpath(str(found.get("prefix", ""))) == os.path.realpath(sys.prefix)
    if isinstance(owners, dict) and not same:  # this Python's own owners are add_clashes'
        seen = ownership.Owners(owners.get("package", {}), owners.get("command", {}))
        for clash in ownership.clashes(seen, python, "Hermes' Python"):
            report.problems.append(clash.problem)
            report.fixes.append(clash.fix)
    theirs = found["hermes_memory"]
    if theirs.get("version") != report.version:
        report.problems.append(
            f"Hermes' Python has hermes-memory {theirs.get('version')} ({theirs.get('file')}), "
            f"this one is {report.version}"
        )
        report.fixes.append(fix)
    modules = found.get("modules", {})
    missing = sorted({NEEDS[m] for m in needed if not modules.get(m, False)})
    if missing:
        report.problems.append(f"Hermes' Python lacks packages the configuration needs: {', '.join(missing)}")
        report.fixes.append(fix)


def render(report: StatusReport) -> str:
    """The human-readable status, one fact per line, then problems with their fixes."""
    yes = "yes"
    lines = [
        f"hermes-memory {report.version} (this Python: {report.this_python})",
        f"HERMES_HOME:     {report.hermes_home}",
        f"plugin:          {_plugin_line(report)}",
        f"skill:           {yes if report.skill_installed else 'no'} ({install.SKILL_NAME})",
        f"active:          {yes if report.configured_provider == PROVIDER_NAME else 'no'} "
        f"(memory.provider: {report.configured_provider or '-'})",
        f"settings:        {report.settings_file}"
        + ("" if Path(report.settings_file).exists() else " (not present: defaults)"),
        f"memory store:    {report.database or '-'}" + (" (exists)" if report.database_exists else ""),
        f"embedder:        {report.embedder or '-'}",
        f"vector store:    {report.vector_backend or '-'}{_owner_text(report.vector_owner)}",
        f"vector search:   {report.vector_search or '-'}",
        f"pending:         {_pending_text(report.pending)}",
        *(f"queues:          {line}" for line in report.queues[:1]),
        *(f"                 {line}" for line in report.queues[1:]),
        *(f"maintenance:     {line}" for line in report.maintenance[:1]),
        *(f"                 {line}" for line in report.maintenance[1:]),
        *(f"people:          {line}" for line in report.people[:1]),
        *(f"                 {line}" for line in report.people[1:]),
        f"Hermes command:  {report.hermes_command or '-'}",
        f"Hermes Python:   {report.hermes_python or 'not found'}",
    ]
    if report.probe.get("hermes_memory"):
        info = report.probe["hermes_memory"]
        lines.append(f"import check:    ok (hermes_memory {info.get('version')} from {info.get('file')})")
    if report.ok:
        lines.append("status:          ok, Hermes will load the nextlevel provider")
        return "\n".join(lines)
    lines.append("problems:")
    for problem, fix in zip(report.problems, report.fixes, strict=True):
        lines.append(f"  - {problem}")
        lines.append(f"    fix: {fix}")
    return "\n".join(lines)


def _owner_text(owner: int | None) -> str:
    if owner is None:
        return ""
    who = busy_words(f"pid {owner}" if owner else "")
    return (
        f" — open elsewhere: {who}; other processes on this home search the stored vectors exactly "
        "(the same hits, no index)"
    )


def _pending_text(pending: dict[str, int | None]) -> str:
    if not pending:
        return "-"

    def count(key: str) -> str:
        value = pending.get(key)
        return "?" if value is None else str(value)

    text = (
        f"{count('turns_to_ingest')} turn(s) waiting to be ingested, {count('embeddings')} embedding(s) "
        "(each Hermes process writes them in small steps while it runs and as it exits; "
        "`hermes-memory maintain` writes them now)"
    )
    behind = pending.get("turns_behind")
    if behind:
        text += (
            f"\n                 meaning search is behind: {behind} stored turn(s) not yet searchable by "
            "meaning (keyword search finds them)"
        )
    return text


def _plugin_line(report: StatusReport) -> str:
    path = report.hermes_home / "plugins" / PROVIDER_NAME
    if not report.plugin_installed:
        return "not installed"
    return f"installed at {path}" + ("" if report.plugin_ours else " (NOT written by hermes-memory)")


__all__ = [
    "StatusReport",
    "StoreState",
    "check_interpreter",
    "collect",
    "find_hermes_python",
    "maintenance_lines",
    "pending_counts",
    "probe",
    "render",
    "store_state",
]
