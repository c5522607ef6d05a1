"""Values written as JavaScript writes them: `JSON.stringify(value)` and a number in a template literal.

mcp.do's `elicit` tool is JavaScript; an agent that reads `User provided:
{...}` or `Request timed out after N minutes` from it reads JavaScript's text:
no spaces after `:` and `,`, numbers in ECMAScript's shortest form (`1` for
1.0, `1e+21`, `1.5e-7`), integer-like keys first in ascending order, non-ASCII
characters as they are. Only the JSON values an answer can hold are written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["number", "stringify"]

_SAFE_INTEGER = 2**53
_ARRAY_INDEX_LIMIT = 2**32 - 1


def stringify(value: Any) -> str:
    """`JSON.stringify(value)` for a JSON value (dicts, lists, strings, numbers, booleans, None).

    Raises:
        TypeError: something that is not a JSON value.
    """
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return number(value) if math.isfinite(value) else "null"
    if isinstance(value, Mapping):
        items = [(str(key), item) for key, item in value.items()]
        return "{" + ",".join(f"{stringify(key)}:{stringify(item)}" for key, item in _js_order(items)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(stringify(item) for item in value) + "]"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def number(value: float) -> str:
    """ECMAScript's `Number::toString(value)` for a finite number (what `${n}` and `JSON.stringify` print)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _SAFE_INTEGER:
        return str(value)
    x = float(value)
    if x == 0:
        return "0"
    if x < 0:
        return "-" + number(-x)
    # repr gives the shortest digits that read back as x, which is the `s` of the ECMAScript algorithm.
    _, digits_tuple, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    exponent += len("".join(map(str, digits_tuple))) - len(digits)
    k = len(digits)
    n = exponent + k
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _js_order(items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """An object's keys as JavaScript enumerates them: array indexes ascending, then the rest as inserted."""
    indexes = sorted((item for item in items if _is_index(item[0])), key=lambda item: int(item[0]))
    return indexes + [item for item in items if not _is_index(item[0])]


def _is_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < _ARRAY_INDEX_LIMIT
