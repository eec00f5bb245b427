"""Knowledge updates said in the user's own words, live: one `hermes -z` process per message
(hermes-agent 0.19.0, the provider in its default configuration), a scripted fake LLM on 127.0.0.1,
assertions on what the model received.

Each scenario is one attribute said twice: an earlier statement, a later one in other words, then a
present-tense question in its own process. The fake LLM answers that question by calling
``nextlevel_search`` with it, so one process yields both the <memory-context> block (prefetch) and a
search result. An *update* (a new phone, a new manager, green tea instead of espresso) must leave the
new value in front: shown, unmarked, before anything naming the old value, and every statement of the
old value marked ``superseded <YYYY-MM-DD HH:MM> by: <the new one>`` or left out; in the store the old
fact is closed (by a fact naming the new value, when it says by which). An *addition* (a second dog),
*someone else's* value (my sister's laptop), a *hypothetical* or a *plan* must close nothing: the old
value stays shown unmarked and its fact open.

Cost: all scenarios live in two homes (attributes that would collide, e.g. the language being learnt
and a second language, are in different homes), so each store holds a dozen families at once and one
family's update must never close another's. Every earlier statement first, then every later one, then
the questions; the plan scenario then states its fact and asks again. 80 processes in all.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from harness import (
    PACKAGE_ROOT,
    Home,
    Turn,
    all_episodes,
    all_facts,
    require_hermes,
    run,
    source_of,
)

require_hermes()

FIRST, SECOND = "first_home", "second_home"
UPDATE, ADDITION, OTHER, HYPOTHETICAL, PLAN = "update", "addition", "other person", "hypothetical", "plan"
# What the fake assistant answers a statement (no value of any scenario in it).
REPLY = "Thanks for telling me."


@dataclass(frozen=True)
class Scenario:
    """One attribute said twice, and the question asked after both (``stage`` 2: said and asked
    after every stage-1 question, see the plan)."""

    name: str
    home: str  # the module fixture it runs in
    family: str
    kind: str
    earlier: str
    later: str
    question: str
    old: str  # regex (case-insensitive) naming the earlier value
    new: str  # regex naming the later value
    stage: int = 1

    @property
    def expected(self) -> str:
        if self.kind == UPDATE:
            return "new value current; old one superseded (or left out), its fact closed"
        if self.kind in (ADDITION, OTHER):
            return "both values shown unmarked; old fact open"
        return "old value shown unmarked, its fact open; the later statement unmarked if shown"


NOTION = "I keep all my notes in Notion."
SCENARIOS = [
    # -- the first home: work, habits, tools --------------------------------------------------------
    Scenario("phone", FIRST, "phone", UPDATE,
             "My phone is a Pixel 7.",
             "Swapped the Pixel for an iPhone 15 over the weekend.",
             "Which phone do I have?", r"\bpixel\b", r"\biphone\b"),
    Scenario("employer", FIRST, "employer", UPDATE,
             "I work at Zalando as a data analyst.",
             "I joined Spotify last month after four years at Zalando.",
             "Where do I work?", r"\bzalando\b", r"\bspotify\b"),
    Scenario("manager", FIRST, "manager", UPDATE,
             "I report to Priya Natarajan.",
             "I report to Tomasz Nowak.",
             "Who is my manager?", r"\bpriya\b", r"\btomasz\b"),
    Scenario("band", FIRST, "band I play in", UPDATE,
             "I play bass in a jazz trio called Blue Hour.",
             "Blue Hour and I parted ways in April, and I'm the bassist of The Loose Screws.",
             "Which band do I play in?", r"\bblue hour\b", r"\bloose screws\b"),
    Scenario("morning-drink", FIRST, "morning drink", UPDATE,
             "I start every morning with a double espresso.",
             "Lately my mornings begin with a pot of green tea.",
             "What do I drink in the morning these days?", r"\bespresso\b", r"\bgreen tea\b"),
    Scenario("diet", FIRST, "diet", UPDATE,
             "I'm a pescatarian.",
             "I went fully vegan in March.",
             "What diet do I follow?", r"\bpescatarian\b", r"\bvegan\b"),
    Scenario("design-tool", FIRST, "design tool", UPDATE,
             "I make all my UI mockups in Sketch.",
             "I haven't opened Sketch in months; every mockup I do is in Figma.",
             "Which design tool do I use for mockups?", r"\bsketch\b", r"\bfigma\b"),
    Scenario("gym", FIRST, "gym", UPDATE,
             "I'm a member of the FitX gym.",
             "I cancelled my FitX contract; McFit is my gym.",
             "Which gym do I go to?", r"\bfitx\b", r"\bmcfit\b"),
    Scenario("language-learning", FIRST, "language being learnt", UPDATE,
             "I'm learning Japanese.",
             "Japanese didn't stick, so I'm learning Korean instead.",
             "Which language am I learning?", r"\bjapanese\b", r"\bkorean\b"),
    Scenario("hobby", FIRST, "hobbies", ADDITION,
             "I paint watercolours on weekends.",
             "I also started a pottery class.",
             "What are my hobbies?", r"\bwatercolou?rs?\b", r"\bpottery\b"),
    Scenario("laptop", FIRST, "laptop", OTHER,
             "My laptop is a ThinkPad X1 Carbon.",
             "My sister just bought a MacBook Air.",
             "What laptop do I have?", r"\bthinkpad\b", r"\bmacbook\b"),
    Scenario("password-manager", FIRST, "password manager", UPDATE,
             "My passwords live in LastPass.",
             "LastPass? Ditched. I'm on Bitwarden now.",
             "Which password manager do I use?", r"\blastpass\b", r"\bbitwarden\b"),
    Scenario("editor", FIRST, "code editor", HYPOTHETICAL,
             "I write all my code in Vim.",
             "I might give Emacs a try one day.",
             "Which editor do I use?", r"\bvim\b", r"\bemacs\b"),
    # -- the second home: people, pets, things -----------------------------------------------------
    Scenario("partner", SECOND, "partner", UPDATE,
             "My girlfriend is called Hannah.",
             "Hannah and I split up over the summer; my girlfriend is Maya.",
             "Who is my girlfriend?", r"\bhannah\b", r"\bmaya\b"),
    Scenario("sister-city", SECOND, "a named person's city", UPDATE,
             "My sister Anna lives in Leeds.",
             "Anna relocated to Bristol for a new job.",
             "Where does my sister Anna live?", r"\bleeds\b", r"\bbristol\b"),
    Scenario("pet-food", SECOND, "pet's food", UPDATE,
             "My cat Luna eats Whiskas.",
             "The vet put Luna on Royal Canin renal food.",
             "What does my cat Luna eat?", r"\bwhiskas\b", r"\broyal canin\b"),
    Scenario("team-tracker", SECOND, "team's tracker", UPDATE,
             "The team tracks its work in Jira.",
             "We migrated the team board from Jira to Linear in May.",
             "Which app does my team track its work in?", r"\bjira\b", r"\blinear\b"),
    Scenario("car", SECOND, "car", UPDATE,
             "I drive a 2012 VW Golf.",
             "Sold the Golf and bought a used Tesla Model 3.",
             "What car do I drive?", r"\bgolf\b", r"\btesla\b"),
    Scenario("dentist", SECOND, "dentist", UPDATE,
             "My dentist is Dr Keller.",
             "My dentist is Dr Osei.",
             "Who is my dentist?", r"\bkeller\b", r"\bosei\b"),
    Scenario("piano-teacher", SECOND, "piano teacher", UPDATE,
             "My piano teacher is Mrs Ferreira.",
             "Mr Adeyemi, my piano teacher, says my scales are getting cleaner.",
             "Who teaches me piano?", r"\bferreira\b", r"\badeyemi\b"),
    Scenario("commute-reading", SECOND, "commute reading", UPDATE,
             "I read paperbacks on my commute.",
             "It's all audiobooks for me on the commute these days.",
             "What do I read on my commute?", r"\bpaperbacks\b", r"\baudiobooks\b"),
    Scenario("cousin-school", SECOND, "where a cousin teaches", UPDATE,
             "Nadia, my cousin, teaches at a lycée in Lyon.",
             "Nadia moved to a school in Geneva last spring.",
             "Where does Nadia teach?", r"\blyon\b", r"\bgeneva\b"),
    Scenario("dogs", SECOND, "pets", ADDITION,
             "I have a dog called Rex.",
             "We adopted a second dog, a beagle named Bella.",
             "Which dogs do I have?", r"\brex\b", r"\bbella\b"),
    Scenario("languages", SECOND, "languages studied", ADDITION,
             "I'm taking German classes.",
             "On top of German, I've begun Dutch lessons.",
             "Which languages am I studying?", r"\bgerman\b", r"\bdutch\b"),
    Scenario("bands-liked", SECOND, "bands liked", ADDITION,
             "I love listening to Radiohead.",
             "Another band I can't stop playing is Portishead.",
             "Which bands do I like?", r"\bradiohead\b", r"\bportishead\b"),
    # The plan: asked while it is a plan (nothing changed), then it happens and is asked again.
    Scenario("notes-plan", SECOND, "notes app", PLAN,
             NOTION,
             "I'm thinking about moving my notes to Obsidian.",
             "Which app are my notes in?", r"\bnotion\b", r"\bobsidian\b"),
    Scenario("notes-moved", SECOND, "notes app", UPDATE,
             NOTION,
             "I moved all my notes to Obsidian last week.",
             "Which app do I keep my notes in?", r"\bnotion\b", r"\bobsidian\b", stage=2),
]  # fmt: skip
UPDATES = [s for s in SCENARIOS if s.kind == UPDATE]
# Updates the no-LLM mechanism does not catch yet, each for the reason given; strict: a scenario that
# starts to pass fails here until its mark is removed.
MISSED = {
    "diet": "'went fully vegan' and 'pescatarian' are too far apart for MiniLM",
}
UPDATE_CASES = [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=MISSED[s.name])) if s.name in MISSED else s
    for s in UPDATES
]
KEPT = [s for s in SCENARIOS if s.kind != UPDATE]


# =====================================================================================================
# The homes: every earlier statement, every later one, the questions (then stage 2).
# =====================================================================================================
@dataclass
class Run:
    """One home's sequence: the question process of each scenario, and the store (facts and turns)
    as it was after each stage's questions."""

    home: Home
    asked: dict[str, Turn] = field(default_factory=dict)
    facts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    episodes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)


