"""The update bench's figures as the tables ``python -m hermes_memory.bench.updates`` prints."""

from __future__ import annotations

from typing import Any


def table(result: dict[str, Any]) -> str:
    trained = result["training"]
    crowd = result["crowded_leave_one_family_out"]["distractors_per_pair"]
    lines = [
        f"{result['pairs']} pairs, {result['families']} families, {result['updates']} updates "
        f"({result['no_fact_from_earlier']} earlier statements gave no fact); the decision also learns "
        f"from {trained['set_pairs']} pairs of {len(trained['sets'])} sets, the corpus counted "
        f"{trained['corpus_weight']} times",
        "| measure | precision | recall | false updates | missed updates |",
        "|---|---|---|---|---|",
    ]
    for name, key in (
        ("the decision the package ships", "shipped"),
        ("in-sample, refitted", "in_sample"),
        (f"leave-family-out ({trained['family_groups']} groups)", "leave_one_family_out"),
        (
            f"leave-family-out, {crowd} other facts in the store",
            "crowded_leave_one_family_out",
        ),
    ):
        s = result[key]
        if s is None:
            continue
        lines.append(f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['fp']} | {s['fn']} |")
    crowded = result["crowded_leave_one_family_out"]
    lines.append(f"other facts closed by mistake (crowded): {crowded['distractors_closed']}")
    lines.append(
        f"first mentions in the crowded store (held out): {crowded['first_mentions']} statements closed "
        f"{crowded['closed_by_first_mentions']} facts, each by mistake"
    )
    told = result["profiles"]
    lines.append(
        f"people telling their lives (held out): {told['messages']} messages, {told['updates']} updates: "
        f"{told['right']} closed, {told['missed']} missed, {told['wrong']} earlier facts closed by mistake"
    )
    for name, unseen in result["unseen"].items():
        how = "learned from" if name in trained["sets"] else "held out"
        lines.append(
            f"pairs in everyday wording, {name} ({how}): {unseen['messages'] // 2} pairs, "
            f"{unseen['updates']} updates: {unseen['right']} closed, {unseen['missed']} missed, "
            f"{unseen['wrong']} earlier facts closed by mistake"
        )
    if result["cross_set"]:
        lines += [
            "",
            f"| set, held out ({trained['set_folds']} folds) | updates | closed / by mistake: corpus alone "
            "| closed / by mistake: corpus and the other sets |",
            "|---|---|---|---|",
        ]
        total = [0, 0, 0, 0, 0]
        for name, row in result["cross_set"].items():
            alone, other = row["corpus_alone"], row["other_sets"]
            got = (alone["updates"], alone["right"], alone["wrong"], other["right"], other["wrong"])
            total = [a + b for a, b in zip(total, got, strict=True)]
            lines.append(f"| {name} | {got[0]} | {got[1]} / {got[2]} | {got[3]} / {got[4]} |")
        lines.append(f"| all | {total[0]} | {total[1]} / {total[2]} | {total[3]} / {total[4]} |")
    if result["conversations"]:
        lines += [
            "",
            "| conversation | statements | closed (fitted with it) | closed (held out) |",
            "|---|---|---|---|",
        ]
        for name, row in result["conversations"].items():
            lines.append(
                f"| {name} | {row['statements']} | {row['closed_in_sample']} | {row['closed_held_out']} |"
            )
    lines += [
        "",
        "| kind | pairs | called update (in-sample) | called update (held out) |",
        "|---|---|---|---|",
    ]
    ins, out = (
        result["in_sample"]["called_update_by_kind"],
        result["leave_one_family_out"]["called_update_by_kind"],
    )
    for kind in ins:
        lines.append(
            f"| {kind} | {ins[kind]['pairs']} | {ins[kind]['called_update']} | {out[kind]['called_update']} |"
        )
    return "\n".join(lines)


__all__ = ["table"]
