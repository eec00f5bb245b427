"""The MiniLM encoders run each text once and in length-sorted passes (a fake model that records what it
runs: no weights needed). If either mechanism were switched off, ingest would embed more word pieces
or pad more, and these tests would fail."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hermes_memory.tier3.embedder import FloatArray
from hermes_memory.tier3.minilm_embedder import MINILM_DIM, MiniLMEncoder


class _RecordingModel:
    """Word pieces = one per word; a text's vector is fixed by its pieces; every pass is recorded."""

    def __init__(self) -> None:
        self.passes: list[list[list[int]]] = []
        self.wide: list[bool] = []

    def token_ids(self, text: str) -> list[int]:
        return [101, *(sum(map(ord, w)) % 30000 for w in text.split()), 102]

    def encode(self, batch: Sequence[Sequence[int]], wide: bool = False) -> FloatArray:
        self.passes.append([list(ids) for ids in batch])
        self.wide.append(wide)
        out = np.zeros((len(batch), MINILM_DIM), dtype=np.float32)
        for row, ids in enumerate(batch):
            out[row, [i % MINILM_DIM for i in ids]] += 1.0
        return out

    def runs(self) -> int:
        return sum(len(p) for p in self.passes)


class _Encoder(MiniLMEncoder):
    name = "fake-minilm"
    model_id = "fake-minilm"
    RECENT_TEXTS = 4

    def __init__(self, batch_size: int = 2) -> None:
        super().__init__(cache_size=0)  # no query cache: what is reused here is the encoder's own
        self._batch_size = batch_size
        self._model = _RecordingModel()

    @property
    def model(self) -> _RecordingModel:  # type: ignore[override]
        return self._model

    @property
    def max_tokens(self) -> int:
        return 256


def test_a_text_repeated_within_a_call_is_run_once() -> None:
    enc = _Encoder()
    out = enc.embed_document(["Caroline moved to Lisbon", "a dog", "Caroline moved to Lisbon"])
    assert enc.model.runs() == 2
    assert np.array_equal(out[0], out[2])


def test_a_document_embedded_lately_is_not_run_again() -> None:
    enc = _Encoder()
    first = enc.embed_document(["the user lives in Lisbon", "the user lives in something"])
    more = enc.embed_document(["the user lives in Lisbon", "a new fact"])
    assert enc.model.runs() == 3
    assert np.array_equal(first[0], more[0])


def test_queries_and_the_models_own_pass_are_not_served_from_documents() -> None:
    """The perf bench times ``_embed`` as the model's pass; a query has its own cache."""
    enc = _Encoder()
    enc.embed_document(["the user lives in Lisbon"])
    enc.embed_query(["the user lives in Lisbon"])
    enc._embed(["the user lives in Lisbon"], "query")
    assert enc.model.runs() == 3


def test_only_the_last_texts_are_kept() -> None:
    enc = _Encoder()
    enc.embed_document([f"text number {i}" for i in range(5)])  # one more than RECENT_TEXTS
    enc.embed_document(["text number 0", "text number 4"])
    assert enc.model.runs() == 6  # the oldest was run again, the newest was not


def test_texts_run_sorted_by_word_pieces_in_passes_of_the_batch_size() -> None:
    enc = _Encoder(batch_size=2)
    texts = ["one two three four five", "one", "one two three", "one two", "one two three four"]
    out = enc.embed_document(texts)
    lengths = [[len(ids) for ids in p] for p in enc.model.passes]
    assert all(len(p) <= 2 for p in lengths)
    flat = [n for p in lengths for n in p]
    assert flat == sorted(flat)
    # and each row is its own text's vector, whatever pass it ran in
    alone = _Encoder().embed_document([texts[0]])
    assert np.allclose(out[0], alone[0])


def test_texts_to_store_and_many_queries_run_wide_a_question_not() -> None:
    """Texts to be stored run on the model's bulk threads, however few; queries only when they need
    several passes: a question stays on one thread."""
    enc = _Encoder(batch_size=2)
    enc.embed_document(["one two", "three four", "five six"])
    enc.embed_document(["seven", "eight nine"])
    enc.embed_query(["ten eleven twelve thirteen"])
    enc.embed_query(["fourteen", "fifteen sixteen", "seventeen"])
    assert enc.model.wide == [True, True, True, False, True, True]


def test_an_encoder_may_keep_a_few_texts_to_store_on_one_thread() -> None:
    """The integer encoder (``FEW_TO_STORE_WIDE`` off) runs a few texts to store on one thread, and
    still more than one pass holds on the bulk threads."""

    class _Narrow(_Encoder):
        FEW_TO_STORE_WIDE = False

    enc = _Narrow(batch_size=2)
    enc.embed_document(["seven", "eight nine"])
    enc.embed_document(["one two", "three four", "five six"])
    assert enc.model.wide == [False, True, True]
    from hermes_memory.tier3.int8_embedder import Int8MiniLMEmbedder, IntegerMiniLMEmbedder

    assert Int8MiniLMEmbedder.FEW_TO_STORE_WIDE and not IntegerMiniLMEmbedder.FEW_TO_STORE_WIDE