def search(question: str) -> dict[str, Any]:
    """A rule of the fake LLM: this exact question makes the model call nextlevel_search with it."""
    call = {"name": "nextlevel_search", "arguments": {"query": question}}
    return {"match": f"^{re.escape(question)}$", "tool_calls": [call]}


def live(home: Home, scenarios: list[Scenario]) -> Run:
    home.script(
        [search(s.question) for s in scenarios], default={"reply": REPLY}, after_tools={"reply": "Done."}
    )
    out = Run(home)
    for earlier in dict.fromkeys(s.earlier for s in scenarios):  # said once, in table order
        home.hermes(earlier)
    for stage in sorted({s.stage for s in scenarios}):
        now = [s for s in scenarios if s.stage == stage]
        for s in now:
            home.hermes(s.later)
        for s in now:
            out.asked[s.name] = home.hermes(s.question)
        with home.store() as api:
            out.facts[stage], out.episodes[stage] = all_facts(api), all_episodes(api)
    return out


def home_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Run]:
    home = Home(tmp_path_factory.mktemp(name))
    try:
        yield live(home, [s for s in SCENARIOS if s.home == name])
    finally:
        home.stop()


@pytest.fixture(scope="module")
def first_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield from home_run(tmp_path_factory, FIRST)


@pytest.fixture(scope="module")
def second_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield from home_run(tmp_path_factory, SECOND)


