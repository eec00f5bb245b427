"""Updates in the user's own words, with the real MiniLM embedder: what a new statement closes in the
store, and what it must leave alone. Sentences are written for this test, not taken from the corpus."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_closures import closed_in_chat

from hermes_memory import MemoryAPI
from hermes_memory.bench import updates as bench
from hermes_memory.updates.message import read_message
from hermes_memory.updates.statement import read

DAY = 86400.0
START = time.time() - 40 * DAY


def _facts(api: MemoryAPI) -> list[dict[str, Any]]:
    env = api.fact_history("the user")
    assert env["success"], env
    return list(env["data"]["facts"] if isinstance(env["data"], dict) else env["data"])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home: Path = tmp_path_factory.mktemp("updates")
    said = [
        "My bike is an old Peugeot racer.",
        "I go bouldering at the Castle climbing centre.",
        "I'm learning Italian on Tuesday evenings.",
        "My GP is Dr. Lindqvist.",
        "I read on a Kindle Paperwhite.",
        # later
        "I sold the Peugeot, these days I ride a Brompton folding bike.",
        "I'm learning Greek as well.",  # an addition
        "My sister started climbing at the Castle too.",  # someone else
        "I might swap the Kindle for a Kobo.",  # a hypothetical
        "Dr. Osei is my GP now.",
        "Do you think I should quit bouldering?",  # a question
        "My physio is Dr. Halvorsen.",
        "Dr. Mensah, my physio, reckons my knee is healing well.",  # an apposition names the new one
    ]
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        for i, text in enumerate(said):
            api.remember_turn(text, "Okay.", "s1", START + i * DAY)
        assert api.flush()["success"]
        yield {"api": api, "facts": _facts(api), "home": home}


def _about(facts: list[dict[str, Any]], word: str) -> list[dict[str, Any]]:
    return [f for f in facts if word.lower() in f["content"].lower()]


def _open(fact: dict[str, Any]) -> bool:
    return not (fact.get("superseded_at") or fact.get("valid_to") or fact.get("is_archived"))


def test_an_update_in_new_words_closes_the_old_fact_at_the_statements_time(store: dict[str, Any]) -> None:
    old = _about(store["facts"], "Peugeot racer")
    assert old and not any(_open(f) for f in old), old
    closed = old[0]
    assert closed["superseded_by"], closed
    assert abs(float(closed["valid_to"]) - (START + 5 * DAY)) < 1.0  # the new statement's time, not now
    by = [f for f in store["facts"] if f["uuid"] == closed["superseded_by"]]
    assert by and "brompton" in by[0]["content"].lower() and _open(by[0]), by


def test_a_new_gp_replaces_the_old_one(store: dict[str, Any]) -> None:
    old = _about(store["facts"], "Lindqvist")
    assert old and not any(_open(f) for f in old), old


def test_a_role_named_in_an_apposition_replaces_its_earlier_holder(store: dict[str, Any]) -> None:
    old = _about(store["facts"], "Halvorsen")
    assert old and not any(_open(f) for f in old), old
    by = [f for f in store["facts"] if f["uuid"] == old[0]["superseded_by"]]
    assert by and "mensah" in by[0]["content"].lower() and "physio" in by[0]["content"].lower(), by


def test_additions_others_hypotheticals_and_questions_close_nothing(store: dict[str, Any]) -> None:
    for word in ("Italian", "Castle", "Kindle"):
        facts = _about(store["facts"], word)
        assert facts and any(_open(f) for f in facts if "sister" not in f["content"].lower()), (word, facts)


def test_recall_marks_the_replaced_turn_and_puts_the_current_first(store: dict[str, Any]) -> None:
    env = store["api"].recall("What bike do I ride?")
    assert env["success"], env
    hits = env["data"]["hits"]
    texts = [h["text"].lower() for h in hits]
    new = [i for i, t in enumerate(texts) if "brompton" in t]
    old = [i for i, t in enumerate(texts) if "peugeot racer" in t]
    assert new, texts
    assert not old or new[0] < old[0], texts
    for i in old:
        assert hits[i]["metadata"].get("superseded_at"), hits[i]


def test_a_fact_that_restates_a_clause_is_kept_but_recall_shows_its_turn(tmp_path: Path) -> None:
    """The writer keeps a fact for a clause extraction found no pattern in ("Anneke cuts my hair"),
    so that a later statement can close it; recall returns the turn, which says the same in the user's
    own words, not a third-person copy that would crowd other turns out of the list."""
    from hermes_memory.records import RESTATEMENT

    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("Anneke cuts my hair.", "Noted.", "s1", START)
        api.remember_turn("I wash my hair every other day.", "Fair enough.", "s1", START + DAY)
        assert api.flush()["success"]
        copies = [f.fact for f in api.tier2.facts.query(None, limit=100) if f.fact.extractor == RESTATEMENT]
        assert any("Anneke" in f.content for f in copies), copies
        env = api.recall("Who cuts my hair?")
        assert env["success"], env
        hits = env["data"]["hits"]
        assert not {h["id"] for h in hits} & {f"fact:{f.uuid}" for f in copies}, hits
        assert hits[0]["kind"] == "episode" and "Anneke" in hits[0]["text"], hits


def test_a_clause_stated_again_as_a_fact_reads_as_english(tmp_path: Path) -> None:
    """A clause extraction had no pattern for is kept as a fact in the third person, its verbs agreeing
    with "the user" and its dates written as dates (it is what the superseded mark and ``why`` show)."""
    from hermes_memory.records import RESTATEMENT

    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I've been a beekeeper for six years and still love it.", "Lovely.", "s1", START)
        assert api.flush()["success"]
        copies = [
            f.fact.content for f in api.tier2.facts.query(None, limit=100) if f.fact.extractor == RESTATEMENT
        ]
        assert copies == ["The user has been a beekeeper for six years and still loves it"], copies
        api.remember_turn("My dog Biscuit is in the puppy class.", "Cute.", "s1", START + DAY)
        api.remember_turn(
            "Biscuit moved up to the advanced class yesterday.", "Good boy.", "s1", START + 2 * DAY
        )
        assert api.flush()["success"]
        said = [
            f.fact.content for f in api.tier2.facts.query(None, limit=100) if "advanced" in f.fact.content
        ]
        day = time.strftime("%d %B %Y", time.gmtime(START + DAY)).lstrip("0")
        assert said == [f"Biscuit moved up to the advanced class on {day}"], said


def test_the_raw_turn_stays_as_it_was(store: dict[str, Any]) -> None:
    env = store["api"].recall("Peugeot racer", tiers=["tier2"])
    assert any(h["text"] == "My bike is an old Peugeot racer." for h in env["data"]["hits"]), env


def test_the_assistant_never_updates_the_user(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I drive a Skoda Octavia.", "Nice car.", "s1", START)
        api.remember_turn("What do I drive?", "These days you drive a Tesla, I believe.", "s1", START + DAY)
        assert api.flush()["success"]
        skoda = _about(_facts(api), "Skoda")
        assert skoda and all(_open(f) for f in skoda), skoda


def test_the_shipped_model_on_the_corpus() -> None:
    """The shipped decision (``updates/model.json``) on the labelled corpus, as docs/benchmarks.md reports
    it: in-sample 0.976 / 0.903 over the default encoder (the project aims at 0.97 / 0.90 there;
    ``python -m hermes_memory.bench.updates --chat ...`` scores 0.961 / 0.858 held out). The int8 encoder's
    last digits differ from one CPU's instructions to another's and move a pair or two, so this guards
    what is reached a few pairs under it."""
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    pairs = bench.load(bench.DEFAULT_DATA)
    assert len(pairs) >= 400 and len({p.family for p in pairs}) >= 40
    called = {p.id: bench.decide(detector, p, [])[0] for p in pairs}
    tp = sum(1 for p in pairs if p.update and called[p.id])
    fp = sum(1 for p in pairs if not p.update and called[p.id])
    updates = sum(1 for p in pairs if p.update)
    assert tp / (tp + fp) >= 0.965 and tp / updates >= 0.89, (tp, fp, updates)


def test_the_shipped_model_on_people_telling_their_lives() -> None:
    """Eleven people tell the memory about their lives, message by message (``updates_profiles``: nothing
    is fitted on them): most of what they say is a first mention, which replaces nothing. The shipped
    decision closes 36 of the 50 facts they change and 20 others by mistake (docs/benchmarks.md); before
    a pet's own news and a clause saying the old statement again were read as keeping it, 35 and 28."""
    from hermes_memory.bench.updates_profiles import DEFAULT_PROFILES, load_profiles, score
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    told = score(load_profiles(DEFAULT_PROFILES), detector, bench.known_holders, bench.stored_statements,
                 bench.LATER)  # fmt: skip
    assert told["messages"] >= 209 and told["updates"] >= 50
    assert told["right"] >= 34 and told["wrong"] <= 25, {k: v for k, v in told.items() if k != "errors"}


