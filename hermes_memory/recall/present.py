"""A question about the present: which turns' statements it no longer reads as true, and which turns
answer in their place.

A turn whose statement the memory has since superseded ("I work at Zalando", closed by "I joined Spotify
last month") is left out of the answer to a question about the present on its topic ("where do I work?").
The turn that states what replaced it takes its score: it answers the same question, and is the answer
now, whatever words the question shares with either.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from hermes_memory.recall._reads import ReadsSnapshot
from hermes_memory.records import Fact

# Function words a question is made of ("what", "does", "some", "other"...): as BM25 terms they match
# most turns and only add noise. A generic English list (tokens as ``fts_terms`` yields them), nothing
# taken from a benchmark's questions; broader than the store-level FTS stop-words on purpose. Tokens
# that are also content words ("won", "don", "may") stay searchable.
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can cannot could couldn did didn do does doesn doing down during each few for
    from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
    into is isn it its itself let me more most mustn my myself no nor not of off on once only or other
    ought our ours ourselves out over own same shan she should shouldn so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was wasn
    we were weren what when where which while who whom why with would wouldn you your yours yourself
    yourselves s t d ll m re ve also just will shall might must""".split()
)
_WORD = re.compile(r"[a-z0-9']+")


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """The words of ``text`` (lower case) that are not function words."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS)


def stem(word: str) -> str:
    """A crude English stem, enough to see that "live", "lives" and "living" share a topic."""
    word = word.casefold()
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def fact_topic(fact: Fact) -> set[str]:
    """What a fact is about, as stems: its predicate and object (or, without them, its content without
    the subject), never the subject itself ("user" is in half the questions)."""
    if fact.predicate:
        text = f"{fact.predicate.replace('_', ' ')} {fact.object or ''}"
    else:
        text = fact.content
        if fact.subject:
            text = re.sub(re.escape(fact.subject), " ", text, flags=re.I)
    return {stem(w) for w in content_words(text) if w not in {"user"}}


def off_the_present(stale: dict[str, Fact], present: bool, terms: Sequence[str]) -> set[str]:
    """Turns left out of the answer to a question about the present (``present``, with these content
    ``terms``): those whose superseded statement is on the question's topic ("where do I live now?" is
    not answered by where the user used to live)."""
    if not present or not stale:
        return set()
    topic = {stem(t) for t in terms}
    return {uuid for uuid, fact in stale.items() if topic & fact_topic(fact)}


def replacing_turns(
    dropped: Collection[str], stale: dict[str, Fact], reads: ReadsSnapshot
) -> dict[str, tuple[str, ...]]:
    """For each turn left out (``dropped``, its superseded statement in ``stale``), the turns that state
    the fact replacing it now (the end of its chain of replacements); a turn whose replacement came from
    no turn (a curated entry, a tool's write) has none."""
    currents = reads.current_of_many([stale[uuid] for uuid in dropped])
    out: dict[str, tuple[str, ...]] = {}
    for uuid in dropped:
        current = currents.get(stale[uuid].uuid)
        if current is not None and current.source_episodes:
            out[uuid] = current.source_episodes
    return out


__all__ = ["FUNCTION_WORDS", "content_words", "fact_topic", "off_the_present", "replacing_turns", "stem"]
