"""Hostile input (issue 7): generated strings, numbers, nested JSON and oversized values go through every
public MemoryAPI method, every tool action (the provider's ``handle_tool_call``) and every MCP tool.
The only outcomes allowed are a result or a typed error — never a raw exception, a hang or a partial
write (a failed call leaves every Tier 2 table, every vector collection and the curated files as they
were). New public methods cannot skip this: each must have a strategy here or a stated reason not to.

The number of generated inputs is printed as ``HOSTILE_INPUTS=<n>`` when the module finishes (and
written to ``hostile_inputs.txt`` in pytest's base temp directory)."""

from __future__ import annotations

import inspect
import json
import math
import reprlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import FAST_PROVIDER_YAML
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy
from seed_memory import seed_knowledge

import hermes_memory.errors as errors
from hermes_memory.api import MemoryAPI
from hermes_memory.hermes import registry, schemas
from hermes_memory.hermes.provider import NextLevelProvider

CALL_TIMEOUT_S = 60.0
API_EXAMPLES = 50
TOOL_EXAMPLES = 300
MCP_EXAMPLES = 120
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
ERROR_CODES = {
    cls.code
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, errors.HermesMemoryError)
}
# Public members that return no envelope; each needs a reason.
NOT_ENVELOPES = {
    "close": "lifecycle: ends the store the whole module shares",
    "wait_closed": "lifecycle: a timeout in seconds; waits for close to finish",
    "enabled_tiers": "takes no input; a plain list",
    "knowledge_graph": "takes no input; the graph object itself",
    "maintenance_context": "takes no input; the stores for a Scheduler",
    "tier2": "property: the Tier 2 stores",
    "core": "property: the composed core (records, no envelopes)",
}
_SETTINGS = settings(
    max_examples=API_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@dataclass
class Counter:
    inputs: int = 0
    by_surface: dict[str, int] = field(default_factory=dict)

    def add(self, surface: str) -> None:
        self.inputs += 1
        self.by_surface[surface] = self.by_surface.get(surface, 0) + 1


COUNT = Counter()


# -- hostile values ----------------------------------------------------------------------------------
_WEIRD = [
    "",
    " ",
    "\t\n\r ",
    "\x00",
    "nul\x00inside",
    "\u200b\u200c\u200d\ufeff",
    "\u202eevil\u202c",
    "שלום עולם مرحبا",
    "\U000e0041\U000e0042 tags",
    "𝕳𝖊𝖗𝖒𝖊𝖘 ｆｕｌｌｗｉｄｔｈ",
    "e\u0301\u0301\u0301\u0301",
    "%s %d {0} {} ${HOME} $(id) `id`",
    "'; DROP TABLE facts; --",
    'NEAR("a" "b") OR x* AND NOT -y "unbalanced',
    "../../etc/passwd",
    "\ud800 lone surrogate",
    "\udcff",
    "\u2028\u2029\x85",
    "fact:",
    "entity:",
    "null",
    "NaN",
    "-0",
    "1e308",
    "9" * 400,
    "2025-02-30",
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59+14:00",
]
LENGTHS = st.integers(1, 100_000)
TEXT = st.one_of(
    st.text(max_size=60),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=30),
    st.sampled_from(_WEIRD),
    st.builds(lambda ch, n: ch * n, st.sampled_from(["a", "é", "\u200b", " ", "漢", "🙂", "x "]), LENGTHS),
)
INTS = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([2**31, 2**63, 2**64, -(2**63) - 1, 10**30, -(10**30)]),
    st.integers(),
)
FLOATS = st.one_of(
    st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, -1e308, 5e-324, 1.7e308]),
)
SCALARS = st.one_of(TEXT, INTS, FLOATS, st.none(), st.booleans(), st.binary(max_size=20))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), INTS, FLOATS, st.text(max_size=20)),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=40,
)


@dataclass(frozen=True)
class Deep:
    """Stands for a value nested ``depth`` levels deep; built just before the call (``materialise``),
    because hypothesis' own printer recurses and would fail on the real thing."""

    depth: int

    def build(self) -> Any:
        value: Any = "bottom"
        for i in range(self.depth):
            value = {"k": value} if i % 2 else [value]
        return value


