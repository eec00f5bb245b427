"""Integer arithmetic for the int8 MiniLM: how far each input channel of a weight product reaches.

The default ``local`` embedder multiplies int8 weights by inputs quantized to int8 as they arrive, one word
piece (row) at a time (``_onnx_graph``). A BERT encoder's inputs have a few channels far larger than the
rest (on [CLS], [SEP] and punctuation above all); quantized as they are, they take a row's whole int8
range and the other channels lose theirs: vectors of short texts then fall to cosine 0.97 against the
float encoder. Smoothing moves that range into the weights (SmoothQuant): input channel ``j`` is divided
by ``s_j = a_j ** alpha / w_j ** (1 - alpha)`` and the weights' row ``j`` multiplied by it, where
``a_j`` is the largest input seen in that channel and ``w_j`` the row's largest weight; the product is
unchanged, and both sides quantize with less loss.

``a_j`` comes from running the float encoder over calibration texts made up here (``calibration_texts``:
random words of the tokenizer's own vocabulary, one word repeated, characters of other scripts, marks
alone; a fixed seed), so no corpus is involved and anyone can make the file again:
``python -m hermes_memory.tier3.int8_calibration``. The maxima are shipped
(``data/minilm-int8-activations.npz``, 33 KB, float16) under the fingerprint of the weights they were
measured on; other weights are refused (``local-int8-float`` runs any file of this checkpoint in float).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import EmbeddingError
from hermes_memory.tier3._onnx_graph import WEIGHT_FIELDS, QuantMatrix
from hermes_memory.tier3.embedder import FloatArray

CALIBRATION_PATH = Path(__file__).parent / "data" / "minilm-int8-activations.npz"
# The share of an input channel's range moved into the weights (0.5-0.8 measured: 0.7 best on the
# agreement texts' worst cosine against the float encoder, 0.5 the mean's equal).
SMOOTHING_ALPHA = 0.7
_LENGTHS = (1, 2, 3, 5, 8, 13, 21, 34, 55)
_MARKS = (".", ",", "!", "?", "'s", ":", ";", "-", "...", "(", ")")
_FINGERPRINT = "fingerprint"
# Unicode blocks: Cyrillic, Arabic, Devanagari, CJK ideographs, Hangul, pictographs and emoji.
_SCRIPTS = (
    (0x0410, 0x0450), (0x0627, 0x064A), (0x0905, 0x0939),
    (0x4E00, 0x9FA0), (0xAC00, 0xD7A0), (0x1F300, 0x1F650),
)  # fmt: skip


def calibration_texts(vocabulary: Sequence[str], count: int = 240, seed: int = 7) -> list[str]:
    """``count`` texts of random whole words from ``vocabulary`` (word pieces that are not word
    continuations), lengths cycling through 1-55 words, a mark after about one word in seven; as many
    again of one such word repeated, and of random characters from other scripts and emoji (pieces
    outside the vocabulary among them); then every mark alone and every pair of marks."""
    words = sorted(w for w in vocabulary if w.isalpha() and not w.startswith("##"))
    rng = random.Random(seed)
    texts = []
    for n in range(count):
        out: list[str] = []
        for _ in range(_LENGTHS[n % len(_LENGTHS)]):
            out.append(rng.choice(words))
            if rng.random() < 0.15:
                out.append(rng.choice(_MARKS))
        texts.append(" ".join(out))
        size = _LENGTHS[(n + 4) % len(_LENGTHS)]
        texts.append(" ".join([rng.choice(words)] * size))
        start, end = _SCRIPTS[n % len(_SCRIPTS)]
        texts.append(" ".join(chr(rng.randrange(start, end)) * rng.randint(1, 3) for _ in range(size)))
    return texts + [a + b for a in ("", *_MARKS) for b in _MARKS]


def fingerprint(scales: Sequence[npt.NDArray[np.float32]]) -> str:
    """What identifies a model's int8 weights cheaply: the sha256 of their scales, in graph order."""
    digest = hashlib.sha256()
    for scale in scales:
        digest.update(np.ascontiguousarray(scale, dtype="<f4").tobytes())
    return digest.hexdigest()


