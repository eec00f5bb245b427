"""Noise gate, code masking and sentence windows."""

from __future__ import annotations

import pytest

from hermes_memory.extract.prefilter import (
    MAX_SENTENCE_CHARS,
    classify_noise,
    mask_code,
    split_sentences,
)

NAMES = ("Caroline", "Melanie")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("🎉🎉🎉", "no_words"),
        ("!!! ...", "no_words"),
        ("ok", "filler"),
        ("lol 😂", "filler"),
        ("Thanks, Melanie!", "filler"),
        ("Hey Mel! Good to see you! How have you been?", "filler"),
        ("Thanks so much! You too!", "filler"),
        ("Catch ya later! Talk soon. Take care and enjoy the rest of your day.", "filler"),
        ("Haha yeah, totally agree!", "filler"),
    ],
)
def test_noise_is_flagged_with_a_reason(text: str, reason: str) -> None:
    verdict = classify_noise(text, NAMES)
    assert verdict.is_noise
    assert verdict.reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "ok, I moved to Boston.",
        "Thanks! I adopted a puppy yesterday.",
        "lol my sister lives in Paris",
        "我搬到了北京",  # content in another script is never dropped
        "Hey, I started learning Python!",
    ],
)
def test_content_is_never_noise(text: str) -> None:
    assert not classify_noise(text, NAMES).is_noise


def test_long_messages_are_never_noise() -> None:
    assert not classify_noise("thanks " * 40, NAMES).is_noise


def test_mask_code_blanks_fences_and_inline_code_keeping_offsets() -> None:
    text = "I use `pip install x` daily.\n```python\nimport os  # I moved to Paris\n```\nI love Rust."
    masked, found = mask_code(text)
    assert found
    assert len(masked) == len(text)
    assert "Paris" not in masked and "pip" not in masked
    assert masked.index("I love Rust.") == text.index("I love Rust.")
    assert masked.count("\n") == text.count("\n")


def test_unclosed_fence_masks_to_the_end() -> None:
    masked, found = mask_code("Look:\n```\nI moved to Paris")
    assert found and "Paris" not in masked


def test_text_without_code_is_returned_unchanged() -> None:
    assert mask_code("plain text") == ("plain text", False)


def test_split_sentences_keeps_abbreviations_and_offsets() -> None:
    text = "I met Dr. Smith at St. Mary's yesterday. It was fun!\nNew line here? Yes"
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "I met Dr. Smith at St. Mary's yesterday.", "It was fun!", "New line here?", "Yes",
    ]
    for s in sentences:
        assert text[s.start:s.start + len(s.text)] == s.text


def test_split_sentences_cuts_runaway_sentences_into_windows() -> None:
    text = "word " * 1000
    sentences = split_sentences(text)
    assert len(sentences) > 1
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in sentences)
    unbroken = split_sentences("x" * 5000)
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in unbroken)