def materialise(value: Any) -> Any:
    if isinstance(value, Deep):
        return value.build()
    if isinstance(value, dict):
        return {k: materialise(item) for k, item in value.items()}
    if isinstance(value, list):
        return [materialise(item) for item in value]
    if isinstance(value, tuple):
        return tuple(materialise(item) for item in value)
    return value


DEEP = st.integers(1, 5000).map(Deep)
WIDE = st.integers(1, 20_000).map(lambda n: {f"k{i}": i for i in range(n)})
HOSTILE = st.one_of(SCALARS, JSON, DEEP, WIDE, st.lists(TEXT, max_size=5), st.just(object()))


# -- valid-ish values per parameter kind ---------------------------------------------------------------
SENTENCES = st.sampled_from(
    [
        "Maya works at Nordlicht Labs.",
        "Atlas stores routes in Postgres.",
        "The deploy failed on Friday.",
        "Tom moved to Lisbon last year.",
    ]
)
NAME = st.sampled_from(["Maya", "Atlas", "Maya Okafor", "Nordlicht", "Nobody Known"])
VALID: dict[str, SearchStrategy[Any]] = {
    "text": st.one_of(SENTENCES, st.text(min_size=1, max_size=80)),
    "name": st.one_of(NAME, st.text(min_size=1, max_size=30)),
    "opt_text": st.one_of(st.none(), SENTENCES),
    "unit": st.floats(0.0, 1.0),
    "limit": st.integers(1, 50),
    "opt_limit": st.one_of(st.none(), st.integers(1, 50)),  # beside another limit: both given is refused
    "time": st.floats(0.0, 2_000_000_000.0),
    "opt_time": st.one_of(st.none(), st.floats(0.0, 2_000_000_000.0)),
    "bool": st.booleans(),
    "store": st.sampled_from(["memory", "user"]),
    "curated_action": st.sampled_from(["add", "replace", "remove"]),
    "category": st.sampled_from(["general", "user", "project", "preference"]),
    "opt_category": st.sampled_from([None, "general", "project"]),
    "source": st.sampled_from(["user", "tool", "session"]),
    "entity_type": st.sampled_from(["person", "project", "org", "other"]),
    "opt_entity_type": st.sampled_from([None, "person", "project"]),
    "event_type": st.sampled_from(["milestone", "event", "decision"]),
    "opt_event_type": st.sampled_from([None, "milestone", "event"]),
    "uuid": st.one_of(st.uuids().map(str), st.sampled_from(["fact:x", "none"])),
    "tiers": st.one_of(st.none(), st.lists(st.sampled_from(["tier1", "tier2", "tier3", "graph"]))),
    "names": st.lists(NAME, min_size=1, max_size=3),
    "opt_names": st.one_of(st.none(), st.lists(NAME, max_size=3)),
    "metadata": st.one_of(st.none(), st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)),
    "progress": st.sampled_from([None, lambda *args: None]),
    "job": st.sampled_from([None, "consolidate", "prune", "embed_queue", "graph_refresh"]),
    "algorithm": st.sampled_from([None, "degree", "pagerank"]),
    "depth": st.integers(0, 4),
    "message_id": st.one_of(st.none(), st.integers(0, 100)),
    "role": st.sampled_from(["user", "assistant"]),
    "when": st.one_of(st.none(), st.floats(0.0, 2e9), st.sampled_from(["2024-05-01", "2024-05-01T10:00Z"])),
    "filters": st.one_of(st.none(), st.just({"source_type": "session"}), st.just({"session_id": "s1"})),
    "timeout": st.sampled_from([None, 0.5, 2.0]),
    "items": st.lists(
        st.one_of(
            st.fixed_dictionaries({"text": SENTENCES}, optional={"speaker": NAME, "time": st.floats(0, 2e9)}),
            st.fixed_dictionaries({"user": SENTENCES}, optional={"assistant": SENTENCES, "turn_id": NAME}),
        ),
        min_size=1,
        max_size=4,
    ),
    "point": st.one_of(st.none(), st.floats(0.0, 2e9), st.sampled_from(["2023-05-08", "2023-05-08T13:56"])),
    "as_of": st.one_of(
        st.none(),
        st.floats(0.0, 2e9),
        st.fixed_dictionaries({}, optional={"valid": st.floats(0.0, 2e9), "known": st.floats(0.0, 2e9)}),
    ),
    "max_hops": st.integers(1, 6),
    "fields": st.dictionaries(
        st.sampled_from(["content", "category", "confidence", "importance", "expires_at", "valid_from"]),
        st.one_of(SENTENCES, st.floats(0, 1)),
        max_size=3,
    ),
}