EVENTS_PROBE = Path(__file__).resolve().parents[1] / "data" / "updates_events_probe.json"


def test_a_request_to_note_what_was_said_says_it_again() -> None:
    """A clause that says every word of a statement again, whatever it wraps around it, restates it: "Please
    note in your notes that I prefer window seats" leaves "User prefers window seats." (the entry the
    built-in memory tool wrote) standing; under a verb of ceasing it ends it ("Idris is in Year 3 at
    Riverbank, we stopped homeschooling" after "Idris is homeschooled")."""
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    entry = read("User prefers window seats.")
    for said in ("Please note in your notes that I prefer window seats.", "I prefer window seats."):
        later = [s for _, s in read_message(said, when=bench.LATER)]
        assert not any(detector.replaced(new, [entry], []) for new in later), said
    pairs = [p for p in bench.load(bench.DEFAULT_DATA) if p.raw["earlier"] == "Idris is homeschooled."]
    assert pairs and all(bench.decide(detector, p, [])[0] for p in pairs if p.update)


def test_an_everyday_event_with_a_thing_ends_nothing_and_an_ending_does() -> None:
    """Held out (``tests/data/updates_events_probe.json``, written by another author and never fitted
    on): "Cleared Brave's cache this morning" leaves "My browser is Brave" true; "Uninstalled Valorant
    last week, done with ranked forever" ends "I main Jett in Valorant".
    Before the corpus held such events, the shipped decision closed 15 of the 20 everyday events here
    (and caught 16 of the 20 endings); fitted on the corpus it closed 1 and caught 17, and fitted on the
    everyday sets too it closes 3 ("Flew out of Glasgow for a work trip to Dublin on Monday, back
    Thursday." ends "I live in Glasgow."; "Topped up my Freetrade ISA on payday."; "Handed in my contract
    law essay on Sunday") and catches 18. This guards what is reached over the default encoder."""
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    pairs = bench.load(EVENTS_PROBE)
    events = [p for p in pairs if not p.update]
    endings = [p for p in pairs if p.update]
    assert len(events) == len(endings) == 20 and all(p.kind == "event" for p in events)
    closed = [p.raw["later"] for p in events if bench.decide(detector, p, [])[0]]
    caught = sum(1 for p in endings if bench.decide(detector, p, [])[0])
    assert len(closed) <= 3, closed
    assert caught >= 16, caught


