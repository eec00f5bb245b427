"""Scopes enforced in the storage layer: ScopeView, the ``scope`` config section, Tier 2 stores bound
to a view (reads filtered, lookups by uuid "not found" outside it, writes in it), the admin view of
maintenance, per-view graph and core-memory files, the turn queue, and the Hermes provider's scope
(``scope.name``, ``user:<user_id>`` with ``scope.per_user``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.audience import Identity
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError, NotFoundError, StorageError, ValidationError
from hermes_memory.graph.service import view_directory
from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.ingest.turns import episode_uuid
from hermes_memory.records import TurnPayload
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.tier2 import Tier2

FAST: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


# -- ScopeView ------------------------------------------------------------------------------------------
def test_private_and_shared_views() -> None:
    private = ScopeView.of("agent-a")
    assert (private.own, private.fact_scope, private.readable) == ("agent-a", "agent-a", ("agent-a",))
    shared = ScopeView.of("agent-a", facts="shared", shared_pool="team")
    assert (shared.own, shared.fact_scope, shared.readable) == ("agent-a", "team", ("agent-a", "team"))
    assert ScopeView.default() == ScopeView.of("default")
    assert shared.where("f.scope") == ("f.scope IN (?, ?)", ["agent-a", "team"])
    assert shared.can_read("team") and not shared.can_read("agent-b")


@pytest.mark.parametrize("bad", ["", "   ", "a" * 101, "tab\there", "nl\n", "nul\x00", "bell\x07", 7, None])
def test_bad_scope_names_are_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        check_scope_name(bad)
    with pytest.raises(ValidationError):
        ScopeView.of(bad)  # type: ignore[arg-type]


def test_shared_pool_must_be_valid_and_distinct() -> None:
    with pytest.raises(ValidationError, match="differ"):
        ScopeView.of("team", facts="shared", shared_pool="team")
    with pytest.raises(ValidationError):
        ScopeView.of("a", facts="public")
    assert check_scope_name("user:42 ünïcode") == "user:42 ünïcode"


def test_view_keys_name_readable_sets() -> None:
    assert ScopeView.default().key == "" and ScopeView.all().key == ""
    a, b = ScopeView.of("a"), ScopeView.of("b")
    assert a.key != b.key and len(a.key) == 12
    # the same readable set (in any order) is the same graph
    one = ScopeView.of("x", facts="shared", shared_pool="y")
    two = ScopeView.of("y", facts="shared", shared_pool="x")
    assert one.key == two.key != ScopeView.of("x").key


def test_the_admin_view_reads_everything_and_creates_nothing() -> None:
    admin = ScopeView.all()
    assert admin.admin and admin.where("scope") == ("1 = 1", []) and admin.can_read("anything")
    with pytest.raises(StorageError, match="admin"):
        _ = admin.write_own
    with pytest.raises(StorageError, match="admin"):
        _ = admin.write_facts


# -- config ---------------------------------------------------------------------------------------------
def test_scope_config_defaults_keep_todays_behaviour(tmp_path: Path) -> None:
    cfg = load_config(hermes_home=tmp_path)  # people private (per_user), the local agent unchanged
    assert (cfg.scope.name, cfg.scope.facts, cfg.scope.shared_pool, cfg.scope.per_user) == (
        "default", "private", "shared", True
    )
    with MemoryAPI(cfg) as api:
        assert api.view == ScopeView.default() and api.scope == "default"
        fact = api.fact_store("Plain single-agent memory")["data"]
        assert fact["scope"] == "default"
        assert api.tier2.db.query_one("SELECT scope FROM facts")[0] == "default"  # type: ignore[index]


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"scope.facts": "public"}, "scope.facts"),
        ({"scope.name": ""}, "scope.name"),
        ({"scope.name": "x" * 101}, "scope.name"),
        ({"scope.shared_pool": "bad\x01pool"}, "scope.shared_pool"),
        ({"scope.per_user": "yes"}, "scope.per_user"),
        ({"scope.colour": "blue"}, "scope.colour"),
        ({"scope.facts": "shared", "scope.name": "pool", "scope.shared_pool": "pool"}, "scope.shared_pool"),
    ],
)
def test_bad_scope_config_names_the_key(tmp_path: Path, override: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(hermes_home=tmp_path, **override)


def test_the_constructor_scope_overrides_the_config(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, scope="agent-x", **{"scope.name": "agent-y", **FAST}) as api:
        assert api.view == ScopeView.of("agent-x")
    with pytest.raises(ValidationError, match="scope"):  # an argument: input, not configuration
        MemoryAPI(hermes_home=tmp_path, scope="bad\nname")


# -- Tier 2 bound to a view -----------------------------------------------------------------------------
@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Tier2, Tier2]]:
    a = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("a"))
    b = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("b"))
    yield a, b
    b.close()
    a.close()


def test_store_methods_cannot_be_pointed_at_another_scope(two: tuple[Tier2, Tier2]) -> None:
    a, b = two
    fact = a.facts.store("Quentin hides the key", subject="Quentin", predicate="hides", object="key").fact
    ent = a.entities.ensure("Quentin", "person", aliases=["Q"]).entity
    other = a.entities.ensure("Lisbon", "place").entity
    rel, _ = a.relations.link(ent.uuid, other.uuid, "lives_in", evidence_fact_id=fact.uuid)
    event = a.timeline.add("event", "Quentin moved", related_entities=[ent.uuid])
    with a.db.atomic() as conn:
        episode = a.episodes.add(conn, session_id="s", role="user", text="Quentin here", timestamp=1.0)
    assert (fact.scope, episode.scope) == ("a", "a")
    for lookup in (
        lambda: b.facts.get(fact.uuid),
        lambda: b.facts.update(fact.uuid, confidence=0.1),
        lambda: b.facts.delete(fact.uuid),
        lambda: b.entities.get(ent.uuid),
        lambda: b.entities.resolve(ent.uuid),
        lambda: b.entities.resolve("Quentin"),
        lambda: b.entities.delete(ent.uuid),
        lambda: b.relations.get(rel.uuid),
        lambda: b.relations.delete(rel.uuid),
        lambda: b.relations.link(ent.uuid, other.uuid, "knows"),
        lambda: b.timeline.get(event.uuid),
        lambda: b.episodes.get(episode.uuid),
    ):
        with pytest.raises(NotFoundError):
            lookup()
    assert b.facts.query("Quentin") == [] and b.facts.history("Quentin") == []
    assert b.facts.get_many([fact.uuid]) == {} and b.facts.active_uuids([fact.uuid]) == set()
    assert b.facts.about_entity(ent.uuid) == [] and b.entities.find("Q") == []
    assert b.relations.for_entity(ent.uuid) == [] and b.timeline.query() == []
    assert b.episodes.search("Quentin") == [] and b.episodes.latest() == []
    assert b.episodes.ids_for([episode.uuid]) == {} and b.episodes.speakers() == []
    assert b.audit.entries(limit=1000) == [] and b.audit.count() == 0
    assert b.stats()["facts"] == b.stats()["entities"] == b.stats()["episodes"] == 0
    # suggestions for a misspelt name come from the view only
    with pytest.raises(NotFoundError) as info:
        b.entities.resolve("Quentn")
    assert "quentin" not in str(info.value).casefold()
    with pytest.raises(NotFoundError) as info:
        a.entities.resolve("Quentn")
    assert "quentin" in str(info.value).casefold()
    # B's reads do not bump A's access counts
    b.facts.touch([fact.uuid])
    assert a.facts.get(fact.uuid, touch=False).access_count == 0


def test_the_admin_view_sees_every_scope_and_refuses_to_create(two: tuple[Tier2, Tier2]) -> None:
    a, b = two
    a.facts.store("alpha fact")
    b.facts.store("beta fact")
    admin = a.admin()
    assert admin is a.admin() and admin.view.admin and admin.db is a.db
    assert admin.facts.count() == 2 and a.facts.count() == b.facts.count() == 1
    with pytest.raises(StorageError):
        admin.facts.store("nobody's fact")
    # the same content in two scopes is two facts; the admin's deduplication never merges them
    a.facts.store("shared words")
    b.facts.store("shared words")
    assert admin.facts.deduplicate() == 0


def test_turns_queue_under_their_scope(two: tuple[Tier2, Tier2]) -> None:
    a, b = two
    turn = TurnPayload("s1", 1.0, ())
    assert a.ingest_queue.enqueue("t1", replace(turn, scope="b"))  # the view decides, not the payload
    assert b.ingest_queue.enqueue("t1", turn)  # same turn id, another scope: another turn
    assert not a.ingest_queue.enqueue("t1", turn)
    [mine] = a.ingest_queue.pending(10)
    assert mine.payload.scope == "a" and a.ingest_queue.count() == b.ingest_queue.count() == 1
    assert a.admin().ingest_queue.count() == 2
    assert mine.turn_uuid == "a\x1ft1" != b.ingest_queue.pending(10)[0].turn_uuid
    default = Tier2.open(a.db.path)
    try:
        assert default.ingest_queue.key("t9") == "t9"  # the default scope keeps bare ids (and episode ids)
        assert episode_uuid(default.ingest_queue.key("t9"), 0) == episode_uuid("t9", 0)
    finally:
        default.close()


def test_shared_facts_land_in_the_pool_and_episodes_stay_own(tmp_path: Path) -> None:
    c = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("c", facts="shared", shared_pool="team"))
    d = Tier2.open(tmp_path / "t2.db", view=ScopeView.of("d", facts="shared", shared_pool="team"))
    try:
        fact = c.facts.store("standup at 9:30").fact
        with c.db.atomic() as conn:
            episode = c.episodes.add(conn, session_id="s", role="user", text="diary", timestamp=1.0)
            chunks = c.chunks.add(conn, ["diary"], source_kind="episode", source_type="session", timestamp=1)
            fact_chunks = c.chunks.add(
                conn, ["standup"], source_kind="fact", source_type="fact", timestamp=1, source_uuid=fact.uuid
            )
        scopes = (fact.scope, episode.scope, chunks[0].scope, fact_chunks[0].scope)
        assert scopes == ("team", "c", "c", "team")
        assert d.facts.get(fact.uuid).uuid == fact.uuid
        with pytest.raises(NotFoundError):
            d.episodes.get(episode.uuid)
        assert [row.scope for batch in d.chunks.iter_all() for row in batch] == ["team"]
    finally:
        d.close()
        c.close()


# -- derived files per view -----------------------------------------------------------------------------
def test_each_readable_set_has_its_own_graph_and_core_memory_file(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, **FAST) as default:
        assert view_directory(default.config.graph_path, default.tier2) == default.config.graph_path
        default_core = default.core.llm.core_path
        assert default_core == default.config.core_memory_path
    with MemoryAPI(hermes_home=tmp_path, scope="agent-a", **FAST) as a:
        ok_a = a.entity_ensure("Quentin", "person")
        assert ok_a["success"]
        a_dir = view_directory(a.config.graph_path, a.tier2)
        assert a_dir != a.config.graph_path and a.core.llm.core_path != default_core
        assert a.graph_traverse("Quentin")["success"]
    with MemoryAPI(hermes_home=tmp_path, scope="agent-b", **FAST) as b:
        assert view_directory(b.config.graph_path, b.tier2) not in (a_dir, b.config.graph_path)
        assert b.knowledge_graph().entity_count == 0
        assert b.graph_traverse("Quentin")["meta"]["error_type"] == "not_found"
    assert (a_dir / "knowledge_graph.pickle").is_file()


# -- the Hermes provider --------------------------------------------------------------------------------
def test_user_scope_follows_per_user(tmp_path: Path) -> None:
    per_user: dict[str, Any] = {"scope.per_user": False}
    off = load_config(hermes_home=tmp_path, **per_user)
    on = load_config(hermes_home=tmp_path)
    tg = Identity.from_kwargs
    assert registry.audience(off, tg({"platform": "telegram", "user_id": "42"})).scope == ""
    assert registry.audience(on, None).scope == registry.audience(on, tg({"platform": "cli"})).scope == ""
    assert registry.audience(on, tg({"platform": "cli", "user_id": ""})).kind == "local"
    assert registry.audience(on, tg({"platform": "telegram", "user_id": "42"})).scope == "user:telegram:42"
    with pytest.raises(ConfigError, match="per_user"):
        registry.audience(on, tg({"platform": "telegram", "user_id": "evil\nid"}))
    with pytest.raises(ConfigError, match="per_user"):
        registry.audience(on, tg({"platform": "telegram", "user_id": "x" * 200}))


SETTINGS = """\
memory:
  scope:
    name: {name}
    per_user: {per_user}
  tier3:
    embedding_model: hashing
    backend: memory
