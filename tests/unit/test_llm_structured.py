"""Structured LLM calls: the schema-subset validator, retries after transport failures and non-JSON
replies, one refinement pass after a wrong schema, and a single LLMError when nothing valid came back."""

from __future__ import annotations

from typing import Any

import pytest
from llm_fakes import ScriptedLLM

from hermes_memory.errors import BackendError, ConfigError
from hermes_memory.llm.client import LLMError, parse_json_object, schema_of
from hermes_memory.llm.structured import StructuredLLM, check_schema, validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["items", "mode"],
    "additionalProperties": False,
    "properties": {
        "items": {
            "type": "array",
            "maxItems": 2,
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 10},
                    "score": {"type": "number", "minimum": 0, "maximum": 1},
                    "rank": {"type": "integer"},
                    "note": {"type": ["string", "null"]},
                },
            },
        },
        "mode": {"enum": ["a", "b"]},
        "flag": {"type": "boolean"},
    },
}
GOOD = {"items": [{"name": "x", "score": 0.5, "rank": 2, "note": None}], "mode": "a", "flag": True}


def reply_error(message: str = "the reply is not valid JSON") -> LLMError:
    return LLMError(message, kind="reply", retryable=True)


# -- validator ----------------------------------------------------------------------------------


def test_a_valid_instance_has_no_errors() -> None:
    assert validate(GOOD, SCHEMA) == []