def _path_kind(tmp: Path) -> SearchStrategy[Any]:
    # Writes (backup, export) must land in the test's directory, never in the repo or elsewhere.
    return st.one_of(
        st.none(),
        st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=12).map(
            lambda name: str(tmp / "out" / name)
        ),
    )


# method -> {parameter: kind}; kinds index VALID (or "path"/"doc", bound per store).
METHODS: dict[str, dict[str, str]] = {
    "add": {"contents": "text", "category": "category", "source_id": "opt_text", "update_core": "bool"},
    "as_of": {"valid": "point", "known": "point", "subject": "name", "query": "opt_text", "limit": "limit"},
    "assert_fact": {"subject": "name", "predicate": "name", "object": "name", "valid_from": "point",
                    "valid_to": "point", "category": "opt_category", "confidence": "unit", "source": "source",
                    "source_id": "opt_text", "importance": "unit"},
    "audit_log": {"limit": "limit", "target_uuid": "uuid"},
    "backup": {"dest": "path"},
    "consolidate": {"now": "opt_time"},
    "contradictions": {"limit": "limit"},
    "compress": {"session_id": "opt_text", "before": "point", "batch_size": "limit", "limit": "limit"},
    "core_memory": {},
    "core_memory_update": {"candidates": "opt_names"},
    "curated_add": {"content": "text", "store": "store"},
    "curated_entries": {"store": "store"},
    "curated_get": {"store": "store"},
    "curated_remove": {"substring": "text", "store": "store"},
    "curated_replace": {"old": "text", "new": "text", "store": "store"},
    "curated_snapshot": {},
    "doctor": {"repair": "bool", "progress": "progress"},
    "embed_pending": {"max_items": "limit", "progress": "progress"},
    "end_session": {"session_id": "name"},
    "entity_ensure": {"name": "name", "entity_type": "entity_type", "aliases": "opt_names",
                      "description": "opt_text"},
    "entity_link": {"from_name": "name", "to_name": "name", "relation": "name", "strength": "unit",
                    "evidence_fact_id": "opt_text"},
    "entity_query": {"name": "name", "entity_type": "opt_entity_type", "limit": "limit"},
    "export_json": {"path": "path"},
    "curated_migrate": {"force": "bool"},
    "fact_correct": {"uuid": "uuid", "text": "text", "reason": "text", "actor": "opt_text"},
    "fact_delete": {"uuid": "uuid", "soft": "bool"},
    "fact_get": {"uuid": "uuid"},
    "fact_history": {"subject": "name", "as_of": "as_of"},
    "fact_query": {"query": "opt_text", "category": "opt_category", "limit": "limit",
                   "min_confidence": "unit", "as_of": "as_of"},
    "fact_store": {"content": "text", "category": "category", "confidence": "unit", "source": "source",
                   "source_id": "opt_text", "expires_at": "opt_time", "ttl_days": "opt_time",
                   "importance": "unit", "subject": "opt_text", "predicate": "opt_text",
                   "object": "opt_text"},
    "fact_update": {"uuid": "uuid", "**fields": "fields"},
    "flush": {"timeout": "timeout"},
    "forget": {"id": "uuid", "confirm": "bool", "include_related": "bool", "confirm_large": "bool"},
    "forget_entity": {"name": "name", "confirm": "bool", "include_related": "bool", "confirm_large": "bool"},
    "finish_erasures": {},
    "get_latest": {"count": "limit", "begin": "opt_time"},
    "graph_central_entities": {"limit": "limit", "algorithm": "algorithm"},
    "latest": {"begin": "limit", "count": "limit"},
    "graph_communities": {},
    "graph_rebuild": {},
    "graph_shortest_path": {"from_entity": "name", "to_entity": "name"},
    "graph_spread": {"seeds": "names", "max_hops": "max_hops"},
    "graph_traverse": {"start_entity": "name", "depth": "depth", "relation_filter": "opt_text"},
    "import_json": {"data": "doc", "merge": "bool"},
    "ingest_pending": {"timeout": "timeout"},
    "list_agents": {},
    "maintain": {"job": "job", "progress": "progress", "now": "opt_time"},
    "maintain_due": {"progress": "progress", "now": "opt_time"},
    "maintenance_runs": {"limit": "limit", "job": "job"},
    "maintenance_status": {"now": "opt_time"},
    "mirror_curated_write": {"action": "curated_action", "store": "store", "content": "text",
                             "old_text": "opt_text", "speaker": "opt_text", "source_id": "opt_text"},
    "observe_many": {"items": "items", "session_id": "name"},
    "pending": {},
    "prune": {"now": "opt_time"},
    "recall": {"query": "text", "tiers": "tiers", "limit": "limit", "as_of": "as_of",
               "budget_tokens": "limit", "session_id": "opt_text", "limit_per_tier": "opt_limit"},
    "reconstruct": {"query": "text", "memories": "opt_names", "limit": "limit", "tiers": "tiers",
                    "as_of": "opt_time", "session_id": "opt_text"},
    "reflect": {"session_id": "opt_text", "limit": "limit"},
    "reindex": {"progress": "progress"},
    "remember_message": {"text": "text", "session_id": "name", "time_": "when", "role": "role",
                         "speaker": "opt_text", "metadata": "metadata", "turn_id": "opt_text"},
    "remember_turn": {"user": "opt_text", "assistant": "opt_text", "session_id": "name", "time_": "when",
                      "user_name": "opt_text", "assistant_name": "opt_text", "metadata": "metadata",
                      "turn_id": "opt_text"},
    "restore": {"src": "path", "force": "bool", "profile": "opt_text"},
    "semantic_hybrid": {"query": "text", "limit": "limit"},
    "semantic_index": {"text": "text", "source_type": "source", "session_id": "opt_text",
                       "message_id": "message_id", "category": "opt_category", "timestamp": "opt_time",
                       "wait": "bool"},
    "semantic_search": {"query": "text", "limit": "limit", "min_score": "unit", "filters": "filters"},
    "stats": {},
    "timeline": {"entity": "name", "limit": "limit"},
    "timeline_add": {"event_type": "event_type", "title": "text", "description": "opt_text",
                     "importance": "unit", "related_entities": "opt_names", "timestamp": "opt_time",
                     "session_id": "opt_text"},
    "timeline_query": {"start": "opt_time", "end": "opt_time", "event_type": "opt_event_type",
                       "limit": "limit", "entity": "name"},
    "why": {"fact_uuid": "uuid"},
    "working_memory": {"session_id": "name"},
}  # fmt: skip