def smoothed(weights: npt.NDArray[np.int8], scale: FloatArray, reach: FloatArray) -> QuantMatrix:
    """The int8 matrix (in x out, ``scale`` per column) requantized for inputs divided by the smoothing
    of ``reach``, the largest input seen in each channel (see the module docstring)."""
    floats = weights.astype(np.float32) * scale.reshape(1, -1)
    rows = np.maximum(np.abs(floats).max(axis=1), 1e-5)
    smoothing = np.maximum(reach, 1e-5) ** SMOOTHING_ALPHA / rows ** (1.0 - SMOOTHING_ALPHA)
    smoothing /= np.exp(np.log(smoothing).mean())  # centred on 1: the scales keep their magnitude
    floats *= smoothing[:, None]
    columns = np.maximum(np.abs(floats).max(axis=0), 1e-12) / 127.0
    requantized = np.clip(np.rint(floats / columns), -127, 127).astype(np.int8)
    return QuantMatrix(requantized, columns.astype(np.float32), smoothing.astype(np.float32))


def load_reach(expected: str, path: Path = CALIBRATION_PATH) -> dict[str, FloatArray] | None:
    """The shipped maxima keyed ``"<layer>.<field>"``, or None when they were measured on other weights.

    Raises EmbeddingError when the file is missing or unreadable (a broken install).
    """
    try:
        with np.load(path) as data:
            measured_on = str(data[_FINGERPRINT].item()) if _FINGERPRINT in data.files else ""
            stored = {n: data[n].astype(np.float32) for n in data.files if n != _FINGERPRINT}
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read the int8 calibration {path}: {exc}") from exc
    return stored if measured_on == expected else None


def measure_reach(model_file: Path) -> tuple[str, dict[str, FloatArray]]:
    """Run the float encoder of ``model_file`` over the calibration texts; (fingerprint, maxima)."""
    from hermes_memory.tier3 import int8_embedder
    from hermes_memory.tier3.minilm_embedder import _LAYERS, MiniLMModel

    tokens = int8_embedder.word_pieces()
    model = MiniLMModel(tokens, int8_embedder.int8_arrays(model_file), "numpy", None)
    reach: dict[str, FloatArray] = {}

    def observe(layer: int, field: str, x: FloatArray) -> None:
        key = f"{layer}.{field}"
        seen = np.abs(x).max(axis=0)
        reach[key] = np.maximum(reach[key], seen) if key in reach else seen

    model.observe = observe
    for text in calibration_texts(tokens.vocabulary()):
        model.encode([model.token_ids(text)])  # one at a time: no padding rows among the maxima
    if set(reach) != {f"{i}.{f}" for i in range(_LAYERS) for f in WEIGHT_FIELDS}:
        raise EmbeddingError(f"calibration saw products {sorted(reach)}")
    return int8_embedder.weights_fingerprint(model_file), reach


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the packaged model file and write ``CALIBRATION_PATH`` (or the path given)."""
    from hermes_memory.tier3.int8_embedder import packaged_model_file

    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0]) if args else CALIBRATION_PATH
    measured_on, reach = measure_reach(packaged_model_file())
    arrays = {key: value.astype(np.float16) for key, value in reach.items()}  # ranges: 3 digits will do
    save: Callable[..., None] = np.savez_compressed  # its stubs type every keyword as allow_pickle
    save(path, **arrays, **{_FINGERPRINT: np.array(measured_on)})
    print(json.dumps({"path": str(path), "fingerprint": measured_on, "products": len(reach)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CALIBRATION_PATH",
    "SMOOTHING_ALPHA",
    "calibration_texts",
    "fingerprint",
    "load_reach",
    "main",
    "measure_reach",
    "smoothed",
]
