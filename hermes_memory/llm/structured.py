"""Structured LLM calls that either return a valid object or raise one ``LLMError`` meaning "fall back".

HAEMA's contract: up to ``max_retries`` retries per call for transport failures and replies that are
not JSON, then a validation against the schema (plus an optional semantic check), and ONE refinement
pass that sends the errors back to the model. Anything still invalid raises ``LLMError(kind="schema")``.

The validator covers the subset of JSON Schema our prompts use (object, array, string, number,
integer, boolean, null, enum, required, properties, additionalProperties, items, min/max length,
items and value); any other keyword is a programming error and raises ConfigError, so a schema can
never be silently under-checked.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from hermes_memory.errors import ConfigError
from hermes_memory.llm.client import JSONSchema, LLMClient, LLMError, schema_of

log = logging.getLogger(__name__)

# Semantic checks beyond the schema (e.g. an index must point at an input): a list of error messages.
Check = Callable[[dict[str, Any]], list[str]]

_STRUCTURAL = frozenset(
    {
        "type",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
    }
)
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id", "$comment"})
_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_MAX_ERRORS = 20
# Transport failures get a short pause before the next try; a malformed reply is simply asked again.
_BACKOFF_KINDS = frozenset({"connection", "http"})


def check_schema(schema: JSONSchema, path: str = "$") -> None:
    """Raise ConfigError if ``schema`` uses anything the validator does not implement."""
    if not isinstance(schema, dict):
        raise ConfigError(f"schema at {path} must be an object, got {type(schema).__name__}")
    unknown = set(schema) - _STRUCTURAL - _ANNOTATIONS
    if unknown:
        raise ConfigError(f"schema at {path} uses unsupported keyword(s): {', '.join(sorted(unknown))}")
    types = schema.get("type")
    for name in [types] if isinstance(types, str) else list(types or []):
        if name not in _TYPES:
            raise ConfigError(f"schema at {path} has unknown type {name!r}")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ConfigError(f"schema at {path}: enum must be a list")
    for key, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        check_schema(schema["items"], f"{path}[]")
    if "additionalProperties" in schema and not isinstance(schema["additionalProperties"], bool):
        raise ConfigError(f"schema at {path}: additionalProperties must be true or false")


def validate(instance: Any, schema: JSONSchema) -> list[str]:
    """Every way ``instance`` violates ``schema`` (empty when valid), as "path: problem" strings."""
    errors: list[str] = []
    _validate(instance, schema, "$", errors)
    return errors[:_MAX_ERRORS]


def _type_ok(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int)
    return isinstance(value, int | float) and value == value  # number: finite-or-inf, never NaN


def _validate(value: Any, schema: JSONSchema, path: str, errors: list[str]) -> None:
    if len(errors) >= _MAX_ERRORS:
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_type_ok(value, n) for n in names):
            errors.append(f"{path}: expected {' or '.join(names)}, got {_json_type(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
        return
    if isinstance(value, str):
        if "minLength" in schema and len(value.strip()) < schema["minLength"]:
            errors.append(f"{path}: must have at least {schema['minLength']} non-blank character(s)")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value!r} is below the minimum {schema['minimum']!r}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value!r} is above the maximum {schema['maximum']!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: needs at least {schema['minItems']} item(s)")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: has {len(value)} items; at most {schema['maxItems']} allowed")
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _validate(item, items, f"{path}[{index}]", errors)
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                errors.append(f"{path}: missing required key {key!r}")
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in properties:
                    errors.append(f"{path}: unexpected key {key!r}")
        for key, sub in properties.items():
            if key in value:
                _validate(value[key], sub, f"{path}.{key}", errors)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


class StructuredLLM:
    """Wraps an ``LLMClient`` with retries, validation and one refinement pass.

    ``sleep`` is injectable so tests never wait; the backoff applies only to transport failures.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if max_retries < 0:
            raise ConfigError(f"config key 'llm.max_retries' must be >= 0, got {max_retries!r}")
        self.client = client
        self.max_retries = max_retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    def generate(
        self,
        system: str,
        user: str,
        response_model: type[Any] | JSONSchema,
        *,
        check: Check | None = None,
    ) -> dict[str, Any]:
        """A reply that validates against the schema and passes ``check``.

        Raises LLMError when the calls keep failing (the kind of the last failure) or the reply is
        still invalid after the refinement pass (kind "schema"); ConfigError for an unsupported schema.
        """
        schema = schema_of(response_model)
        check_schema(schema)
        value = self._call(system, user, response_model)
        errors = self._errors(value, schema, check)
        if not errors:
            return value
        log.debug("structured reply invalid, refining once: %s", "; ".join(errors))
        value = self._call(system, refinement_prompt(user, value, errors), response_model)
        errors = self._errors(value, schema, check)
        if errors:
            raise LLMError(
                "the reply did not match the schema after one refinement: " + "; ".join(errors[:5]),
                kind="schema",
                retryable=False,
            )
        return value

    @staticmethod
    def _errors(value: dict[str, Any], schema: JSONSchema, check: Check | None) -> list[str]:
        errors = validate(value, schema)
        if not errors and check is not None:
            errors = list(check(value))
        return errors

    def _call(self, system: str, user: str, response_model: type[Any] | JSONSchema) -> dict[str, Any]:
        """One logical call: the first try plus up to ``max_retries`` retries of retryable failures."""
        attempt = 0
        while True:
            try:
                return _as_object(self.client.generate_structured(system, user, response_model))
            except LLMError as exc:
                failure = exc
            except Exception as exc:  # noqa: BLE001 — a third-party client's own error, translated here
                failure = LLMError(f"{type(exc).__name__}: {exc}", kind="client", retryable=True)
                failure.__cause__ = exc
            if not failure.retryable or attempt >= self.max_retries:
                raise failure
            log.debug("LLM call failed (%s), retry %d of %d", failure, attempt + 1, self.max_retries)
            if failure.kind in _BACKOFF_KINDS:
                self._sleep(min(4.0, self._backoff_s * 2**attempt))
            attempt += 1


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LLMError(
            f"the client returned {type(value).__name__}, not a JSON object", kind="reply", retryable=True
        )
    return value


def refinement_prompt(user: str, previous: dict[str, Any], errors: Sequence[str]) -> str:
    """The original prompt plus the rejected reply and what was wrong with it."""
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        f"{user}\n\n<previous_reply>\n{json.dumps(previous, ensure_ascii=False)[:4000]}\n</previous_reply>\n"
        f"<validation_errors>\n{listed}\n</validation_errors>\n"
        "Your previous reply was rejected for the errors above. Reply again with one corrected JSON "
        "object that fixes every error."
    )


__all__ = ["Check", "StructuredLLM", "check_schema", "refinement_prompt", "validate"]
