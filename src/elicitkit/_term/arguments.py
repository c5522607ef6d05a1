"""A tool's arguments from the command line, checked against its `inputSchema` before anything is called.

`--args '{…}'` first, then each `--arg key=value`. A missing required
argument, one the tool does not take, or a value of the wrong type is a usage
error (exit status 2), said in one line, before the call is made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

__all__ = ["UsageError", "check_arguments", "parse_arguments"]


class UsageError(Exception):
    """The command line asks for something that cannot be: exit status 2, one line, no traceback."""


def parse_arguments(pairs: list[str], raw: str | None, input_schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`--args '{…}'`, then each `--arg k=v`.

    A value for a string property (per the tool's `input_schema`) is taken as
    typed; any other value is read as JSON when it is JSON, else as text.
    """
    arguments: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--args takes a JSON object")
        arguments.update(loaded)
    properties = (input_schema or {}).get("properties", {})
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--arg takes key=value, not {pair!r}")
        if _accepts_text(properties.get(key, {})):
            arguments[key] = value
            continue
        try:
            arguments[key] = json.loads(value)
        except json.JSONDecodeError:
            arguments[key] = value
    return arguments


def _accepts_text(prop: Mapping[str, Any]) -> bool:
    kinds = prop.get("type")
    if kinds is None and "anyOf" in prop:  # `str | None` is {"anyOf": [{"type": "string"}, {"type": "null"}]}
        kinds = [branch.get("type") for branch in prop["anyOf"] if isinstance(branch, Mapping)]
    return kinds == "string" or (isinstance(kinds, list) and "string" in kinds and len(kinds) <= 2)


def check_arguments(tool: str, arguments: Mapping[str, Any], input_schema: Mapping[str, Any]) -> None:
    """Refuse arguments the tool would refuse, naming what to pass.

    Raises:
        UsageError: an argument is missing, unknown to the tool, or not of its type.
    """
    properties: Mapping[str, Any] = input_schema.get("properties", {})
    unknown = [name for name in arguments if name not in properties]
    if unknown and input_schema.get("additionalProperties", False) is False:
        takes = ", ".join(properties) or "no arguments"
        raise UsageError(f"{tool} takes no argument {_names(unknown)} (it takes: {takes})")
    missing = [name for name in input_schema.get("required", []) if name not in arguments]
    if missing:
        passes = " ".join(f"--arg {name}=…" for name in missing)
        raise UsageError(f"{tool} needs {_names(missing)}: pass {passes}")
    try:
        validator = Draft202012Validator(dict(input_schema))
        problems = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    except SchemaError:
        return  # a schema the server got wrong: the server is the one to judge its arguments
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.absolute_path) or "the arguments"
        raise UsageError(f"{tool}: {where}: {_reason(first.validator, first.validator_value, first.message)}")


def _names(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _reason(keyword: object, expected: object, message: str) -> str:
    """jsonschema's reason without the value it quotes (it may be long, or a secret)."""
    if keyword == "type":
        return f"must be of type {' or '.join(expected) if isinstance(expected, list) else expected}"
    if keyword == "enum" and isinstance(expected, list):
        return f"must be one of {', '.join(json.dumps(v) for v in expected)}"
    return message
