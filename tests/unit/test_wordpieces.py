"""``WordPieces.word_pieces``: the words not yet kept are read with one ``encode`` of them joined by
spaces, and each gets the pieces the tokenizer gives it alone (a small BERT-style tokenizer here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_memory.tier3._wordpieces import WordPieces

tokenizers = pytest.importorskip("tokenizers")

_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "tae", "##kw", "##ondo", "char", "##lotte", "'", "s", "lg",
          "##bt", "##q", "+", "cafe", "naive", "東", "京", "don", "t", "-", "a", "b"]  # fmt: skip


@pytest.fixture()
def pieces(tmp_path: Path) -> WordPieces:
    model = tokenizers.models.WordPiece({piece: i for i, piece in enumerate(_VOCAB)}, unk_token="[UNK]",
                                        max_input_chars_per_word=20)  # fmt: skip
    tokenizer = tokenizers.Tokenizer(model)
    tokenizer.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    return WordPieces(path, 128, "[test]")


_WORDS = ["taekwondo", "Charlotte's", "LGBTQ+", "Café", "naïve", "東京", "don't", "a-b", "unknown",
          "x" * 30, "taekwondo", "s"]  # fmt: skip


def test_each_word_has_the_pieces_it_has_alone(pieces: WordPieces) -> None:
    tokenizer: Any = pieces._tokenizer
    alone = [tokenizer.encode(word, add_special_tokens=False).ids for word in _WORDS]
    assert pieces.word_pieces(_WORDS) == alone
    assert pieces.word_pieces(_WORDS) == alone  # from the cache the second time
    assert alone[0] == [4, 5, 6] and alone[9] == [1]  # split into pieces; too long a word is [UNK]


def test_the_words_not_kept_are_read_with_one_encode(
    pieces: WordPieces, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    tokenizer: Any = pieces._tokenizer

    class Counting:
        def encode(self, text: str, add_special_tokens: bool = True) -> Any:
            calls.append(text)
            return tokenizer.encode(text, add_special_tokens=add_special_tokens)

        def encode_batch(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("encode_batch releases the interpreter lock for its thread pool")

    monkeypatch.setattr(pieces, "_tokenizer", Counting())
    pieces.word_pieces(["taekwondo", "Café"])
    assert calls == ["taekwondo Café"]
    pieces.word_pieces(["taekwondo", "don't", "Café", "a-b"])
    assert calls == ["taekwondo Café", "don't a-b"]  # only the words not kept