# Two friends catching up: feelings, compliments, stories and plans, none of them a change of anything the
# other said before. Written for this test, in the manner of long chats between friends.
SMALL_TALK = [
    ("Rosa", "Hey Tom! So good to hear from you, how have things been?"),
    ("Tom", "Busy but good! I've been painting a lot lately, it really calms me down."),
    ("Rosa", "That's lovely. Painting always sounds so relaxing to me."),
    ("Tom", "It is. Honestly my family keeps me going, they're the best."),
    ("Rosa", "Family is everything. Mine came over for dinner on Sunday and it was a blast."),
    ("Tom", "Sounds great, Rosa! What did you cook?"),
    ("Rosa", "A big pot of chili. The kids loved it, they had seconds."),
    ("Tom", "Ha, kids are the best critics. I took mine to the lake last weekend."),
    ("Rosa", "The lake is so peaceful this time of year, the leaves must have been gorgeous."),
    ("Tom", "They were! Nature really helps me recharge."),
    ("Rosa", "Same here. Being outside is my favourite way to unwind after work."),
    ("Tom", "I've also been reading more, it's a nice break from screens."),
    ("Rosa", "Reading before bed helps me sleep so much better."),
    ("Tom", "Art and books, that's what keeps me sane these days."),
    ("Rosa", "It's so important to have things that bring you joy."),
    ("Tom", "Totally. Thanks for checking in, Rosa, it means a lot."),
    ("Rosa", "Always, Tom. Talk soon, and send me a picture of your next painting!"),
    ("Tom", "Will do! Here's one I finished yesterday, a sunset over the hills."),
    ("Rosa", "Wow, the colours are amazing. You've really grown as an artist."),
    ("Tom", "Thank you! Painting has been a great way to express myself."),
]