@pytest.mark.parametrize(
    ("instance", "fragment"),
    [
        ([], "$: expected object, got array"),
        ({"mode": "a"}, "missing required key 'items'"),
        ({"items": [], "mode": "c"}, "$.mode: 'c' is not one of"),
        ({"items": [], "mode": "a", "extra": 1}, "unexpected key 'extra'"),
        ({"items": [{"name": 3}], "mode": "a"}, "$.items[0].name: expected string, got number"),
        ({"items": [{"name": "   "}], "mode": "a"}, "$.items[0].name: must have at least 1"),
        ({"items": [{"name": "x" * 11}], "mode": "a"}, "longer than 10"),
        ({"items": [{"name": "x", "score": 2}], "mode": "a"}, "above the maximum"),
        ({"items": [{"name": "x", "score": True}], "mode": "a"}, "expected number, got boolean"),
        ({"items": [{"name": "x", "rank": 1.5}], "mode": "a"}, "expected integer"),
        ({"items": [{"name": "x"}] * 3, "mode": "a"}, "has 3 items; at most 2"),
        ({"items": [], "mode": "a", "flag": "yes"}, "$.flag: expected boolean"),
    ],
)
def test_each_violation_is_reported_with_its_path(instance: Any, fragment: str) -> None:
    errors = validate(instance, SCHEMA)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "anyOf": [{"type": "string"}]},
        {"$ref": "#/$defs/X"},
        {"type": "tuple"},
        {"type": "object", "properties": {"a": {"oneOf": []}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
    ],
)
def test_unsupported_schema_keywords_are_refused_not_ignored(schema: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        check_schema(schema)


def test_schema_of_accepts_dicts_and_pydantic_style_classes() -> None:
    class Model:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            return {"type": "object"}

    assert schema_of(SCHEMA) is SCHEMA
    assert schema_of(Model) == {"type": "object"}
    with pytest.raises(ConfigError):
        schema_of(int)


def test_a_fenced_json_reply_is_parsed_and_prose_is_refused() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(LLMError) as info:
        parse_json_object("Sure! Here it is: {a: 1}")
    assert info.value.kind == "reply" and info.value.retryable
    with pytest.raises(LLMError):
        parse_json_object("[1, 2]")


# -- calls --------------------------------------------------------------------------------------


def test_success_on_the_first_try_makes_one_call() -> None:
    client = ScriptedLLM(GOOD)
    assert StructuredLLM(client).generate("sys", "user", SCHEMA) == GOOD
    assert len(client.calls) == 1


def test_invalid_json_is_retried_with_the_same_prompt() -> None:
    client = ScriptedLLM(reply_error(), reply_error(), GOOD)
    assert StructuredLLM(client, max_retries=3).generate("sys", "user", SCHEMA) == GOOD
    assert [c.user for c in client.calls] == ["user"] * 3


def test_a_non_dict_from_a_client_is_retried_too() -> None:
    client = ScriptedLLM(lambda s, u: ["not", "an", "object"], GOOD)
    assert StructuredLLM(client).generate("sys", "user", SCHEMA) == GOOD
    assert len(client.calls) == 2


def test_retries_stop_after_max_retries_and_raise_the_last_failure() -> None:
    client = ScriptedLLM(default=LLMError("timed out", kind="timeout", retryable=True))
    with pytest.raises(LLMError) as info:
        StructuredLLM(client, max_retries=3).generate("sys", "user", SCHEMA)
    assert info.value.kind == "timeout"
    assert len(client.calls) == 4  # the first try and three retries
    assert isinstance(info.value, BackendError)


def test_a_non_retryable_failure_is_not_retried() -> None:
    client = ScriptedLLM(LLMError("HTTP 401", kind="http", retryable=False), GOOD)
    with pytest.raises(LLMError, match="401"):
        StructuredLLM(client).generate("sys", "user", SCHEMA)
    assert len(client.calls) == 1


def test_a_third_party_exception_is_translated_and_retried() -> None:
    client = ScriptedLLM(RuntimeError("provider hiccup"), GOOD)
    assert StructuredLLM(client).generate("sys", "user", SCHEMA) == GOOD
    client = ScriptedLLM(default=RuntimeError("provider down"))
    with pytest.raises(LLMError) as info:
        StructuredLLM(client, max_retries=1).generate("sys", "user", SCHEMA)
    assert info.value.kind == "client" and isinstance(info.value.__cause__, RuntimeError)


def test_only_transport_failures_back_off() -> None:
    slept: list[float] = []
    client = ScriptedLLM(
        LLMError("refused", kind="connection", retryable=True),
        LLMError("HTTP 503", kind="http", retryable=True),
        reply_error(),
        GOOD,
    )
    StructuredLLM(client, max_retries=3, backoff_s=0.5, sleep=slept.append).generate("s", "u", SCHEMA)
    assert slept == [0.5, 1.0]


def test_a_wrong_schema_gets_one_refinement_that_names_the_errors() -> None:
    wrong = {"items": [{"name": "x"}], "mode": "z"}
    client = ScriptedLLM(wrong, GOOD)
    assert StructuredLLM(client).generate("sys", "user", SCHEMA) == GOOD
    assert len(client.calls) == 2
    refinement = client.calls[1].user
    assert refinement.startswith("user")
    assert "<previous_reply>" in refinement and '"mode": "z"' in refinement
    assert "$.mode: 'z' is not one of" in refinement


def test_a_failed_semantic_check_is_refined_like_a_schema_error() -> None:
    client = ScriptedLLM({"items": [], "mode": "a"}, GOOD)

    def check(value: dict[str, Any]) -> list[str]:
        return [] if value["items"] else ["$.items: must not be empty"]

    assert StructuredLLM(client).generate("sys", "user", SCHEMA, check=check) == GOOD
    assert "$.items: must not be empty" in client.calls[1].user


def test_persistent_garbage_raises_a_schema_error_after_one_refinement() -> None:
    client = ScriptedLLM(default={"nonsense": True})
    with pytest.raises(LLMError) as info:
        StructuredLLM(client, max_retries=3).generate("sys", "user", SCHEMA)
    assert info.value.kind == "schema" and not info.value.retryable
    assert len(client.calls) == 2  # schema errors are refined once, never retried blindly


def test_negative_max_retries_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"llm\.max_retries"):
        StructuredLLM(ScriptedLLM(), max_retries=-1)
