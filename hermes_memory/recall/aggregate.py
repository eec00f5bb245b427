"""Speaker-centred priors for list and multi-hop questions: whose turns can answer the question.

A question about one person ("What books has Tim read?") is answered by that person's turns: the
speaker prior (``RecallSettings.speaker_boost``) ranks them up. Two further cues, both measured on
LoCoMo dev (``bench/locomo_research.py``) and kept because they held under leave-one-conversation-out:

  * a question naming two participants, one as its subject and the other as an object ("What did Jon
    say about Gina's store?", "Which city did John recommend to Tim?"), is about the first named: the
    subject gets a prior of its own (``subject_boost``), the question's speaker otherwise stays unknown;
  * a list question ("What books…", "Which cities…", ``query.asks_for_list``) gathers instances the
    person told of across sessions, and the other participant's turns (replies, questions back) take
    its ten places: after the neighbour pull they rank down (``list_other_speaker_penalty``).

All cues are generic English: nothing here is taken from a benchmark's questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Two names joined ("Jon and Gina", "Tim, John"), or a question about both at once: no single subject.
_COORDINATED = re.compile(r"\s*(?:,|and|&|or|nor)\s*", re.I)
_JOINT = re.compile(r"\b(?:both|together|each other|in common|share|shared|between)\b", re.I)


def subject_of(question: str, names: Sequence[str]) -> str | None:
    """The participant a question naming two of them is about: the first named, unless the two are
    named together ("Jon and Gina", "both", "in common"); None for a question naming one or none (a
    single name is the speaker prior's own case) or more than two."""
    if len(names) != 2 or _JOINT.search(question):
        return None
    spans: list[tuple[int, int, str]] = []
    for name in names:
        match = re.search(rf"\b{re.escape(name)}\b", question, re.I)
        if match is None:
            return None
        spans.append((match.start(), match.end(), name))
    spans.sort()
    (_, first_end, first), (second_start, _, _) = spans
    if _COORDINATED.fullmatch(question[first_end:second_start]):
        return None
    return first


def question_speaker(question: str, names: Sequence[str]) -> tuple[str | None, bool]:
    """Whose turns answer the question, casefolded, and whether the question names only them (True) or
    names them as its subject beside another participant (False); (None, False) when neither."""
    if len(names) == 1:
        return names[0].casefold(), True
    subject = subject_of(question, names)
    return (subject.casefold(), False) if subject is not None else (None, False)


__all__ = ["question_speaker", "subject_of"]