# -- the store and its invariants ----------------------------------------------------------------------
@dataclass
class Store:
    api: MemoryAPI
    home: Path
    tmp: Path
    doc: dict[str, Any]


def _seed(api: MemoryAPI) -> None:
    seed_knowledge(api)
    api.remember_turn("I moved to Lisbon last May.", "Noted, Lisbon.", "s1", 1_700_000_100.0)
    api.flush(timeout=30)


def _report(request: pytest.FixtureRequest, base: Path) -> None:
    line = f"HOSTILE_INPUTS={COUNT.inputs} " + json.dumps(COUNT.by_surface, sort_keys=True)
    (base / "hostile_inputs.txt").write_text(line + "\n", encoding="utf-8")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():  # shown even without -s
        reporter.write_line(line)


@pytest.fixture(scope="module", autouse=True)
def in_scratch_dir(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[None]:
    """Relative paths among the generated values (backup, export) land in a scratch directory."""
    request.addfinalizer(lambda: _report(request, tmp_path_factory.getbasetemp()))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("hostile-cwd"))
        yield


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    home = tmp_path_factory.mktemp("hostile-home")
    tmp = tmp_path_factory.mktemp("hostile-out")
    api = MemoryAPI(hermes_home=home, background=False, **HASHING)
    _seed(api)
    doc = api.export_json()["data"]
    yield Store(api, home, tmp, doc)
    api.close()


