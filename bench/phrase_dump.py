"""Dump each LoCoMo dev question's top candidates (turn ids in rank order, with the hit scores) for offline
re-ranking (bench/phrase_prior.py). The engine as shipped (``MemoryAPI.recall``, default preset)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench.locomo import CATEGORIES, Stats, dia_by_episode, normalise_evidence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_research import filled


def ranked(hits: list[dict], episode_dia: dict[str, str]) -> list[tuple[str, float, str]]:
    out: list[tuple[str, float, str]] = []
    seen: set[str] = set()
    for hit in hits:
        ids = []
        dia = (hit.get("metadata") or {}).get("dia_id")
        if dia:
            ids.append(dia)
        ids += [episode_dia[s] for s in hit.get("source_ids") or () if s in episode_dia]
        for d in ids:
            if d not in seen:
                seen.add(d)
                out.append((d, float(hit["score"]), str(hit.get("kind"))))
    return out


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    data = json.loads(Path(sys.argv[1]).read_text())
    root, out_path, limit = Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
    stats = Stats()
    out = []
    for sample in data:
        with MemoryAPI(hermes_home=filled(sample, root), actor="bench") as api:
            episode_dia = dia_by_episode(api)
            for qa in sample["qa"]:
                cat = str(qa.get("category"))
                if cat not in CATEGORIES:
                    continue
                ev = normalise_evidence(qa.get("evidence") or [], stats)
                if not ev:
                    continue
                env = api.recall(str(qa["question"]), limit=limit)
                out.append(
                    {
                        "conv": sample["sample_id"],
                        "q": qa["question"],
                        "cat": cat,
                        "evidence": sorted(ev),
                        "ranked": ranked(env["data"]["hits"], episode_dia),
                    }
                )
        print(sample["sample_id"], len(out), file=sys.stderr)
    out_path.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