# =====================================================================================================
# What the model was shown, and what the store holds.
# =====================================================================================================
# The supersession note, as the block's source part and a search hit's "superseded" field read.
MARK = re.compile(r"superseded (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) by: (?P<by>.+)", re.DOTALL)
SPEAKER = re.compile(r"^(?:user|assistant): ", re.IGNORECASE)


@dataclass(frozen=True)
class Item:
    """One block line or search hit: its statement, its supersession note ('' when none), and
    whether it comes from the later statement's process (that turn, or what was drawn from it)."""

    text: str
    mark: str
    shown: str
    from_later: bool


def names(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def folded(text: str) -> str:
    return " ".join(SPEAKER.sub("", text.strip()).split()).casefold()


def session_in(source: str) -> str:
    """The session a block line's source names ('turn, <session>; superseded …' -> '<session>')."""
    parts = [part.strip() for part in source.split(";", 1)[0].split(",")]
    return parts[1] if len(parts) > 1 else ""


@dataclass(frozen=True)
class Seen:
    """A scenario as its question process and the store saw it."""

    scenario: Scenario
    turn: Turn
    facts: list[dict[str, Any]]
    earlier_turns: set[str]  # uuids of the stored turns of the earlier statement
    later_sessions: set[str]  # the session (its own `hermes -z` process) of the later statement

    def sourced(self, fact: dict[str, Any], turns: set[str]) -> bool:
        return bool(set(json.loads(fact.get("source_episodes") or "[]")) & turns)

    def block(self) -> list[Item]:
        out = []
        for line in self.turn.lines:
            rest = line.split("] ", 1)[-1]
            source = source_of(rest)
            body = rest[: len(rest) - len(source) - 3] if source else rest
            at = source.find("superseded")
            mark = source[at:] if at >= 0 else ""
            out.append(Item(body, mark, line, session_in(source) in self.later_sessions))
        return out

    def hits(self) -> list[Item]:
        return [
            Item(
                str(hit.get("text", "")),
                str(hit.get("superseded") or ""),
                json.dumps(hit, ensure_ascii=False),
                str(hit.get("session_id")) in self.later_sessions,
            )
            for hit in self.turn.hits()
        ]

    def report(self) -> str:
        hits = "\n".join(item.shown for item in self.hits())
        facts = "\n".join(
            f"{'open  ' if is_open(f) else 'closed'} {f['content']!r} superseded_by={f.get('superseded_by')}"
            for f in self.facts
            if names(self.scenario.old, f["content"]) or names(self.scenario.new, f["content"])
        )
        return f"\n--- block:\n{self.turn.block}\n--- search hits:\n{hits}\n--- facts:\n{facts}"


def seen(run: Run, s: Scenario) -> Seen:
    def said(text: str) -> list[dict[str, Any]]:
        found = [
            t for t in run.episodes[s.stage] if t.get("role") == "user" and folded(t["text"]) == folded(text)
        ]
        assert found, f"the turn {text!r} was not stored"
        return found

    earlier = {t["uuid"] for t in said(s.earlier)}
    later = {str(t["session_id"]) for t in said(s.later)}
    return Seen(s, run.asked[s.name], run.facts[s.stage], earlier, later)


def is_open(fact: dict[str, Any]) -> bool:
    return not (
        fact.get("is_archived")
        or fact.get("valid_to") is not None
        or fact.get("superseded_at") is not None
        or fact.get("superseded_by")
    )


def shown_after_update(s: Scenario, items: list[Item], where: str) -> list[str]:
    """What is wrong with a block or a search result after an update: the new value shown unmarked;
    nothing naming the old value (and not the new) before the first such item; every item naming the
    old value marked 'superseded <when> by: <a statement naming the new value>', except what comes
    from the later statement's process (its turn, the facts and events drawn from it: "after four
    years at Zalando"). An entity card saying "Anna lives in Leeds; Anna moved to Bristol" still
    states the old value."""
    problems = []
    current = [i for i, item in enumerate(items) if names(s.new, item.text) and not item.mark]
    if not current:
        problems.append(f"{where}: nothing unmarked names the new value {s.new!r}")
    first = current[0] if current else len(items)
    for i, item in enumerate(items):
        if not names(s.old, item.text):
            continue
        if i < first and not names(s.new, item.text):
            problems.append(f"{where}: the old value comes before the new one: {item.shown}")
        note = MARK.fullmatch(item.mark)
        if not item.from_later and (note is None or not names(s.new, note.group("by"))):
            problems.append(f"{where}: the old value is not marked superseded by the new one: {item.shown}")
    return problems


def shown_after_no_update(s: Scenario, items: list[Item], where: str) -> list[str]:
    """What is wrong with a block or a search result when nothing was replaced: the old value shown
    unmarked (and the new one, when it is as true: an addition, someone else's); nothing naming
    either marked superseded."""
    problems = []
    if not any(names(s.old, item.text) and not item.mark for item in items):
        problems.append(f"{where}: nothing unmarked names the value still true {s.old!r}")
    if s.kind in (ADDITION, OTHER) and not any(names(s.new, item.text) and not item.mark for item in items):
        problems.append(f"{where}: nothing unmarked names the value also true {s.new!r}")
    problems += [
        f"{where}: marked superseded though nothing replaced it: {item.shown}"
        for item in items
        if item.mark and (names(s.old, item.text) or names(s.new, item.text))
    ]
    return problems


def earlier_facts(view: Seen) -> tuple[list[dict[str, Any]], list[str]]:
    """The facts extracted from the earlier statement that name its value (a problem when none)."""
    s = view.scenario
    found = [
        f
        for f in view.facts
        if view.sourced(f, view.earlier_turns)
        and names(s.old, f["content"])
        and not names(s.new, f["content"])
    ]
    return found, ([] if found else [f"store: no fact naming {s.old!r} was drawn from {s.earlier!r}"])


def stored_after_update(view: Seen) -> list[str]:
    """The old fact closed (by a fact naming the new value, when it says by which); one naming the
    new value open."""
    s = view.scenario
    old, problems = earlier_facts(view)
    by_uuid = {f["uuid"]: f for f in view.facts}
    for fact in old:
        if is_open(fact):
            problems.append(f"store: the old fact is still open: {fact['content']!r}")
        by = by_uuid.get(str(fact.get("superseded_by") or ""))
        if fact.get("superseded_by") and (by is None or not names(s.new, by["content"])):
            problems.append(
                f"store: {fact['content']!r} was closed by {by and by['content']!r}, not by the new value"
            )
    if not any(is_open(f) and names(s.new, f["content"]) for f in view.facts):
        problems.append(f"store: no open fact names the new value {s.new!r}")
    return problems


def stored_after_no_update(view: Seen) -> list[str]:
    s = view.scenario
    old, problems = earlier_facts(view)
    problems += [f"store: closed though nothing replaced it: {f['content']!r}" for f in old if not is_open(f)]
    if s.kind in (ADDITION, OTHER) and not any(is_open(f) and names(s.new, f["content"]) for f in view.facts):
        problems.append(f"store: no open fact names the value also true {s.new!r}")
    return problems


# =====================================================================================================
# One test per scenario.
# =====================================================================================================
@pytest.mark.parametrize("s", UPDATE_CASES, ids=[s.name for s in UPDATES])
def test_an_update_shows_the_new_value_first_and_the_old_one_superseded(
    s: Scenario, request: pytest.FixtureRequest
) -> None:
    view = seen(request.getfixturevalue(s.home), s)
    problems = shown_after_update(s, view.block(), "block")
    problems += shown_after_update(s, view.hits(), "search")
    problems += stored_after_update(view)
    assert not problems, "\n".join(problems) + view.report()


@pytest.mark.parametrize("s", KEPT, ids=[s.name for s in KEPT])
def test_an_addition_another_persons_value_or_a_plan_replaces_nothing(
    s: Scenario, request: pytest.FixtureRequest
) -> None:
    view = seen(request.getfixturevalue(s.home), s)
    problems = shown_after_no_update(s, view.block(), "block")
    problems += shown_after_no_update(s, view.hits(), "search")
    problems += stored_after_no_update(view)
    assert not problems, "\n".join(problems) + view.report()


def test_the_scenario_table_is_what_it_says() -> None:
    updates = {s.family for s in UPDATES}
    assert len(UPDATES) >= 14 and len(updates) >= 12, updates
    assert {s.kind for s in KEPT} == {ADDITION, OTHER, HYPOTHETICAL, PLAN}
    assert sum(s.kind == ADDITION for s in KEPT) >= 4
    assert len({s.question for s in SCENARIOS}) == len(SCENARIOS)
    # No value of a scenario is named by another statement of its home (that would blur the checks).
    for s in SCENARIOS:
        said = [t.earlier for t in SCENARIOS if t.home == s.home and t.family != s.family]
        said += [t.later for t in SCENARIOS if t.home == s.home and t.family != s.family]
        said += [t.question for t in SCENARIOS if t.home == s.home]
        assert not [t for t in said if names(s.old, t) or names(s.new, t)], s.name
    processes = {home: 0 for home in (FIRST, SECOND)}
    for home in processes:
        mine = [s for s in SCENARIOS if s.home == home]
        processes[home] = len({s.earlier for s in mine}) + 2 * len(mine)
    assert sum(processes.values()) <= 80, processes  # one hermes process each: the suite stays near 4 min


def test_the_processes_ran_the_code_under_test_and_stayed_on_the_machine(
    first_home: Run, second_home: Run
) -> None:
    for live_run in (first_home, second_home):
        assert live_run.home.refused() == []
        done = run(
            [sys.executable, "-c", "import hermes_memory; print(hermes_memory.__file__)"], live_run.home.path
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().startswith(str(PACKAGE_ROOT)), (done.stdout, PACKAGE_ROOT)
