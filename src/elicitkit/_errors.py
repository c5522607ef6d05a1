"""Every exception elicitkit raises, under one root.

```
ElicitationError
├── ElicitationTimeout          no answer within `timeout=` seconds               (+ ToolError)
├── ElicitationNotSupported     the client cannot show this kind of elicitation   (+ ToolError)
├── ElicitationClientError      the client answered the elicitation with an error (+ ToolError)
├── InvalidElicitationContent   an accepted answer broke the schema (.problems)   (+ ToolError)
├── ElicitationVetoed           a hook refused the question or withheld the answer (+ ToolError)
├── SchemaError                 a Python type cannot become a restricted schema   (a programmer error)
├── StoreUnavailable            the store could not be reached                    (+ MCPError)
└── TamperedRecord              a stored record failed to open (modified, other key or mode)
```

Declining, cancelling and timing out are normal outcomes: `elicit` returns
`Declined` and `Cancelled` as data, and only a timeout raises. The five
errors about *this* exchange also derive from the SDK's `ToolError`: one that
escapes a tool ends the call as an `isError` result carrying its message, so
the model reads which field was wrong instead of a generic "Error executing
tool". The others are the server's problem, not the model's: the SDK logs
them with their traceback and the client only sees that the tool failed; except
`StoreUnavailable`, which is also the protocol's error (`MCPError`, with
`data.reason` "store_unavailable"): the call ends with that retryable refusal,
as a call the store refused at its start does.

Messages never contain the person's answers, only field names and reasons:
the SDK logs tool errors, and answers may be personal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

__all__ = [
    "ElicitationClientError",
    "ElicitationError",
    "ElicitationNotSupported",
    "ElicitationTimeout",
    "ElicitationVetoed",
    "InvalidElicitationContent",
    "Problem",
    "SchemaError",
    "StoreUnavailable",
    "TamperedRecord",
]


class ElicitationError(Exception):
    """Root of every elicitkit exception."""


class ElicitationTimeout(ElicitationError, ToolError, TimeoutError):
    """Nobody answered within the elicitation's timeout.

    Attributes:
        timeout: the timeout that ran out, in seconds.
        elicit_id: the question's id (its `elicitationId`), None when it is not known.
    """

    def __init__(self, timeout: float, elicit_id: str | None = None) -> None:
        super().__init__(f"No answer to the elicitation within {timeout:g} seconds")
        self.timeout = timeout
        self.elicit_id = elicit_id

    @property
    def ttl(self) -> int:
        """The timeout in milliseconds (FrontMCP's `ttl`)."""
        return round(self.timeout * 1000)


class ElicitationNotSupported(ElicitationError, ToolError):
    """The client cannot show this elicitation (no capability, or not this mode)."""


class ElicitationClientError(ElicitationError, ToolError):
    """The client answered `elicitation/create` with a JSON-RPC error instead of a result.

    Attributes:
        code: the JSON-RPC error code the client sent.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"The client could not show the elicitation (error {code}: {message})")
        self.code = code


class ElicitationVetoed(ElicitationError, ToolError):
    """A hook refused to put the question, or withheld its answer from the tool (it fails closed).

    Raise it from a `before_ask` or `before_answer` hook to veto with a reason
    the model may read. Any other exception a `before_*` hook raises becomes
    one too, with a generic message (the original is logged and chained as
    `__cause__`), so a broken policy hook never lets a question or answer through.

    Attributes:
        reason: why, as the tool and the model see it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Problem:
    """One reason an answer was refused: where (`path`) and why (`message`).

    `path` is the field's location as a list, as JSON Schema validators and
    FrontMCP report it: `["age"]` for a field, `["tags", 1]` inside one, `[]`
    for the whole answer. `dotted` is the same as one string (`"age"`,
    `"tags.1"`, `""`). `Problem("age", ...)` is short for `Problem(["age"], ...)`:
    a string names one field (`""` the whole answer) and is never split.
    """

    __slots__ = ("_path", "message")

    def __init__(self, path: str | Sequence[str | int], message: str) -> None:
        if isinstance(path, str):
            self._path: tuple[str | int, ...] = (path,) if path else ()
        else:
            self._path = tuple(part if isinstance(part, int) else str(part) for part in path)
        self.message = message

    @property
    def path(self) -> list[str | int]:
        """Where the problem is, as a list of field names and item indexes (`[]`: the whole answer)."""
        return list(self._path)

    @property
    def dotted(self) -> str:
        """`path` as one string, its parts joined with dots (`""`: the whole answer)."""
        return ".".join(str(part) for part in self._path)

    @property
    def field(self) -> str:
        """The top-level field the problem is in (`""`: the whole answer)."""
        return str(self._path[0]) if self._path else ""

    def to_json(self) -> dict[str, Any]:
        """`{"path": [...], "message": ...}`, FrontMCP's shape for a validation problem."""
        return {"path": list(self._path), "message": self.message}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._path == other._path and self.message == other.message

    def __hash__(self) -> int:
        return hash((self._path, self.message))

    def __repr__(self) -> str:
        return f"Problem(path={list(self._path)!r}, message={self.message!r})"

    def __str__(self) -> str:
        dotted = self.dotted
        return f"{dotted}: {self.message}" if dotted else self.message


class InvalidElicitationContent(ElicitationError, ToolError, ValueError):
    """An accepted answer does not match the question's schema.

    Attributes:
        problems: every problem found, each a `Problem(path, message)`.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        listed = "; ".join(str(p) for p in self.problems)
        super().__init__(f"The answer does not match the requested form: {listed}")


class SchemaError(ElicitationError, TypeError):
    """A type or raw schema cannot be expressed as MCP's restricted elicitation schema.

    Raised the first time a tool asks with that schema, before anything is
    sent; the message names the field and the reason. It
    is a bug in the server, so it is not shown to the model: the SDK logs it and
    the call fails with a generic tool error.
    """


class StoreUnavailable(ElicitationError, MCPError):
    """The store behind runs and journals could not be reached; what was recorded is kept, retry later.

    Also an `MCPError` (internal error, `data.reason` "store_unavailable"): one that escapes a tool (its question
    or its `step` could not be recorded) ends the call with that refusal, which says to retry, as the middleware
    answers a call the store refused at its start; not as a tool that failed, logged with its traceback.
    """

    def __init__(self, message: str) -> None:
        MCPError.__init__(self, code=INTERNAL_ERROR, message=message, data={"reason": "store_unavailable"})

    def __str__(self) -> str:
        return self.message


class TamperedRecord(ElicitationError):
    """A stored or relayed record failed to open, so it is refused (fail closed).

    Raised by `Sealer.open` when a record was modified, sealed for another
    principal or context, sealed with a secret no longer configured, or written
    without a secret; and by `PlainSealer.open` when a record is sealed but no
    secret is configured. The message never contains key material or plaintext.
    """
