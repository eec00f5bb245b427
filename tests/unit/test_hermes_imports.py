"""What the Hermes process imports for the provider: a turn must not pay for features it does not use.

Hermes imports ``hermes_memory.hermes.provider`` (through the plugin shim) at agent start, on its main
thread, and a one-shot ``hermes -z`` then runs a single turn: the graph (NetworkX), the doctor, the
maintenance jobs, the LLM client, the setup wizard and the MCP server are imported where they are used,
not with the provider. Each check runs in a fresh interpreter, because this test process has imported
everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hermes_settings import FAST_PROVIDER_YAML

ROOT = Path(__file__).resolve().parents[2]
# Modules a turn does not need; each cost the Hermes process time at start when imported eagerly.
NOT_ON_A_TURN = (
    "networkx",
    "hermes_memory.graph.nx_store",
    "hermes_memory.graph.centrality",
    "hermes_memory.ops.doctor",
    "hermes_memory.ops.backup",
    "hermes_memory.ops.export",
    "hermes_memory.ops.importer",
    "hermes_memory.ops.forget",
    "hermes_memory.cron",
    "hermes_memory.llm.client",
    "hermes_memory.llm.core_memory",
    "hermes_memory.hermes.setup",
    "hermes_memory.mcp_server",
    "torch",
)

ONE_TURN = """
import json, sys
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes import registry

home = sys.argv[1]
provider = NextLevelProvider()
provider.initialize("s1", hermes_home=home, platform="cli", agent_identity="default")
provider.on_turn_start(1, "Where does my sister Ana live?")
block = provider.prefetch("Where does my sister Ana live?")
provider.sync_turn("My sister Ana lives in Lisbon.", "Noted: Ana lives in Lisbon.", session_id="s1")
messages = [
    {"role": "user", "content": "My sister Ana lives in Lisbon."},
    {"role": "assistant", "content": "Noted: Ana lives in Lisbon."},
]
shared = registry.find(home, "default")
drained = shared.api.flush(timeout=30)["data"]["drained"]
provider.on_session_end(messages)
provider.shutdown()
hot = set(sys.modules)
print(json.dumps({"drained": drained, "block": block, "modules": sorted(hot)}))
"""


def _run(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_provider_and_memory_api_leaves_the_unused_features_unimported() -> None:
    code = (
        "import json, sys\n"
        "import hermes_memory.hermes.provider\n"
        "from hermes_memory import MemoryAPI\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = set(json.loads(_run(code)))
    assert "hermes_memory.api.memory_api" in loaded  # the check would pass vacuously otherwise
    assert sorted(m for m in NOT_ON_A_TURN if m in loaded) == []


def test_a_whole_turn_through_the_provider_imports_none_of_them(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    out = json.loads(_run(ONE_TURN, str(home)))
    assert out["drained"] is True  # the turn was stored and extracted (entities, relations) meanwhile
    loaded = set(out["modules"])
    assert "hermes_memory.extract.pipeline" in loaded
    assert sorted(m for m in NOT_ON_A_TURN if m in loaded) == []


def test_a_feature_imports_its_modules_when_used(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from hermes_memory import MemoryAPI\n"
        "api = MemoryAPI(hermes_home=sys.argv[1], **{'tier3.embedding_model': 'hashing', "
        "'tier3.backend': 'memory'})\n"
        "before = 'networkx' in sys.modules\n"
        "doctor = api.doctor()\n"
        "graph = api.graph_traverse('nobody')\n"
        "api.close()\n"
        "why = graph['meta'].get('error_type') if not graph['success'] else 'found'\n"
        "print(json.dumps([before, doctor['success'], 'networkx' in sys.modules, why]))\n"
    )
    before, doctor_ok, after, graph = json.loads(_run(code, str(tmp_path)))
    assert (before, doctor_ok, after) == (False, True, True)
    assert graph == "not_found"


# What only writing (or a vector) needs: a read command of the CLI opens the store without them.
NOT_ON_A_READ = (
    "numpy",
    "hermes_memory.extract.pipeline",
    "hermes_memory.updates",
    "hermes_memory.ingest.worker",
    "hermes_memory.ingest.knowledge",
    "hermes_memory.core.mirror",
)

READ_COMMANDS = """
import contextlib, io, json, sys
from hermes_memory.cli import main

home = sys.argv[1]
codes = []
with contextlib.redirect_stdout(io.StringIO()):
    for argv in (["stats"], ["latest", "--count", "3"], ["history", "user"], ["fact", "query", "Lisbon"],
                 ["entity", "query", "Ana"], ["timeline", "query"],
                 ["recall", "Where does Ana live?", "--tiers", "tier1", "tier2"]):
        codes.append(main([*argv, "--home", home]))
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def test_a_read_command_imports_neither_the_write_path_nor_numpy(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    fill = (
        "import sys\n"
        "from hermes_memory import MemoryAPI\n"
        "api = MemoryAPI(hermes_home=sys.argv[1])\n"
        "api.remember_turn('My sister Ana lives in Lisbon.', 'Noted.', session_id='s1')\n"
        "assert api.flush(timeout=30)['success']\n"
        "api.close()\n"
    )
    _run(fill, str(home))
    out = json.loads(_run(READ_COMMANDS, str(home)))
    assert out["codes"] == [0] * 7
    loaded = set(out["modules"])
    assert "hermes_memory.recall.engine" in loaded  # the reads ran
    assert sorted(m for m in NOT_ON_A_READ if m in loaded) == []
