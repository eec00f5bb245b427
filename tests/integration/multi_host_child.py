"""One host's process for ``test_multi_host_pg``: its own HERMES_HOME, Tier 2 on the shared PostgreSQL
server (``HERMES_MEMORY_TIER2_URL`` in its environment), in one of three roles:

  writer HOME W TURNS PACE HURRY   remember TURNS turns (``turn(W, i)``, turn id ``turn_id(W, i)``) and move
                                   them from this host's turn inbox into the shared queue every few turns,
                                   never draining it; a pause of PACE s after each turn until the file HURRY
                                   exists. Prints "done" when every turn is in the shared queue.
  worker HOME MARKERS STOP         drain the shared queues (turns, then embeddings) with ``flush`` until the
                                   file STOP exists and nothing is pending. Appends "ready", then "busy"
                                   before each flush and "idle" after a flush that left nothing pending, to
                                   MARKERS (the test aims its kills with them), and "done" at the end.
  host HOME                        a long-lived host: one JSON command per stdin line, one JSON answer per
                                   stdout line (recall, record what the agent saw, add a curated entry,
                                   forget, close).

Every host uses the hashing embedder and the in-process vector backend: the vectors themselves live in
Tier 2's ``vectors`` table, so each host's exact index is loaded from (and follows) the shared store.
Also imported by the test for the turn texts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

SETTINGS: dict[str, Any] = {
    "tier3.embedding_model": "hashing",
    "tier3.backend": "memory",
    "ui.record_context": True,  # the file of what the agent saw (``hermes.seen``): a host-local copy
}
# The name the forget removes: mentioned (as a lunch companion) in every FORGET_EVERY-th turn of each writer.
FORGOTTEN = "Velmora"
FORGET_EVERY = 50
_SYLLABLES = "ka lo mi ren sa tu vi dor bel dan fi gor ha jun ke mar".split()


def _name(n: int) -> str:
    """A made-up three-syllable name, distinct for n in 0..4095."""
    return "".join(_SYLLABLES[n // 16**k % 16] for k in (2, 1, 0)).capitalize()


def colleague(w: int, i: int) -> tuple[str, str]:
    """The colleague turn (w, i) names and the company they work at: distinct for every turn."""
    n = w * 1000 + i
    return _name(n), f"{_name(4095 - n)} Labs"


def names_forgotten(w: int, i: int) -> bool:
    return i % FORGET_EVERY == 7


def turn(w: int, i: int) -> tuple[str, str]:
    """The (user, assistant) texts of writer w's turn i; the user's states one fact the rule-based extractor
    finds ("The user's colleague <name> works at <company>")."""
    person, company = colleague(w, i)
    user = f"My colleague {person} works at {company}. (ref w{w}t{i:03d})"
    if names_forgotten(w, i):
        user += f" {person} had lunch with {FORGOTTEN} on Friday."
    return user, f"Noted, {person} is at {company}."


def turn_id(w: int, i: int) -> str:
    return f"w{w}-t{i:03d}"


def fact_text(w: int, i: int) -> str:
    person, company = colleague(w, i)
    return f"The user's colleague {person} works at {company}"


def _open(home: str) -> Any:
    from hermes_memory import MemoryAPI

    return MemoryAPI(hermes_home=home, **SETTINGS)


def _check(env: dict[str, Any], what: str) -> dict[str, Any]:
    if not env["success"]:
        raise SystemExit(f"{what} failed: {env['meta'].get('error_type')}: {env['error']}")
    return env


def writer(home: str, w: int, turns: int, pace: float, hurry: str) -> None:
    api = _open(home)
    queue = api.tier2.ingest_queue
    for i in range(turns):
        user, assistant = turn(w, i)
        env = _check(
            api.remember_turn(user, assistant, session_id=f"host-{w}", turn_id=turn_id(w, i)), "remember"
        )
        assert env["data"]["queued"], env
        if i % 5 == 4:
            queue.absorb()  # this host's inbox -> the shared queue (never drained here)
        if not os.path.exists(hurry):
            time.sleep(pace)
    queue.absorb()
    inbox = api.tier2.inbox
    assert inbox is not None and inbox.count() == 0, "turns left in the inbox"
    api.close(drain_timeout=0)
    print("done", flush=True)


def worker(home: str, markers: str, stop: str) -> None:
    fd = os.open(markers, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def mark(text: str) -> None:
        os.write(fd, (text + "\n").encode())

    api = _open(home)
    mark("ready")
    while True:
        mark("busy")
        env = _check(api.flush(2.0), "flush")
        if env["data"]["drained"]:
            mark("idle")
            if os.path.exists(stop):
                break
            time.sleep(0.05)
    api.close()
    mark("done")


def host(home: str) -> None:
    from hermes_memory.hermes import seen

    api = _open(home)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "recall":
            out: Any = api.recall(cmd["query"])
        elif op == "see":  # what the Hermes provider does with a prefetch block it hands the model
            seen.record(api.config, session_id="s-seen", scope=api.scope, kind=seen.PREFETCH,
                        served=cmd["query"], text=cmd["text"])  # fmt: skip
            out = {"success": True}
        elif op == "curated_add":
            out = api.curated_add(cmd["content"])
        elif op == "forget_entity":
            out = api.forget_entity(cmd["name"], confirm=True, confirm_large=True)
        elif op == "close":
            api.close()
            print(json.dumps({"success": True}), flush=True)
            return
        else:
            out = {"success": False, "error": f"unknown op {op!r}"}
        print(json.dumps(out, default=str), flush=True)


if __name__ == "__main__":
    role, args = sys.argv[1], sys.argv[2:]
    if role == "writer":
        writer(args[0], int(args[1]), int(args[2]), float(args[3]), args[4])
    elif role == "worker":
        worker(args[0], args[1], args[2])
    elif role == "host":
        host(args[0])
    else:
        raise SystemExit(f"unknown role {role!r}")
