"""Chunking by approximate tokens, and the payload builders for the two seed collections."""

from __future__ import annotations

import itertools

import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.tier3.backend import TEXT_PREVIEW_CHARS
from hermes_memory.tier3.chunks import approx_tokens, chunk_payload, chunk_text, entity_payload, text_hash


def test_a_turn_that_fits_is_one_chunk() -> None:
    text = "  I adopted a puppy yesterday. His name is Rex!  "
    chunks = chunk_text(text, chunk_size=50, chunk_overlap=5)
    assert len(chunks) == 1
    assert chunks[0].text == text.strip()
    assert chunks[0].index == 0
    assert chunks[0].tokens == approx_tokens(text)


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text("   \n ", chunk_size=10, chunk_overlap=2) == []


def test_long_text_without_sentences_is_cut_in_overlapping_windows() -> None:
    words = [f"w{i}" for i in range(100)]
    text = " ".join(words)
    chunks = chunk_text(text, chunk_size=30, chunk_overlap=5)
    assert all(c.tokens <= 30 for c in chunks)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
    for prev, nxt in itertools.pairwise(chunks):
        assert prev.text.split()[-5:] == nxt.text.split()[:5]
    covered = {w for c in chunks for w in c.text.split()}
    assert covered == set(words)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_cuts_prefer_a_sentence_end() -> None:
    sentence = "This is a sentence of exactly ten tokens here ."  # 10 tokens
    text = " ".join([sentence.replace(" .", ".")] * 6)
    chunks = chunk_text(text, chunk_size=25, chunk_overlap=0)
    assert all(c.text.endswith(".") for c in chunks)
    assert all(c.tokens <= 25 for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


def test_overlap_never_stalls_progress() -> None:
    text = "Short one. " + "word " * 200
    chunks = chunk_text(text, chunk_size=20, chunk_overlap=19)
    starts = [c.start for c in chunks]
    assert starts == sorted(set(starts))
    assert chunks[-1].end == len(text.rstrip())


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-1, 0), (10, 10), (10, -1)])
def test_bad_sizes_are_validation_errors(size: int, overlap: int) -> None:
    with pytest.raises(ValidationError):
        chunk_text("some text", chunk_size=size, chunk_overlap=overlap)


def test_chunk_payload_has_the_seed_fields_and_drops_none() -> None:
    text = "x" * 500
    payload = chunk_payload(
        chunk_id="chunk:1",
        text=text,
        source_type="session",
        timestamp=1700000000,
        session_id="s1",
        message_id=7,
    )
    assert payload == {
        "chunk_id": "chunk:1",
        "session_id": "s1",
        "message_id": 7,
        "source_type": "session",
        "timestamp": 1700000000.0,
        "content_hash": text_hash(text),
        "text_preview": "x" * TEXT_PREVIEW_CHARS,
    }
    given = chunk_payload(chunk_id="c", text="t", source_type="fact", timestamp=1.0, content_hash="abc")
    assert given["content_hash"] == "abc"


def test_text_hash_ignores_whitespace_layout_only() -> None:
    assert text_hash("a  b\n c") == text_hash("a b c")
    assert text_hash("a b c") != text_hash("a b d")


def test_entity_payload() -> None:
    assert entity_payload(entity_id="e1", entity_name="Rex", entity_type="pet") == {
        "entity_id": "e1",
        "entity_name": "Rex",
        "entity_type": "pet",
    }