def _closed_in_chat(home: Path, said: list[tuple[str, str]], step: float) -> list[Any]:
    """The facts a chat (speaker, message), one message every ``step`` seconds, closes."""
    return closed_in_chat(home, said, START, step)


def test_small_talk_between_friends_closes_nothing(tmp_path: Path) -> None:
    """A chat is mostly feelings, compliments and stories; one remark that resembles an earlier one ("Nature
    really helps me recharge" after "Painting always sounds so relaxing") replaces nothing."""
    closed = _closed_in_chat(tmp_path, SMALL_TALK, 3600.0)
    assert not closed, [f.content for f in closed]


def test_how_a_state_began_or_a_greeting_said_again_closes_nothing(tmp_path: Path) -> None:
    """Telling how something that holds began ("set up my own bakery not so long ago" after "my bakery is
    open") says it holds; a time lessened by "not" negates nothing; a chat word ("FYI") is no value; and
    a negated remark said again restates itself. None of it closes an earlier statement."""
    said = [
        "Long time no see!",
        "My bakery in Porto is open six days a week.",
        "Oh, and FYI, I set up my own bakery not so long ago.",
        "Long time no see!",
    ]
    closed = _closed_in_chat(tmp_path, [("Ines", text) for text in said], DAY)
    assert not closed, [f.content for f in closed]


def test_a_call_by_name_or_a_second_negation_closes_nothing(tmp_path: Path) -> None:
    """A name closing a short call ("Woohoo Melanie!", "That's great Tim") is the person spoken to, not
    spoken about; and a negation ends no negated state ("I don't have a car either" after "I don't
    drive"), while an affirmative one does."""
    said = [
        ("Caroline", "Melanie is doing her best with the new bakery."),
        ("Caroline", "Tim can look some recipes up for it."),
        ("Caroline", "I don't drive."),
        ("Melanie", "Thanks!"),
        ("Caroline", "Woohoo Melanie!"),
        ("Caroline", "That's great Tim"),
        ("Caroline", "I don't have a car either."),
    ]
    closed = _closed_in_chat(tmp_path / "calls", said, DAY)
    assert not closed, [f.content for f in closed]


@pytest.mark.xfail(
    strict=True,
    reason="the decision fitted on the everyday sets too gives this pair 0.04 (threshold 0.19); "
    "fitted on the corpus alone it closed it",
)
def test_an_affirmative_ends_a_negated_state(tmp_path: Path) -> None:
    """"I got my licence and drive to work now" ends "I don't drive"."""
    licence = [("Caroline", "I don't drive."), ("Caroline", "I got my licence and drive to work now.")]
    closed = _closed_in_chat(tmp_path / "licence", licence, DAY)
    assert [f.content for f in closed] == ["Caroline doesn't drive"], [f.content for f in closed]


