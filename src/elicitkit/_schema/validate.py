"""Checking an accepted answer against its question, before the tool sees it.

Every problem is collected (not just the first) as a `Problem(path, message)`.
Messages name the field and the rule, never the submitted value. A message from
the type's own validator may hold words its author wrote for people (a
`ValueError`'s); `authored` reads them back, for the pages and the view.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from elicitkit._errors import InvalidElicitationContent, Problem
from elicitkit._schema.compile import FormSchema
from elicitkit._schema.values import check_value, fits

__all__ = ["authored", "check_content", "problems_in", "to_data"]

# How pydantic words an error a validator raised with its author's own message.
_AUTHORED = ("Value error, ", "Assertion failed, ")


def check_content(schema: FormSchema, content: Any) -> list[Problem]:
    """Every way `content` breaks `schema`; empty when it fits."""
    if not isinstance(content, dict):
        return [Problem("", "an accepted answer must carry an object of field values")]
    fast = schema.fast_check
    if fast is None:
        fast = _FastCheck(schema)
        object.__setattr__(schema, "fast_check", fast)
    if fast(content):
        return []
    # Something is wrong: find every problem, each with its message.
    problems: list[Problem] = []
    properties = schema.properties
    for key in content:
        if key not in properties:
            problems.append(Problem(str(key), "unknown field"))
    for key in schema.required:
        if key not in content:
            problems.append(Problem(key, "required field is missing"))
    for key, prop in properties.items():
        if key in content:
            problems.extend(Problem(key, m) for m in check_value(prop, content[key]))
    return problems


class _FastCheck:
    """Whether an answer fits its schema, in one pass and without building messages (`check_content`'s common
    case: the person answered as asked)."""

    __slots__ = ("known", "required", "tests")

    def __init__(self, schema: FormSchema) -> None:
        self.known = frozenset(schema.properties)
        self.required = frozenset(schema.required)
        self.tests = tuple((key, fits(prop)) for key, prop in schema.properties.items())

    def __call__(self, content: dict[Any, Any]) -> bool:
        keys = content.keys()
        if not (self.required <= keys and self.known.issuperset(keys)):
            return False
        for key, test in self.tests:  # noqa: SIM110 (not `all(...)` over a generator: no frame to make and resume)
            if key in content and not test(content[key]):
                return False
        return True


def to_data(schema: FormSchema, content: Any) -> Any:
    """Validate `content` and build the typed answer.

    Raises:
        InvalidElicitationContent: with every problem found.
    """
    problems = check_content(schema, content)
    if problems:
        raise InvalidElicitationContent(problems)
    if schema.adapter is None:
        data = {k: p["default"] for k, p in schema.properties.items() if "default" in p}
        data.update(content)
        return data
    filled = content
    if schema.nullable:
        filled = dict(content)
        for key in schema.nullable:
            filled.setdefault(key, None)
    try:
        return schema.adapter.validate_python(filled)
    except ValidationError as exc:
        # The schema check passed, so these come from the type's own validators.
        raise InvalidElicitationContent([_problem(schema, err) for err in exc.errors(include_input=False)]) from None


def _problem(schema: FormSchema, error: Any) -> Problem:
    loc = error["loc"]
    fmt = schema.properties.get(str(loc[0]), {}).get("format") if loc else None
    # Format validators (email-validator, URL parsing) may quote parts of the value; say only the rule.
    return Problem(loc, f"must be a valid {fmt}" if fmt else error["msg"])


def authored(message: str) -> str | None:
    """The words of the validator's author in a problem's message (a `ValueError`'s, an `assert`'s), if any: what
    a person may be shown, since its author wrote it for people."""
    for prefix in _AUTHORED:
        if message.startswith(prefix) and len(message) > len(prefix):
            return message[len(prefix) :]
    return None


def problems_in(schema: FormSchema, action: str, content: Any) -> InvalidElicitationContent | None:
    """Why an answer cannot be taken (None when it can): the one validation every route applies.

    Only an accept carries content; it must build the typed answer, the type's own validators included.
    """
    if action != "accept":
        return None
    try:
        to_data(schema, content)
    except InvalidElicitationContent as exc:
        return exc
    return None
