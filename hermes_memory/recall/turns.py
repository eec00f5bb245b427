"""Recall's turns: loading them, reading the neighbours of the strongest, the priors and pulls that
rank them (``TurnRanker``), and which chatter turns stay candidates."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from hermes_memory.recall import aggregate, expand, instances, present
from hermes_memory.recall import query as cues
from hermes_memory.recall._reads import ReadsSnapshot
from hermes_memory.recall.candidates import Query
from hermes_memory.recall.hits import Turn, rescored
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.records import Fact, Hit
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.embedder import StaticVectors
from hermes_memory.tier3.semantic import SemanticMemory


class TurnRanker:
    """The turns of a recall: loaded (from the read cache or one query), the neighbours read for the
    strongest, the stand-ins of turns left out, the priors and neighbour pulls, the category -> instance
    order."""

    def __init__(
        self,
        tier2: Tier2,
        semantic: SemanticMemory | None,
        settings: RecallSettings,
        participants: Callable[[], list[str]],
        phrases: instances.PhraseCache,
    ):
        self._tier2 = tier2
        self._semantic = semantic
        self.settings = settings
        self._participants = participants
        self._phrases = phrases
        self._checked: tuple[object, StaticVectors | None] | None = None  # (embedder, it if static vectors)

    @staticmethod
    def thread_rows(
        seeds: list[int], neighbours: dict[int, tuple[int | None, int | None]], reads: ReadsSnapshot
    ) -> dict[int, tuple[int | None, int | None]]:
        """The neighbours (with theirs) of the ``seeds`` that are not candidates themselves: one read,
        bounded by the seeds, so the turns two away from the seeds load too (``expand.thread_pulls``)."""
        beside = {n for r in seeds for n in neighbours[r] if n is not None and n not in neighbours}
        if not beside:
            return {}
        rows = reads.episode_rows(list(beside), [])
        return {row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in rows}

    def stand_ins(
        self,
        dropped: set[str],
        stale: dict[str, Fact],
        neighbours: dict[int, tuple[int | None, int | None]],
        turns: dict[int, Turn],
        reads: ReadsSnapshot,
    ) -> tuple[set[str], dict[int, list[int]]]:
        """The turns left out after all, and by row id the turns that stand in for each: those stating
        what replaced its statement (``present.replacing_turns``), loaded into ``neighbours`` and
        ``turns`` when they are not candidates. A turn that states a replacement itself stays in ("not
        Hamburg any more: Berlin")."""
        replacing = present.replacing_turns(dropped, stale, reads)
        rows = {turn.uuid: row_id for row_id, turn in turns.items()}
        missing = list({u for uuids in replacing.values() for u in uuids if u not in rows})
        if missing:
            found = {row: (prev, after) for row, _, prev, after in reads.episode_rows([], missing)}
            neighbours.update(found)
            turns.update(self.load_turns(found, reads))
            rows.update({turns[row_id].uuid: row_id for row_id in found if row_id in turns})
        stating = {u for uuids in replacing.values() for u in uuids}
        stand_ins = {
            rows[uuid]: [rows[u] for u in replacing[uuid] if u in rows]
            for uuid in replacing if uuid in rows and uuid not in stating
        }  # fmt: skip
        return dropped - stating, stand_ins

    def load_turns(
        self, neighbours: dict[int, tuple[int | None, int | None]], reads: ReadsSnapshot
    ) -> dict[int, Turn]:
        """The candidates and their neighbours, from the read cache or (those not in it) one query."""
        wanted = set(neighbours)
        wanted.update(n for pair in neighbours.values() for n in pair if n is not None)

        def load(missing: list[int]) -> dict[int, Turn]:
            return {row[0]: Turn.of_row(row) for row in self._tier2.episodes.turn_rows(missing)}

        return reads.turns(list(wanted), load)

    def turn_priors(
        self,
        scores: dict[int, float],
        turns: dict[int, Turn],
        neighbours: dict[int, tuple[int | None, int | None]],
        q: Query,
        as_of: float | None,
        session_id: str | None,
        stale: set[str],
        dropped: set[str],
        stand_ins: dict[int, list[int]],
    ) -> dict[int, float]:
        st = self.settings
        boosted = dict(scores)
        lent: dict[int, float] = {}  # what the turns left out leave their stand-ins
        # Whose turns answer it: the one person it names, or the subject of two (``recall.aggregate``).
        speaker, sole = aggregate.question_speaker(q.text, q.names)
        by_speaker = 1.0 + (st.speaker_boost if sole else st.subject_boost)
        span, by_date = q.span, 1.0 + st.date_boost
        turn_of = turns.get
        for row_id in list(boosted) if speaker or span is not None or stale or dropped else ():
            turn = turn_of(row_id)
            if turn is None:
                continue
            if speaker and turn.speaker_key == speaker:
                boosted[row_id] *= by_speaker
            if span is not None and span[0] <= turn.timestamp < span[1] + 86400.0:
                boosted[row_id] *= by_date
            if not dropped and not stale:
                continue
            if turn.uuid in dropped:
                # A turn left out (superseded, the question about the present) lends its neighbours
                # nothing: the acknowledgement after "I live in Hamburg" is not news about where one
                # lives. What replaced its statement answers in its place, with its score.
                score = boosted.pop(row_id)
                for other in stand_ins.get(row_id, ()):
                    lent[other] = max(lent.get(other, 0.0), score)
            elif turn.uuid in stale:
                boosted[row_id] *= 1.0 - st.superseded_penalty
        for row_id, score in lent.items():
            boosted[row_id] = max(boosted.get(row_id, 0.0), score)
        # Neighbour expansion: s'(i) = s(i) + w * max(s(i-1), s(i+1)), same session, pre-expansion scores;
        # and the same speaker two turns away, after the other's reply (``expand.thread_pulls``), read in
        # the same pass over the candidates.
        pulled, thread = expand.neighbour_pulls(boosted, neighbours, turns, threads=st.thread_pull > 0)
        final = boosted  # the pulls were worked out from the scores before them: no copy needed
        so_far = final.get
        weight = st.neighbour
        for row_id, best in pulled.items():
            final[row_id] = so_far(row_id, 0.0) + weight * best
        weight = st.thread_pull
        for row_id, best in thread.items():
            final[row_id] = so_far(row_id, 0.0) + weight * best
        people = set(self._participants()) if q.answer else set()
        # A list question about one person: the other participant's turns rank down once they have lent
        # their neighbours their pull (their replies fill the list, the person's instances are the answer).
        other_speaker = 1.0 - st.list_other_speaker_penalty if q.listing and speaker else 1.0
        assistant = 1.0 - st.assistant_turn_penalty
        in_session = 1.0 + st.session_boost
        asking = 1.0 - st.question_turn_penalty
        answer_boost = 1.0 + st.answer_type_boost
        out: dict[int, float] = {}
        chatter: list[int] = []  # chatter turns put in ``out``: those no person asked another are taken out
        # No prior of the question's own applies (no past time, turn left out, session, speaker or answer
        # type): a person's plain statement keeps its score (most turns; the loop runs over hundreds).
        as_asked = (as_of is None and not dropped and session_id is None and other_speaker == 1.0
                    and not q.answer)  # fmt: skip
        for row_id, value in final.items():
            turn = turn_of(row_id)
            if turn is None:
                continue
            if as_asked and turn.plain:
                out[row_id] = value
                continue
            if (as_of is not None and turn.timestamp > as_of) or (dropped and turn.uuid in dropped):
                continue
            if turn.chatter is not None:
                chatter.append(row_id)
            if turn.role == "assistant":
                value *= assistant
            if session_id is not None and turn.session_id == session_id:
                value *= in_session
            if turn.question:
                value *= asking
            if other_speaker != 1.0 and turn.speaker_key != speaker:
                value *= other_speaker
            if q.answer and cues.can_answer_with(turn.answers, q.answer, people):
                value *= answer_boost
            out[row_id] = value
        # A turn that only asks, greets, acknowledges or echoes is no knowledge: it has lent its pull to its
        # neighbours above and is no hit itself (unless a person asked it of another). Whether one was
        # asked between people depends on that turn alone, so only the chatter turns are looked at (a few
        # dozen of the hundreds of candidates); the others keep their order in ``out``.
        if chatter:
            kept = asked_between_people(chatter, neighbours, turns)
            for row_id in chatter:
                if row_id not in kept:
                    del out[row_id]
        return out

    def prepare_phrases(self, scores: dict[int, float], reads: ReadsSnapshot) -> None:
        """Work out the phrases of the ``instance_early`` best of ``scores`` (the keyword side's turns) not
        yet in the cache, for ``instance_prior`` to read: run on the keyword side's thread while the
        question is embedded (the other core is idle then), the turns its lexical match ranks first are
        among the first hits of most category questions."""
        embedder = self._static_vectors()
        if embedder is None:
            return
        best = heapq.nlargest(self.settings.instance_early, scores, key=scores.__getitem__)
        self._phrases_of(list(self.load_turns(dict.fromkeys(best, (None, None)), reads).values()), embedder)

    def _static_vectors(self) -> StaticVectors | None:
        """The store's embedder when it gives context-free vectors (what the instance prior matches with);
        else None. The check is kept for the embedder it was made for: a protocol's ``isinstance`` looks
        up each of its members (tens of microseconds through a wrapper's ``__getattr__``)."""
        assert self._semantic is not None
        embedder = self._semantic.embedder
        checked = self._checked
        if checked is None or checked[0] is not embedder:
            checked = self._checked = (embedder, embedder if isinstance(embedder, StaticVectors) else None)
        return checked[1]

    def _phrases_of(self, turns: list[Turn], embedder: StaticVectors) -> list[instances.Phrases]:
        """The turns' phrases from the cache (those not in it worked out together), as the instance prior
        reads them."""
        st = self.settings
        texts = [(turn.uuid, turn.text) for turn in turns]
        return self._phrases.get_many(texts, embedder, st.instance_window, st.instance_words)

    def instance_prior(
        self, ranked: list[Hit], turns: dict[int, Turn], rows: dict[str, int], category: str
    ) -> list[Hit]:
        """``ranked`` reordered by ``instances.instance_order``: turns among the ``instance_depth`` first
        hits whose phrases name an instance of the question's category rank up (behind the first
        ``instance_keep``); scores still descend. ``rows``: each turn hit's row id (of ``turns``) by
        its uuid. Unchanged for an embedder without context-free vectors."""
        embedder = self._static_vectors()
        st = self.settings
        if embedder is None or len(ranked) <= st.instance_keep:
            return ranked
        qvec = instances.query_vector(category, embedder)
        if qvec is None:
            return ranked
        found = [(i, turns[row]) for i, hit in enumerate(ranked[: st.instance_depth])
                 if hit.kind == "episode" and hit.source_ids
                 and (row := rows.get(hit.source_ids[0])) is not None]  # fmt: skip
        turn_phrases = self._phrases_of([turn for _, turn in found], embedder)
        best = instances.best_matches(turn_phrases, qvec, instances.stems(category))
        matches = {i: m for (i, _), m in zip(found, best, strict=True) if m is not None}
        scores = instances.instance_order(
            [h.score for h in ranked], matches, st.instance_keep, st.instance_prior
        )
        order = sorted(range(len(ranked)), key=lambda i: -scores[i])  # stable: ties keep their order
        out: list[Hit] = []
        for i in order:
            hit = ranked[i]
            score = min(scores[i], out[-1].score) if out else scores[i]
            out.append(hit if score == hit.score else rescored(hit, score, hit.tier))
        return out


def asked_between_people(
    rows: Iterable[int], neighbours: dict[int, tuple[int | None, int | None]], turns: dict[int, Turn]
) -> set[int]:
    """Of ``rows``, the chatter turns that are a person's question to another person beside it in the
    session (a loaded turn next to it: one of its own neighbours, or a candidate it is next to).

    In a conversation between people the question is part of what they told each other (it carries the
    topic its answer leans on: LoCoMo evidence is sometimes the question, and dropping those turns cost
    0.0067 recall@10 on one conversation), so it stays a candidate (ranked down as any question). In a
    chat with the AI the user's neighbours are the AI's turns: the question is a request, never recalled.

    A question's own neighbours are looked at first; only those left are looked for among the
    candidates' neighbours, in one pass (not a map of every loaded turn's candidates built per recall).
    """
    kept: set[int] = set()
    left: dict[int, Turn] = {}
    turn_of = turns.get
    for row_id in rows:
        turn = turn_of(row_id)
        if turn is None or turn.chatter != "question" or turn.role == "assistant":
            continue
        pair = neighbours.get(row_id, ())
        if any(_answers_to(turn, turn_of(other)) for other in pair if other is not None):
            kept.add(row_id)
        else:
            left[row_id] = turn
    if left:
        for candidate, (prev_id, next_id) in neighbours.items():
            if prev_id in left and _answers_to(left[prev_id], turn_of(candidate)):
                kept.add(prev_id)
            if next_id in left and _answers_to(left[next_id], turn_of(candidate)):
                kept.add(next_id)
    return kept


def _answers_to(question: Turn, other: Turn | None) -> bool:
    """Whether ``other`` (a loaded turn beside ``question``, or None) is another person's turn."""
    return other is not None and other.role != "assistant" and other.speaker != question.speaker


__all__ = ["TurnRanker", "asked_between_people"]