"""


def _provider(home: Path, **kwargs: object) -> NextLevelProvider:
    provider = NextLevelProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli", agent_identity="default", **kwargs)
    return provider


def test_the_provider_opens_the_configured_scope_and_one_per_user(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(SETTINGS.format(name="gateway", per_user="true"), encoding="utf-8")
    alice = _provider(home, user_id="alice")
    bob = _provider(home, user_id="bob")
    anonymous = _provider(home)
    try:
        shared_alice = registry.find(str(home), "default", "user:cli:alice")
        shared_bob = registry.find(str(home), "default", "user:cli:bob")
        shared_anon = registry.find(str(home), "default")
        assert shared_alice is not None and shared_bob is not None and shared_anon is not None
        assert (shared_alice.api.scope, shared_bob.api.scope, shared_anon.api.scope) == (
            "user:cli:alice", "user:cli:bob", "gateway"
        )
        assert shared_alice.api.tier2.db.path == shared_bob.api.tier2.db.path  # one store
        assert shared_alice.api.fact_store("Alice's locker code is 1234")["success"]
        assert shared_bob.api.fact_query("locker code")["data"] == []
        assert shared_anon.api.fact_query("locker code")["data"] == []
    finally:
        for provider in (alice, bob, anonymous):
            provider.shutdown()
    assert registry.open_stores() == {}


def test_names_in_a_question_find_the_views_entities_most_frequent_first(two: tuple[Tier2, Tier2]) -> None:
    """``find_uuids`` (recall's lookup of the names a question holds) reads the aliases first: by name or
    alias, case-insensitively, the view's entities only, the most mentioned first."""
    a, b = two
    first = a.entities.ensure("Quentin", "person", aliases=["Q"]).entity
    second = a.entities.ensure("Quentin", "pet").entity
    a.entities.ensure("Quentin", "pet")  # seen again: the pet is mentioned more often
    theirs = b.entities.ensure("Quentin", "place").entity
    found = a.entities.find_uuids(["quentin", "q", "Lisbon"])
    assert found == {"quentin": [second.uuid, first.uuid], "q": [first.uuid]}
    assert b.entities.find_uuids(["QUENTIN", "q"]) == {"QUENTIN": [theirs.uuid]}