def snapshot(api: MemoryAPI, home: Path) -> dict[str, Any]:
    """Everything a failed call could have half-written: row counts of every Tier 2 table, vector
    counts per collection, the curated files and the core memory file."""
    db = api.tier2.db
    tables = [r[0] for r in db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    counts = {t: db.query(f'SELECT COUNT(*) FROM "{t}"')[0][0] for t in tables}
    vectors = {k: v for k, v in api.stats()["data"].get("tier3", {}).items() if isinstance(v, int)}
    files = {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.suffix in
             (".md", ".json") and p.is_file()}  # fmt: skip
    return {"tables": counts, "vectors": vectors, "files": files}


def call_bounded(fn: Callable[[], Any], timeout: float = CALL_TIMEOUT_S) -> Any:
    """Run ``fn`` in a thread; a hang fails the test, an exception is re-raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread, below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"call did not return within {timeout} s (hang)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def assert_envelope(result: Any, what: str) -> None:
    assert isinstance(result, dict), f"{what}: returned {type(result).__name__}, not an envelope"
    assert set(result) == {"success", "data", "tier", "meta", "error"}, what
    if not result["success"]:
        error_type = result["meta"].get("error_type")
        assert error_type in ERROR_CODES, f"{what}: error_type {error_type!r} is not a HermesMemoryError"
        assert isinstance(result["error"], str) and result["error"], what


# -- argument generation -------------------------------------------------------------------------------
def _strategy(kind: str, store: Store) -> SearchStrategy[Any]:
    if kind == "path":
        return _path_kind(store.tmp)
    if kind == "doc":
        return st.one_of(st.just(store.doc), _mutated_doc(store.doc))
    return VALID[kind]


def _mutated_doc(doc: dict[str, Any]) -> SearchStrategy[Any]:
    """The store's own export with one value somewhere replaced by a hostile one."""

    @st.composite
    def build(draw: DrawFn) -> Any:
        copy = json.loads(json.dumps(doc))
        node: Any = copy
        for _ in range(draw(st.integers(0, 5))):
            if isinstance(node, dict) and node:
                key = draw(st.sampled_from(sorted(node)))
                if not isinstance(node[key], dict | list) or not node[key]:
                    node[key] = draw(HOSTILE)
                    return copy
                node = node[key]
            elif isinstance(node, list) and node:
                index = draw(st.integers(0, len(node) - 1))
                if not isinstance(node[index], dict | list) or not node[index]:
                    node[index] = draw(HOSTILE)
                    return copy
                node = node[index]
        if isinstance(node, dict):
            node[draw(st.text(max_size=8))] = draw(HOSTILE)
        elif isinstance(node, list):
            node.append(draw(HOSTILE))
        return copy

    return build()


@st.composite
def arguments(draw: DrawFn, params: Mapping[str, str], store: Store) -> dict[str, Any]:
    """Keyword arguments: all valid-ish, one bad, all bad, or each one a coin flip; optional ones may
    be left out."""
    names = list(params)
    mode = draw(st.sampled_from(["valid", "one_bad", "all_bad", "mixed"]))
    bad = set()
    if names and mode == "one_bad":
        bad = {draw(st.sampled_from(names))}
    elif mode == "all_bad":
        bad = set(names)
    elif mode == "mixed":
        bad = {n for n in names if draw(st.booleans())}
    kwargs: dict[str, Any] = {}
    for name in names:
        if name not in bad and draw(st.integers(0, 4)) == 0:
            continue  # use the default (a required one missing is a TypeError we do not count: see call)
        kwargs[name] = draw(HOSTILE if name in bad else _strategy(params[name], store))
    if "**fields" in kwargs:
        fields = kwargs.pop("**fields")
        if isinstance(fields, dict) and all(isinstance(k, str) for k in fields):
            kwargs.update(fields)
        else:
            kwargs["content"] = fields
    return kwargs


def _required(method: Callable[..., Any]) -> set[str]:
    return {
        p.name
        for p in inspect.signature(method).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


# -- MemoryAPI -------------------------------------------------------------------------------------------
def _public_members() -> set[str]:
    return {name for name, _ in inspect.getmembers(MemoryAPI) if not name.startswith("_")}


def test_every_public_method_has_a_strategy_or_a_reason() -> None:
    public = _public_members()
    missing = sorted(public - set(METHODS) - set(NOT_ENVELOPES))
    assert not missing, f"public MemoryAPI members without a hostile-input strategy: {missing}"
    stale = sorted((set(METHODS) | set(NOT_ENVELOPES)) - public)
    assert not stale, f"strategies for members that no longer exist: {stale}"
    for name, params in METHODS.items():
        accepted = set(inspect.signature(getattr(MemoryAPI, name)).parameters) - {"self"}
        unknown = {p for p in params if not p.startswith("**")} - accepted
        assert not unknown, f"{name}: strategy names parameters it does not take: {unknown}"


# Parameters naming a file or directory: generated absolute paths are made relative (to the scratch cwd).
PATH_PARAMS = {("backup", "dest"), ("export_json", "path"), ("restore", "src"), ("import_json", "data")}


def _contained(value: Any) -> Any:
    if isinstance(value, str) and (value.startswith(("/", "~")) or ".." in value):
        return "p" + value.replace("..", "__")
    return value


def _run_method(store: Store, name: str, kwargs: dict[str, Any]) -> None:
    method = getattr(store.api, name)
    kwargs = {k: _contained(v) if (name, k) in PATH_PARAMS else v for k, v in kwargs.items()}
    if name == "restore":
        kwargs = {**kwargs, "hermes_home": store.tmp / "restore-home"}  # never the real ~/.hermes
    if not _required(method) <= set(kwargs):
        kwargs = {**kwargs, **{r: "x" for r in _required(method) - set(kwargs)}}
    kwargs = materialise(kwargs)
    COUNT.add("api")
    before = snapshot(store.api, store.home)
    result = call_bounded(lambda: method(**kwargs))
    what = f"{name}(**{_short(kwargs)})"
    assert_envelope(result, what)
    if not result["success"]:
        assert snapshot(store.api, store.home) == before, f"{what} failed but changed the store"


def _short(value: Any) -> str:
    return reprlib.repr(value)  # bounded depth and length: the values may nest thousands deep


@pytest.mark.parametrize("name", sorted(METHODS))
def test_memory_api_method_survives_hostile_input(store: Store, name: str) -> None:
    params = METHODS[name]

    @_SETTINGS
    @given(arguments(params, store))
    def check(kwargs: dict[str, Any]) -> None:
        _run_method(store, name, kwargs)

    check()


# -- the Hermes tools through the provider -----------------------------------------------------------------


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NextLevelProvider]:
    home = tmp_path_factory.mktemp("hostile-hermes")
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    made = NextLevelProvider()
    made.initialize("s-hostile", hermes_home=str(home), platform="cli", agent_identity="default")
    shared = registry.find(str(home), "default")
    assert shared is not None
    _seed(shared.api)
    yield made
    made.shutdown()


_SCHEMAS = {s["name"]: s["parameters"]["properties"] for s in schemas.tool_schemas()}


def _schema_value(prop: Mapping[str, Any]) -> SearchStrategy[Any]:
    if "enum" in prop:
        return st.sampled_from(list(prop["enum"]))
    kind = prop.get("type")
    if kind == "integer":
        return st.integers(1, 20)
    if kind == "number":
        return st.floats(0.0, 1.0)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        item = prop.get("items", {})
        return st.lists(st.sampled_from(item["enum"]) if "enum" in item else NAME, max_size=3)
    return st.one_of(SENTENCES, NAME, st.uuids().map(str))


@st.composite
def tool_calls(draw: DrawFn) -> tuple[Any, Any]:
    name = draw(st.one_of(st.sampled_from(sorted(_SCHEMAS)), st.just("nextlevel_memory"), TEXT))
    props = _SCHEMAS.get(name, _SCHEMAS["nextlevel_memory"])
    args: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(props)), max_size=6, unique=True)):
        args[key] = draw(st.one_of(_schema_value(props[key]), HOSTILE) if draw(st.booleans())
                         else _schema_value(props[key]))  # fmt: skip
    if name == "nextlevel_memory" and draw(st.integers(0, 5)) > 0:
        args["action"] = draw(_schema_value(props["action"]))
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=10))] = draw(HOSTILE)
    whole = draw(st.one_of(st.just(args), HOSTILE)) if draw(st.integers(0, 14)) == 0 else args
    return name, whole