def test_a_relatives_own_attribute_closes_nothing_said_of_them(tmp_path: Path) -> None:
    """"Ana's husband is called Rui" gives the user's sister an attribute of her own: where she lives and
    that she is the user's sister stay true; "Kenji's employer is Nintendo now" still ends where Kenji
    works."""
    said = [("Ines", "My sister Ana lives in Porto."),
            ("Ines", "Ana's husband is called Rui and he teaches maths.")]  # fmt: skip
    closed = _closed_in_chat(tmp_path / "ana", said, DAY)
    assert not closed, [f.content for f in closed]
    said = [("Ines", "Kenji works at Sony."), ("Ines", "Kenji's employer is Nintendo now.")]
    closed = _closed_in_chat(tmp_path / "kenji", said, DAY)
    assert [f.content for f in closed] == ["Kenji works at Sony"], [f.content for f in closed]


def test_an_event_that_moves_the_number_to_another_carrier_ends_the_old_one(tmp_path: Path) -> None:
    """A past event that moves something to a value of its own ("Ported my number to Mint Mobile") or
    away from the old value to another ("from EE over to giffgaff") ends the carrier; clearing old videos
    "from Google Drive ... to free up space" (an infinitive, no goal) leaves the backup where it is."""
    ports = (("My carrier is Verizon.", "Ported my number to Mint Mobile last week."),
             ("My mobile carrier is EE.", "Ported my number from EE over to giffgaff last week."))
    for carrier, ported in ports:
        closed = _closed_in_chat(tmp_path / carrier[:12], [("Ines", carrier), ("Ines", ported)], DAY)
        assert [f.content for f in closed] == [f"Ines's {carrier[3:-1]}"], [f.content for f in closed]
    said = [("Ines", "I back everything up to Google Drive."),
            ("Ines", "Cleared out some old videos from Google Drive over the weekend to free up space.")]
    closed = _closed_in_chat(tmp_path / "drive", said, DAY)
    assert not closed, [f.content for f in closed]


def test_a_statement_replaces_one_earlier_turn_of_many_alike(tmp_path: Path) -> None:
    """Someone talks about one project for days; a new state of it closes at most the statement it
    replaces (and facts drawn from the same turn), not every fact that resembles it."""
    said = [
        "I'm fitting out my pottery studio in the evenings.",
        "Still hunting for a cheap lease for the pottery studio.",
        "My pottery studio is coming along, I've ordered the wheels.",
        "Getting the pottery studio ready is taking all my time.",
        "The pottery studio is on shaky ground right now, the landlord wants it back.",
    ]
    closed = _closed_in_chat(tmp_path, [("Ilse", text) for text in said], DAY)
    turns = {episode for fact in closed for episode in fact.source_episodes}
    assert len(turns) <= 1, [f.content for f in closed]


def test_where_several_people_speak_each_updates_only_their_own(tmp_path: Path) -> None:
    """In one store with two speakers, what Alice says of herself ends nothing Bob said of himself, even
    a statement of his with no subject; Bob's own new value does. A statement kept as a fact names its
    speaker, as extraction does ("Bob's GP is ..."), not "the user"."""
    said = [
        ("Bob", "My GP is Dr. Lindqvist."),
        ("Bob", "Learning the cello on Sunday mornings."),
        ("Bob", "My dad drives a Volvo estate."),
        ("Alice", "My GP is Dr. Osei now."),
        ("Alice", "Learning the banjo on Sunday mornings these days, not the cello anymore."),
    ]
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        for i, (speaker, text) in enumerate(said):
            assert api.remember_message(text, "chat", START + i * DAY, speaker=speaker)["success"]
        assert api.flush()["success"]
        assert not api.tier2.facts.superseded(limit=100)
        facts = [f.content for f in api.tier2.facts.believed_about(["Bob", "Alice"], limit=50)]
        assert "Bob's GP is Dr. Lindqvist" in facts and "Alice's GP is Dr. Osei now" in facts, facts
        later = ["Dr. Osei is my GP now too.", "Dad sold the Volvo, he drives a Kia now."]
        for i, text in enumerate(later):
            api.remember_message(text, "chat", START + (5 + i) * DAY, speaker="Bob")
        assert api.flush()["success"]
        closed = sorted(f.content for f in api.tier2.facts.superseded(limit=100))
        assert closed == ["Bob's GP is Dr. Lindqvist", "Bob's dad drives a Volvo estate"], closed


