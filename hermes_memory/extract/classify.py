"""Fact category and salience (how much a fact is worth remembering, Engram-style, in [0, 1]).

Salience is the encoding-time weight that later importance decay starts from: personal facts,
life events, decisions, plans and preferences score high; small talk low. It is additive and
clamped: base by category, plus cues found in the text, minus hedges.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_CATEGORY_OF: dict[str, str] = {
    **dict.fromkeys(
        (
            "lives_in",
            "lived_in",
            "works_at",
            "worked_at",
            "studies_at",
            "studied_at",
            "studies",
            "is_a",
            "is_from",
            "owns",
            "member_of",
        ),
        "user",
    ),
    **dict.fromkeys(("likes", "dislikes", "prefers", "interested_in", "wants", "plays"), "preference"),
    **dict.fromkeys(
        (
            "married_to",
            "partner_of",
            "sibling_of",
            "parent_of",
            "child_of",
            "friend_of",
            "relative_of",
            "colleague_of",
            "reports_to",
            "knows",
            "has_pet",
        ),
        "relationship",
    ),
    **dict.fromkeys(
        ("visited", "attended", "moved_to", "moved_from", "adopted", "bought", "started", "learned", "plans"),
        "event",
    ),
    "works_on": "project",
    "uses": "tool",
    "depends_on": "domain",
}
_BASE = {
    "user": 0.6,
    "relationship": 0.6,
    "event": 0.55,
    "preference": 0.5,
    "project": 0.55,
    "tool": 0.5,
    "domain": 0.45,
    "general": 0.3,
}
_LIFE_EVENT = (
    r"married|engaged|divorc\w*|wedding|born|pregnan\w*|baby|graduat\w*|moved|moving|new job|hired|fired|"
    r"promot\w*|retir\w*|passed away|died|funeral|broke up|accident|diagnos\w*|surgery|hospital|adopt\w*|"
    r"new home|bought a house|started a business|quit|laid off|came out|transition\w*|anniversary|birthday"
)
_DECISION = r"decided|decision|plan(?:s|ning|ned)?|going to|gonna|will|signed up|committed|promise\w*|goal"
_PREFERENCE = r"love[sd]?|like[sd]?|enjoy\w*|favou?rite|prefer\w*|hate[sd]?|passion\w*|into"
_EMOTION = (
    r"amazing|awful|terrible|devastat\w*|thrill\w*|proud|scared|afraid|heartbroken|overjoyed|struggl\w*"
)
_EVENT_VERB = (
    r"went|visited|travell?ed|took|attended|joined|started|finished|won|lost|bought|ran|hiked|celebrated|"
    r"adopted|moved|met|watched|painted|wrote|cooked|baked|built|created|organi[sz]ed|volunteered|"
    r"participated|signed|graduated|performed|competed|launched|published|released|received|learned|"
    r"taught|explored|climbed|camped|swam|drove|flew|hosted|threw|spent|opened|completed|got back|gave|made|"
    r"saw|played|sang|danced|scored|donated|tackled|presented|dyed|printed|filmed|interviewed|auditioned|"
    r"trip|vacation|road trip|concert|festival|conference|party|wedding|competition|tournament|game"
)
_HEDGE = r"maybe|might|probably|perhaps|i guess|i think|kind of|kinda|sort of|not sure"
_SMALL_TALK = r"weather|how are you|what's up|nice to|good to see|talk soon|see you"


@functools.cache
def _cue(name: str) -> re.Pattern[str]:
    source = {
        "life": _LIFE_EVENT,
        "decision": _DECISION,
        "preference": _PREFERENCE,
        "emotion": _EMOTION,
        "hedge": _HEDGE,
        "small": _SMALL_TALK,
        "event": _EVENT_VERB,
    }[name]
    return re.compile(rf"\b(?:{source})\b")  # matched against lower-cased text (much faster)


def category_for(predicate: str, content: str = "", *, has_time: bool = False) -> str:
    """The fixed category of a fact (see types.CATEGORIES) from its predicate, else from its wording."""
    category = _CATEGORY_OF.get(predicate)
    if category is not None:
        return category
    content = content.lower()
    if _cue("life").search(content) or (has_time and _cue("decision").search(content)):
        return "event"
    if _cue("preference").search(content):
        return "preference"
    if has_time or _cue("event").search(content):
        return "event"
    return "general"


def salience(
    content: str,
    category: str,
    *,
    has_time: bool = False,
    first_person: bool = True,
    negated: bool = False,
    confidence: float = 1.0,
) -> float:
    """Encoding-time salience in [0, 1] of one fact."""
    score = _BASE.get(category, 0.3)
    content = content.lower()
    if _cue("life").search(content):
        score += 0.2
    if _cue("decision").search(content):
        score += 0.1
    if category != "preference" and _cue("preference").search(content):
        score += 0.05
    if _cue("emotion").search(content):
        score += 0.05
    if has_time:
        score += 0.05
    if first_person:
        score += 0.05
    if _cue("hedge").search(content):
        score -= 0.15
    if _cue("small").search(content):
        score -= 0.2
    if negated:
        score -= 0.05
    score *= 0.75 + 0.25 * max(0.0, min(1.0, confidence))
    return round(max(0.05, min(1.0, score)), 3)


def message_salience(fact_saliences: Iterable[float], *, is_noise: bool, has_entities: bool) -> float:
    """Salience of a whole message: its best fact, a floor for content without facts, low for noise."""
    if is_noise:
        return 0.05
    best = max(fact_saliences, default=0.0)
    return round(max(best, 0.25 if has_entities else 0.15), 3)


__all__ = ["category_for", "message_salience", "salience"]
