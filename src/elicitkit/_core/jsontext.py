"""JSON text as elicitkit writes it into records, digests and signatures: compact, or canonical (keys sorted).

`json.dumps` given any option builds a new encoder on every call; these are built once.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical", "canonical_any", "compact"]

_COMPACT = json.JSONEncoder(separators=(",", ":"))
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_CANONICAL_ANY = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def compact(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"))`."""
    return _COMPACT.encode(value)


def canonical(value: Any) -> str:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"))`: the same text for the same value."""
    return _CANONICAL.encode(value)


def canonical_any(value: Any) -> str:
    """`canonical`, with anything JSON has no type for written as its `str()`."""
    return _CANONICAL_ANY.encode(value)