def test_a_written_fact_that_names_no_one_is_the_users_to_update(tmp_path: Path) -> None:
    """A fact a tool or the curated memory wrote has no subject: whoever speaks, it is the user's, and
    their new value ends it."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        assert api.add("My phone is a Pixel 6.")["success"]
        said = "My phone is an iPhone 16 now, the Pixel finally died."
        api.remember_message(said, "chat", time.time() + 60.0, speaker="Dana")
        assert api.flush()["success"]
        assert [f.content for f in api.tier2.facts.superseded(limit=10)] == ["My phone is a Pixel 6."]


def test_a_statement_spoken_to_someone_is_stored_as_english(tmp_path: Path) -> None:
    """A clause that says "you" has no one extraction could name for it, so the statement is stored in
    the words it was said in: the speaker as "the user", the verbs agreeing with it ("the user is ...",
    never "the user am ..."), "we" as "the user and others"."""
    said = ["I am sending you the Lisbon photos tonight.", "I have told you I am vegan now.",
            "We have a surprise for you and my sister."]  # fmt: skip
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        for i, text in enumerate(said):
            api.remember_turn(text, "Okay.", "s1", START + i * DAY)
        assert api.flush()["success"]
        stored = {f["content"] for f in _facts(api)}
    assert "The user is sending you the Lisbon photos tonight" in stored, stored
    assert "The user has told you the user is vegan now" in stored, stored
    assert "The user and others have a surprise for you and the user's sister" in stored, stored
    assert not any(re.search(r"\bthe user (?:am|have|do)\b", f, re.IGNORECASE) for f in stored), stored


def test_the_old_fact_points_at_the_clause_that_names_the_new_value(tmp_path: Path) -> None:
    """ "I closed my Barclays account; Monzo is my bank." ends the old value in its first clause and names
    the new one in its second: the replaced fact points at the second, even when extraction's fact of
    the first clause spans the whole message and the new value opens its clause."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I bank with Barclays.", "Okay.", "s1", START)
        api.remember_turn("I closed my Barclays account; Monzo is my bank.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
        closed = [f for f in _facts(api) if "Barclays" in f["content"] and not _open(f)]
        assert closed, _facts(api)
        by = api.tier2.facts.get_many([closed[0]["superseded_by"]])
        assert "Monzo" in next(iter(by.values())).content, by


def test_a_clause_that_asserts_nothing_is_still_context_for_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Mandarin never clicked, so I'm learning Portuguese" names the old value only in a negated clause,
    which asserts nothing of its own: the detector still weighs the second clause with it, as the bench
    that fitted the detector does."""
    from hermes_memory.updates.detector import UpdateDetector

    weighed: list[tuple[str, list[str]]] = []
    original = UpdateDetector.replaced

    def spy(
        self: UpdateDetector, new: Any, earlier: Any, context: Any = (), sources: Any = None, **kw: Any
    ) -> Any:
        weighed.append((new.text, [c.text for c in context]))
        return original(self, new, earlier, context, sources, **kw)

    monkeypatch.setattr(UpdateDetector, "replaced", spy)
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I'm learning Mandarin.", "Okay.", "s1", START)
        api.remember_turn("Mandarin never clicked, so I'm learning Portuguese.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
    assert ("I'm learning Portuguese", ["Mandarin never clicked"]) in weighed, weighed


def test_an_entity_card_leaves_out_the_relation_a_newer_statement_replaced(tmp_path: Path) -> None:
    """The relation extraction drew from a statement carries that statement's fact as its evidence; once a
    newer statement replaces the fact, the person's card no longer says it."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("My cousin Ilse lives in Graz.", "Okay.", "s1", START)
        api.remember_turn("Ilse relocated to Linz for a new job.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
        cards = [h["text"] for h in api.recall("Where does my cousin Ilse live?")["data"]["hits"]
                 if h["kind"] == "entity" and h["text"].startswith("Ilse")]  # fmt: skip
        assert cards and "Linz" in cards[0] and "Graz" not in cards[0], cards


def test_a_role_a_newer_statement_gave_someone_else_leaves_the_old_holders_card(tmp_path: Path) -> None:
    """Saying "Greta is my boss" gives Greta the alias "the user's boss"; once "Marek is my boss now" replaces
    that statement, neither Greta's card in recall nor the system prompt's list of people calls her
    the user's boss, and Marek's card says whom the user reports to."""
    from hermes_memory.hermes.prompt_context import memory_sections

    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("Greta is my boss.", "Okay.", "s1", START)
        api.remember_turn("Marek is my boss now.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
        hits = api.recall("Who are Greta and Marek?")["data"]["hits"]
        cards = {h["text"].split()[0]: h["text"] for h in hits if h["kind"] == "entity"}
        assert "boss" not in cards["Greta"], cards
        assert "the user's boss" in cards["Marek"] and "the user reports to Marek" in cards["Marek"], cards
        people = [line for s in memory_sections(api.core, user_name=None) for line in s.lines]
        assert not [line for line in people if line.startswith("Greta") and "boss" in line], people
        assert [line for line in people if line.startswith("Marek") and "boss" in line], people


def test_a_clause_with_a_day_gets_no_second_fact_beside_the_dated_one(tmp_path: Path) -> None:
    """Extraction writes "last Sunday morning" as the date it names; the writer takes that fact as the
    clause's own instead of storing the clause again with the day left relative."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I repotted the monstera last Sunday morning.", "Nice.", "s1", START)
        assert api.flush()["success"]
        facts = [f.fact.content for f in api.tier2.facts.query(None, limit=100)]
        about = [c for c in facts if "monstera" in c]
        assert len(about) == 1 and "Sunday" not in about[0] and "morning of" in about[0], facts


def test_news_of_a_relative_ends_nothing_of_the_family(tmp_path: Path) -> None:
    """A later statement about the user's son says something new of him; he is still their son. The
    fact of the family stays open, and so does his card's role, while the statement it replaces
    closes."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("My son Teo plays in the under-9s.", "Fun.", "s1", START)
        api.remember_turn("Teo moved up to the under-11s this season.", "Nice.", "s2", START + DAY)
        assert api.flush()["success"]
        facts = [f.fact for f in api.tier2.facts.query(None, limit=100)]
        family = [f for f in facts if f.predicate == "parent_of"]
        assert family and all(f.is_active for f in family), facts
        cards = [h["text"] for h in api.recall("Who is Teo?")["data"]["hits"] if h["kind"] == "entity"]
        assert cards and "the user's son" in cards[0], cards


@pytest.mark.parametrize(
    ("doing", "done", "words"),
    [
        (
            "I'm building a birdhouse for Arlo.",
            "Completed the birdhouse for Arlo on Saturday.",
            "building a bird",
        ),
        (
            "I'm currently bingeing Slow Horses.",
            "Finished Slow Horses last night, brilliant.",
            "bingeing slow",
        ),
    ],
)
def test_an_activity_in_progress_ends_when_it_is_finished_and_a_habit_does_not(
    tmp_path: Path, doing: str, done: str, words: str
) -> None:
    """Telling that something in progress was finished says the activity is over: its statement closes
    and recall about the present marks it. Finishing one session of a habit leaves the habit true."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn(doing, "Lovely.", "s1", START)
        api.remember_turn("I swim at Pells Pool on weekday mornings.", "Brr.", "s1", START + DAY)
        api.remember_turn(done, "Wow.", "s2", START + 3 * DAY)
        api.remember_turn("Finished my Pells Pool session early today.", "Okay.", "s2", START + 4 * DAY)
        assert api.flush()["success"]
        facts = _facts(api)
        in_progress = _about(facts, words)
        assert in_progress and not [f for f in in_progress if _open(f)], facts
        assert [f for f in _about(facts, "swims at pells") if _open(f)], facts
        for hit in api.recall("What am I up to these days?")["data"]["hits"]:
            if words in hit["text"].lower() and hit["kind"] == "fact":
                assert (hit.get("metadata") or {}).get("superseded_at"), hit


def test_a_change_to_a_pets_thing_leaves_the_pet(tmp_path: Path) -> None:
    """A turn that named a pet and what it eats gave two facts; a new food, told of the pet by its name,
    replaces the food, not the fact that the user has the pet."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("My hamster Nibbles eats Burgess nuggets.", "Crunchy.", "s1", START)
        api.remember_turn(
            "Moved Nibbles onto Science Selective last week, he loves it.", "Nice.", "s2", START + 9 * DAY
        )
        assert api.flush()["success"]
        facts = _facts(api) + list(api.fact_history("Nibbles")["data"])
        assert [f for f in _about(facts, "burgess") if not _open(f)], facts
        assert [f for f in _about(facts, "hamster named nibbles") if _open(f)], facts


def test_the_same_role_of_the_roles_holder_replaces_nothing_of_the_users(tmp_path: Path) -> None:
    """ "Greta's manager is Olaf" says who manages Greta. The user's manager is still Greta; the user's
    own new manager, said later, replaces her, and the history of the role shows both."""

    def greta(api: MemoryAPI) -> list[Any]:  # the facts believed now that say so
        facts = [f.fact for f in api.tier2.facts.query(None, limit=100)]
        return [f for f in facts if "manager is greta" in f.content.lower()]

    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("My manager is Greta.", "Okay.", "s1", START)
        api.remember_turn("Greta's manager is Olaf, he runs the whole region.", "I see.", "s2", START + DAY)
        assert api.flush()["success"]
        assert greta(api), [f.fact.content for f in api.tier2.facts.query(None, limit=100)]
        api.remember_turn("Since the reorg Yusuf is my manager.", "Got it.", "s3", START + 2 * DAY)
        assert api.flush()["success"]
        assert not greta(api)
        history = api.fact_history("the user's manager")["data"]
        assert [f for f in _about(history, "manager is greta") if not _open(f)], history


def test_a_new_value_the_decision_is_sure_of_needs_no_change_word(tmp_path: Path) -> None:
    """No cue, no negation, no shape of a one-valued attribute: the new statement gives the same
    attribute another value in other words, and the decision is sure of it. A clause the rules say ends
    nothing still ends nothing, however sure (the small-talk and everyday-event tests). Fitted on the
    corpus alone, the decision read "My laptop runs ChromeOS" as the first mention of a laptop; fitted
    on the everyday sets too, it is sure enough."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I'm on Linux Mint.", "Nice.", "s1", START)
        api.remember_turn("My laptop runs ChromeOS.", "Okay.", "s2", START + DAY)
        assert api.flush()["success"]
        facts = _facts(api)
        assert [f for f in _about(facts, "mint") if not _open(f)], facts
        assert [f for f in _about(facts, "chromeos") if _open(f)], facts


def test_another_routine_on_another_day_ends_nothing(tmp_path: Path) -> None:
    """A day says when something happens, not what it is: a routine told on another day is another
    routine (Sunday's batch cooking beside Saturday's soup kitchen), not a new value of the old one. Days
    and months are no value of the attribute (``readings.timeless_values``)."""
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("I help at the soup kitchen on Saturdays.", "Lovely.", "s1", START)
        api.remember_turn("I do my batch cooking on Sundays.", "Smart.", "s2", START + 5 * DAY)
        api.remember_turn("I visit my nan on Thursdays.", "Sweet.", "s2", START + 6 * DAY)
        assert api.flush()["success"]
        facts = _facts(api)
        for routine in ("soup kitchen", "batch cooking"):
            assert [f for f in _about(facts, routine) if _open(f)], (routine, facts)
