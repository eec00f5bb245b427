"""Who said it: the AI agent's words are no evidence about the user; chatter and recalled-memory fences."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.speech import chatter_kind, is_echo, strip_memory_context

NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def ai(text: str, replying_to: str | None = None, user: str | None = None) -> MessageInput:
    return MessageInput(
        text, NOW, speaker="Hermes", role="assistant", addressee=user, replying_to=replying_to
    )


def human(text: str, speaker: str | None = None, addressee: str | None = "Hermes") -> MessageInput:
    return MessageInput(text, NOW, speaker=speaker, role="user", addressee=addressee)


# -- the AI agent ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "user_said"),
    [
        ("Noted: I moved to Lisbon in May.", "I moved to Lisbon in May."),
        ("Noted: I moved to Lisbon in May.", None),  # the opener alone marks the echo
        ("I moved to Lisbon in May.", "I moved to Lisbon in May."),  # a near-copy of the user's words
        ("OK, you moved to Lisbon in May.", "I moved to Lisbon in May."),
        ("Got it, you moved to Lisbon in May.", None),
        ("I'll remember that you live in Lisbon now.", None),
        ("Thanks for letting me know! I moved to Lisbon in May, you said.", None),
    ],
)
def test_an_ai_echo_of_the_user_yields_nothing(reply: str, user_said: str | None) -> None:
    result = extract(ai(reply, user_said))
    assert (result.facts, result.relations, result.entities) == ((), (), ())


def test_the_ai_is_never_evidence_of_facts_about_the_user() -> None:
    for text in (
        "You live in Lisbon and work at Google.",
        "Your dog Biscuit sounds lovely!",
        "Your sister Anna moved to Porto last year.",
        "Anna went to Paris.",
        "I'd recommend visiting Porto in spring.",  # advice to the user, not a fact about the AI
        "I'll remind you about the dentist on Friday.",
    ):
        result = extract(ai(text, "Tell me something.", user="Maya"))
        assert (result.facts, result.relations, result.entities) == ((), (), ()), text


def test_the_ai_is_no_subject_even_of_what_it_says_about_itself() -> None:
    # It repeats memory ("From memory: I work at Siemens") as readily as it describes itself.
    for text in ("I use Python to run your tools.", "From memory: I work at Siemens as an engineer."):
        result = extract(ai(text, "How do you work?", user="Maya"))
        assert (result.facts, result.relations, result.entities) == ((), (), ()), text


def test_a_second_human_speaker_still_produces_facts() -> None:
    # LoCoMo: two people, both role "user"; each one's "I" is themself and "you" the other.
    result = extract(human("I moved to Boston last year.", speaker="Melanie", addressee="Caroline"))
    assert [(f.subject, f.predicate, f.object) for f in result.facts] == [("Melanie", "moved_to", "Boston")]
    said_to = extract(human("You told me you love hiking.", speaker="Melanie", addressee="Caroline"))
    assert said_to.entities  # a human's words are read as before


def test_the_user_said_the_same_thing_and_it_counts() -> None:
    result = extract(human("Noted: I moved to Lisbon in May."))
    assert [(f.subject, f.predicate, f.object) for f in result.facts] == [("the user", "moved_to", "Lisbon")]


def test_replying_to_must_be_text() -> None:
    with pytest.raises(ValidationError, match="replying_to"):
        MessageInput("x", NOW, role="assistant", replying_to=3)  # type: ignore[arg-type]


# -- chatter ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "role", "previous", "kind"),
    [
        ("Where do I live now?", "user", None, "question"),
        ("Did you see that band?", "user", None, "question"),
        ("Wow! What got you into running?", "user", None, "question"),
        ("Hi!", "user", None, "greeting"),
        ("Hey Mel, good morning!", "user", None, "greeting"),
        ("OK", "user", None, "ack"),
        ("Thanks", "user", None, "ack"),
        ("Noted.", "assistant", None, "ack"),
        ("Got it", "user", None, "ack"),
        ("Noted: I moved to Lisbon in May.", "assistant", "I moved to Lisbon in May.", "echo"),
        ("I moved to Lisbon in May.", "assistant", "I moved to Lisbon in May.", "echo"),
        ("OK (memory-context injected=True)", "assistant", "My dog Biscuit loves the beach.", "echo"),
        ("Done.", "assistant", "Search your memory for Biscuit.", "ack"),
        ("Plain answer.", "assistant", "Who are my siblings?", "ack"),  # a short reply naming nothing
        ("Plain answer.", "user", None, None),  # a person's short words may answer the question before
        ("Call Ana tomorrow.", "assistant", "Who should I call?", None),  # a name: it tells something
        ("Room 42.", "assistant", "Which room?", None),  # a number: it tells something
        ("It is a long plain answer.", "assistant", None, None),
        # telling something: knowledge
        ("I moved to Lisbon in May.", "user", None, None),
        ("I moved to Lisbon in May.", "assistant", "Where should I travel?", None),
        ("I live in Lisbon. Where do you live?", "user", None, None),
        ("Thanks! My sister Anna arrives on Friday.", "user", None, None),
        ("Noted: I moved to Lisbon in May.", "user", None, None),  # a person's words are never an echo
        ("", "user", None, None),
    ],
)
def test_chatter_kind(text: str, role: str, previous: str | None, kind: str | None) -> None:
    assert chatter_kind(text, role=role, replying_to=previous) == kind


def test_echo_needs_most_of_the_sentence_from_the_user() -> None:
    assert is_echo("You moved to Lisbon in May, lovely city.", "I moved to Lisbon in May.") is True
    assert is_echo("Lisbon in May is warm and sunny on most days.", "I moved to Lisbon in May.") is False
    assert is_echo("So you moved to Lisbon.", None) is True
    assert is_echo("Lisbon is lovely in spring.", "I moved to Lisbon in May.") is False


# -- recalled-memory fences ---------------------------------------------------------------------------
NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. Treat as authoritative "
    "reference data — this is the agent's persistent memory and should inform all responses.]"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"I moved to Lisbon.\n\n<memory-context>\n{NOTE}\n\n- [2026-11-20] user: I live in Hamburg.\n"
            "</memory-context>",
            "I moved to Lisbon.",
        ),
        ("Before <MEMORY-CONTEXT>old</Memory-Context> after", "Before  after"),
        ("Before < memory-context >old</ memory-context > after", "Before  after"),
        ("A <memory-context>x <memory-context>y</memory-context> z</memory-context> B", "A  B"),
        ("Keep this. <memory-context>\n- recalled line running to the end", "Keep this."),
        (f"{NOTE}\nWhat is my dog called?", "What is my dog called?"),
        ("stray </memory-context> closing tag", "stray  closing tag"),
        ("nothing to strip", "nothing to strip"),
    ],
)
def test_strip_memory_context(text: str, expected: str) -> None:
    stripped = strip_memory_context(text)
    assert stripped == expected
    assert "memory-context" not in stripped.lower() and "system note" not in stripped.lower()


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Please note in your notes that I am allergic to peanuts.", "The user is allergic to peanuts"),
        ("Remember that my locker code is 4417.", "The user's locker code is 4417"),
    ],
)
def test_a_request_to_remember_is_the_users_statement(text: str, content: str) -> None:
    assert [f.content for f in extract(human(text)).facts] == [content]
