"""MemoryAPI is the envelope edge over the core: every public method that returns an envelope builds it
through ``MemoryAPI._run`` (which applies the read-path credential redaction), directly or through
another public method or one of the two private helpers that call ``_run``. The exceptions are named."""

from __future__ import annotations

import ast
import inspect
import textwrap

from hermes_memory.api.memory_api import MemoryAPI

# export_json redacts its document itself (each changed row's content_hash stays true and its base64
# vectors untouched); restore is a staticmethod that works on files before any store opens.
OWN_ENVELOPE = {"export_json", "restore"}
VIA_RUN = {"_run", "_maintenance_envelope", "_one_job"}


def _calls(method: object) -> set[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))  # type: ignore[arg-type]
    return {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    }


def _envelope_methods() -> dict[str, object]:
    out = {}
    # MemoryAPI's methods live in its parts (base classes): every class it is built from counts.
    members = {name: m for cls in reversed(MemoryAPI.__mro__) for name, m in vars(cls).items()}
    for name, member in members.items():
        function = member.__func__ if isinstance(member, staticmethod) else member
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        if inspect.signature(function).return_annotation == "Envelope":
            out[name] = function
    return out


def test_every_envelope_is_built_at_the_one_edge() -> None:
    methods = _envelope_methods()
    assert len(methods) > 50  # the seed's surface; a broken lookup must not pass vacuously
    public = set(methods)
    stray = sorted(
        name
        for name, method in methods.items()
        if name not in OWN_ENVELOPE and not (_calls(method) & (VIA_RUN | public))
    )
    assert stray == [], f"build these envelopes with self._run: {stray}"


def test_the_helpers_counted_as_the_edge_call_run() -> None:
    for name in VIA_RUN - {"_run"}:
        assert _calls(getattr(MemoryAPI, name)) & {"_run", "maintain"}, name


def test_the_check_fails_on_a_method_that_bypasses_the_edge() -> None:
    def sneaky(self: MemoryAPI) -> dict[str, object]:
        from hermes_memory.api.envelope import run

        return run("tier2", lambda: {"secret": "x"})

    assert not (_calls(sneaky) & (VIA_RUN | set(_envelope_methods())))