def test_every_tool_action_survives_hostile_arguments(provider: NextLevelProvider) -> None:
    shared = provider._store()
    assert shared is not None
    api = shared.api
    home = Path(api.config.db_path).parents[2]

    @settings(max_examples=TOOL_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(tool_calls())
    def check(call: tuple[Any, Any]) -> None:
        name, args = materialise(call)
        COUNT.add("tools")
        # The provider's worker drains in the background; let it settle so the counts are stable.
        assert api.flush(timeout=30)["data"]["drained"]
        before = snapshot(api, home)
        out = call_bounded(lambda: provider.handle_tool_call(name, args))
        assert isinstance(out, str), f"{name}: result is not a JSON string"
        decoded = json.loads(out)
        assert isinstance(decoded, dict), f"{name}({_short(args)}): result is not a JSON object"
        if "error" in decoded:
            assert isinstance(decoded["error"], str) and decoded["error"]
            assert decoded.get("error_type") in ERROR_CODES | {"unavailable"}, decoded
            assert api.flush(timeout=30)["data"]["drained"]
            assert snapshot(api, home) == before, f"{name}({_short(args)}) failed but changed the store"

    check()


# -- the MCP server's tools, called in process -------------------------------------------------------------
_MCP_PARAMS: dict[str, dict[str, str]] = {
    "recall": {"query": "text", "limit": "limit", "tiers": "tiers", "as_of": "opt_time",
              "limit_per_tier": "opt_limit", "valid_at": "point"},
    "observe_many": {"items": "items", "session_id": "name"},
    "assert_fact": {"subject": "name", "predicate": "name", "object": "name", "valid_from": "point",
                    "valid_to": "point", "confidence": "unit"},
    "as_of": {"valid": "point", "known": "point", "subject": "name", "query": "opt_text", "limit": "limit"},
    "list_agents": {},
    "reflect": {"session_id": "opt_text", "limit": "limit"},
    "remember": {"text": "text", "session_id": "name", "speaker": "opt_text", "role": "role", "time": "when"},
    "timeline": {"entity": "name", "limit": "limit"},
    "timeline_query": {"start": "opt_time", "end": "opt_time", "event_type": "opt_event_type",
                       "entity": "name", "limit": "limit"},
    "why": {"fact_uuid": "uuid"},
    "fact_query": {"query": "opt_text", "limit": "limit", "as_of": "opt_time"},
    "forget": {
        "id": "uuid", "entity": "name", "confirm": "bool", "include_related": "bool", "confirm_large": "bool"
    },
    "stats": {},
    "core_memory": {},
}  # fmt: skip


# Importing the MCP SDK makes pydantic-settings warn about its own model; not ours to fix.
@pytest.mark.filterwarnings("ignore::pydantic_settings.exceptions.IncompleteFieldDefinitionWarning")
def test_mcp_tools_survive_hostile_arguments(store: Store) -> None:
    pytest.importorskip("mcp")
    from mcp.server.fastmcp.exceptions import ToolError

    from hermes_memory.mcp_server import TOOL_NAMES, build_server

    server = build_server(store.api)
    functions = {tool.name: tool.fn for tool in server._tool_manager.list_tools()}
    assert set(functions) == set(TOOL_NAMES) == set(_MCP_PARAMS)

    @st.composite
    def mcp_calls(draw: DrawFn) -> tuple[str, dict[str, Any]]:
        name = draw(st.sampled_from(sorted(_MCP_PARAMS)))
        return name, draw(arguments(_MCP_PARAMS[name], store))

    @settings(max_examples=MCP_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(mcp_calls())
    def check(call: tuple[str, dict[str, Any]]) -> None:
        name, kwargs = materialise(call)
        fn = functions[name]
        if not _required(fn) <= set(kwargs):
            kwargs = {**kwargs, **{r: "x" for r in _required(fn) - set(kwargs)}}
        COUNT.add("mcp")
        before = snapshot(store.api, store.home)
        try:
            out = call_bounded(lambda: fn(**kwargs))
        except ToolError as exc:
            assert str(exc), name
            assert "Traceback" not in str(exc)
            assert snapshot(store.api, store.home) == before, f"{name}({_short(kwargs)}) changed the store"
            return
        json.dumps(out, allow_nan=False)  # plain JSON values only

    check()
