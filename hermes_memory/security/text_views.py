"""How text is read for a scan: NFKC, the look-alike skeleton, separators read as spaces, the folded view."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

# A view is a text a pattern is tried on, with the index in the NFKC text of each of its characters
# (None: the same indices).
View = tuple[str, list[int] | None]

# Every character that renders as nothing: Hermes' 17 (``threat_patterns.INVISIBLE_CHARS``), every
# Unicode format character (category Cf, Unicode 14: soft hyphen, Arabic/Syriac marks, LRM/RLM/ALM,
# invisible operators, deprecated format controls, interlinear annotation, tag characters), the Hangul
# fillers, Khmer inherent vowels, Mongolian variation selectors and the variation-selector supplement
# (used to smuggle bytes after an emoji).
# The 16 emoji/text variation selectors U+FE00-FE0F are left alone: ordinary emoji carry them.
HIDDEN_RE: Final = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Look-alike letters folded to the Latin letter they imitate (one character each), for the skeleton.
# The table applies after NFKC, so it lists what NFKC leaves (Greek lunate sigma "ϲ" becomes final sigma
# "ς": both are here). Cherokee letters are listed upper case; their lower-case forms are added below.
_CONFUSABLE_PAIRS: Final = (
    ("аеёіїјорсухѕһԁԛԝɡкмтвнАВЕКМНОРСТХЅІЈԚԜҮ", "aeeiijopcyxshdqwgkmtbhABEKMHOPCTXSIJQWY"),
    ("гпԍѡүѵɩГПԌѴЬЗбьӏ", "rngwyvirngVb3bbl"),
    ("αεινκορτυχϲςΑΒΕΖΗΙΚΜΝΟΡΤΥΧβϐγ", "aeivkoptuxccABEZHIKMNOPTYXbby"),
    ("ıȷɑօսոռհցզᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ", "ijaounnhgqabcdeghijklmnoprstuvwyz"),
    ("ᎠᎡᎢᎥᎩᎪᎫᎬᎳᎷᎻᏀᏂᏃᏏᏕᏚᏞᏟᏢᏦᏴᏙᏒᎤ", "DRTiyAJEWMHGhZbSSLCPKBVRu"),
)
CONFUSABLES: Final = {
    **{ord(a): b for src, dst in _CONFUSABLE_PAIRS for a, b in zip(src, dst, strict=True)},
    **{ord(a.lower()): b.lower() for a, b in zip(*_CONFUSABLE_PAIRS[-1], strict=True) if a.lower() != a},
}
# Words joined by separators (ignore_all_previous_instructions) are also read with spaces instead.
SEPARATORS: Final = str.maketrans("_-", "  ")


def skeleton(text: str) -> View:
    """``text`` with look-alikes folded to Latin and combining marks and invisible characters dropped;
    plus, for each skeleton index, the index in ``text`` it came from (None when nothing was dropped,
    so indices agree)."""
    if text.isascii():  # the common case: nothing to drop or fold, no per-character loop
        return text, None
    chars: list[str] = []
    origin: list[int] = []
    for index, ch in enumerate(text):
        if unicodedata.combining(ch) or HIDDEN_RE.match(ch):
            continue
        chars.append(ch)
        origin.append(index)
    return "".join(chars).translate(CONFUSABLES), origin


def views_of(normalised: str) -> list[View]:
    """The texts each pattern is tried on: the NFKC text, its skeleton, and the skeleton with ``_``/``-``
    read as spaces (each only when it differs from the one before)."""
    folded_look_alikes, origin = skeleton(normalised)
    views: list[View] = [(normalised, None)]
    if folded_look_alikes != normalised:
        views.append((folded_look_alikes, origin))
    separated = folded_look_alikes.translate(SEPARATORS)
    if separated != folded_look_alikes:
        views.append((separated, origin))
    return views


def skeleton_view(views: list[View]) -> View:
    """The skeleton view among ``views_of``' output (the NFKC text itself when nothing was folded)."""
    return views[1] if len(views) > 1 and views[1][1] is not None else (views[0][0], None)


def source_span(origin: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """A match span in a view, as a span of the NFKC text."""
    if origin is None:
        return start, end
    return origin[start], origin[end - 1] + 1


# Non-ASCII characters as the folded view reads them (None: dropped), filled in as they are first met.
_FOLD: dict[int, str | None] = {}


def _learn_folds(text: str) -> None:
    for ch in set(text):
        if ord(ch) > 127 and ord(ch) not in _FOLD:
            dropped = unicodedata.combining(ch) or HIDDEN_RE.match(ch)
            _FOLD[ord(ch)] = None if dropped else ch.translate(CONFUSABLES)


def folded(text: str) -> str:
    """Lower-case skeleton of the NFKC text without combining marks: a literal any view of ``text``
    matches (case-insensitively) is a substring of it. Per character, through a table (no loop here)."""
    if text.isascii():
        return text.lower()
    normalised = unicodedata.normalize("NFKC", text)
    _learn_folds(normalised)
    lowered = normalised.translate(_FOLD).casefold()
    if lowered.isascii():
        return lowered
    _learn_folds(lowered)  # casefold can add combining marks ("İ" -> "i" + U+0307)
    return lowered.translate(_FOLD)


__all__ = [
    "CONFUSABLES",
    "HIDDEN_RE",
    "SEPARATORS",
    "View",
    "folded",
    "skeleton",
    "skeleton_view",
    "source_span",
    "views_of",
]
