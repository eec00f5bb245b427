"""What the model receives: the <memory-context> blocks of real ``hermes -z`` processes, word for word.

    python bench/agent_view.py            # the "What the agent sees" block of the README
    python bench/agent_view.py --json OUT

A fresh Hermes home where ``hermes-memory install --activate`` put the provider in its default
configuration, a fake OpenAI-compatible LLM on 127.0.0.1 (``hermes_memory.bench.fake_llm``, answering
every turn with the same short line), then one ``hermes -z`` process per message: four statements and
three questions. Prints each question's block as the model received it (inside Hermes' fence) and the
wall time of each process. Needs ``hermes`` (the README's install command puts it on the path).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.bench.fake_llm import FakeLLM
from hermes_memory.bench.oneshot import ANSWER, _hermes, _make_home, memory_block

STATEMENTS = (
    "I live in Hamburg.",
    "My dog Biscuit loves the beach.",
    "My sister is called Ana and she lives in Porto.",
    "I moved to Lisbon in May.",
)
QUESTIONS = (
    "Where do I live now?",
    "Where did I live before, and what is my dog called?",
    "Who are my siblings?",
)


def agent_view(timeout: float = 300.0) -> dict[str, object]:
    """Run the statements and questions; returns each question's block and every process's wall time.

    Raises RuntimeError when a ``hermes`` process fails."""
    with tempfile.TemporaryDirectory(prefix="hm-agent-view-") as tmp, FakeLLM(fixed=ANSWER) as llm:
        home = _make_home(Path(tmp), "home", llm.base_url, provider=True)
        walls: list[float] = []
        for message in STATEMENTS:
            walls.append(round(_hermes(home, message, timeout).wall_s, 2))
        blocks: dict[str, str | None] = {}
        for question in QUESTIONS:
            before = len(llm.chat_requests())
            walls.append(round(_hermes(home, question, timeout).wall_s, 2))
            chats = llm.chat_requests()
            first = chats[before] if len(chats) > before else None
            blocks[question] = None if first is None else memory_block(first)
    return {"statements": list(STATEMENTS), "blocks": blocks, "wall_s": walls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", dest="json_out", help="also write the result as JSON to this file")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per hermes process")
    args = parser.parse_args(argv)
    result = agent_view(args.timeout)
    blocks = result["blocks"]
    assert isinstance(blocks, dict)
    for question, block in blocks.items():
        print(f'# "{question}"')
        print(block if block is not None else "(no <memory-context> block)")
        print()
    print(f"hermes -z wall per process: {result['wall_s']} s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
