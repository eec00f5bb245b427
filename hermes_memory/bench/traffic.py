"""The at-scale part's home and traffic: its ``nextlevel.yaml`` (``hermes_memory.bench.fill`` fills it),
the synthetic exchanges a worker ingests while recall is timed, and the questions asked (seeded small
talk about people, places, projects, pets and plans)."""

from __future__ import annotations

import random
from pathlib import Path

NAMES = "Maya Lena Jonas Priya Omar Sofia Kenji Amara Lukas Chen Elif Mateo Nora Ravi Hana Tomasz".split()
PLACES = "Hamburg Lisbon Osaka Nairobi Montreal Krakow Porto Seoul Austin Oslo Lyon Accra Bilbao".split()
PROJECTS = "Atlas Borealis Cedar Drift Ember Fjord Granite Harbor Juniper Kestrel Lumen Meridian".split()
PETS = "beagle tabby parrot corgi hamster tortoise greyhound".split()
THINGS = "bakery bike guitar garden kayak novel marathon pottery sourdough telescope chess violin".split()
USER = [
    "My friend {n} just moved to {p} and loves the {t} scene there.",
    "We decided to use Postgres for project {j} after the review with {n}.",
    "{n} adopted a {a} called {m}; it already chews every {t} in sight.",
    "I am training for a {t} in {p} next spring, {n} is coaching me.",
    "Remind me that the {j} demo for {n} is on Friday at 10.",
    "Honestly the trip to {p} with {n} was the best part of the year.",
]
ASSISTANT = [
    "That sounds great, {n} in {p} must be fun.",
    "Noted: project {j} uses Postgres; {n} agreed.",
    "A {a} named {m}, lovely. Keep the {t} out of reach!",
    "Good luck with the {t}; {n} sounds like a good coach.",
    "I will remember the {j} demo for {n} on Friday at 10.",
    "I am glad the {p} trip with {n} went so well.",
]
QUERIES = [
    "Where did {n} move?",
    "Which database did we pick for {j}?",
    "What is the name of {n}'s {a}?",
    "Who is coaching me for the {t}?",
    "When is the {j} demo?",
    "How was the trip to {p}?",
]
BACKEND = "qdrant"  # the default vector engine, named so a filler and the provider agree


def _fill(rnd: random.Random, template: str) -> str:
    return template.format(
        n=rnd.choice(NAMES),
        m=rnd.choice(NAMES),
        p=rnd.choice(PLACES),
        j=rnd.choice(PROJECTS),
        a=rnd.choice(PETS),
        t=rnd.choice(THINGS),
    )


def exchange(rnd: random.Random) -> tuple[str, str]:
    """One synthetic (user, assistant) exchange; the answer names the same people and places."""
    i = rnd.randrange(len(USER))
    state = rnd.getstate()
    user = _fill(rnd, USER[i])
    rnd.setstate(state)
    return user, _fill(rnd, ASSISTANT[i])


def question(rnd: random.Random) -> str:
    """One synthetic question about what the exchanges talk of."""
    return _fill(rnd, rnd.choice(QUERIES))


def queries(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed + 1)
    return [question(rnd) for _ in range(n)]


def settings_yaml(embedder: str) -> str:
    return f"memory:\n  tier3:\n    embedding_model: {embedder}\n    backend: {BACKEND}\n"


def prepare_home(home: Path, embedder: str) -> None:
    """Create the home and its nextlevel.yaml. Raises ValueError when it was filled with another
    embedder (its vectors would not match the queries')."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "nextlevel.yaml"
    wanted = settings_yaml(embedder)
    if path.exists() and path.read_text(encoding="utf-8") != wanted:
        raise ValueError(f"{home} was filled with other settings; use another --scale-dir or remove it")
    path.write_text(wanted, encoding="utf-8")


__all__ = [
    "ASSISTANT",
    "BACKEND",
    "NAMES",
    "PETS",
    "PLACES",
    "PROJECTS",
    "QUERIES",
    "THINGS",
    "USER",
    "exchange",
    "prepare_home",
    "queries",
    "question",
    "settings_yaml",
]
