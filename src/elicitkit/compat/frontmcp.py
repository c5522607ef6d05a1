"""FrontMCP's elicitation names, for code moving from FrontMCP to elicitkit.

```python
from elicitkit.compat.frontmcp import ElicitationTimeoutError, InvalidInputError

try:
    result = await hitl.elicit(ctx, "Approve?", Approval, timeout=60)
except ElicitationTimeoutError as error:
    log.warning("timed out after %sms (question %s)", error.ttl, error.elicit_id)
    raise
if result.status != "accept":
    return {"cancelled": True, "reason": f"User {result.status}d the request"}
```

Every error here *is* elicitkit's own class under FrontMCP's name, so
`except ElicitationTimeoutError` and `except ElicitationTimeout` catch the
same thing, and all of them are `ElicitationError`s. Results already carry
FrontMCP's `.status` (the same as `.action`), and a `Problem`'s `.path` is a
list, as in FrontMCP's `InvalidInputError` details. The side-by-side guide is
docs/migrate-frontmcp.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, TypeVar

from elicitkit._engine.stages import StageName
from elicitkit._errors import (
    ElicitationError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    StoreUnavailable,
    TamperedRecord,
)
from elicitkit._results import Accepted, Cancelled, Declined, Status

__all__ = [
    "DEFAULT_ELICIT_TTL",
    "STAGES",
    "ElicitResult",
    "ElicitStatus",
    "ElicitationEncryptionError",
    "ElicitationError",
    "ElicitationNotSupportedError",
    "ElicitationSubscriptionError",
    "ElicitationTimeoutError",
    "InvalidInputError",
    "supports_elicitation",
]

T = TypeVar("T")

ElicitationTimeoutError = ElicitationTimeout
"""No answer within the timeout (FrontMCP: `ElicitationTimeoutError`, with `.ttl` in ms and `.elicit_id`)."""

ElicitationNotSupportedError = ElicitationNotSupported
"""The client cannot show this kind of elicitation, and no fallback applies."""

InvalidInputError = InvalidElicitationContent
"""An accepted answer broke the schema; `.problems` holds each `Problem` (`.path` a list, `.message`)."""

ElicitationEncryptionError = TamperedRecord
"""A sealed record could not be opened (FrontMCP's decryption failure; elicitkit fails closed)."""

ElicitationSubscriptionError = StoreUnavailable
"""The store or pub/sub between nodes could not be reached."""

ElicitResult: TypeAlias = Accepted[T] | Declined | Cancelled
"""What `elicit` returns: `Accepted` (`.status == "accept"`, `.data`, `.content`), `Declined` or `Cancelled`."""

ElicitStatus: TypeAlias = Status
"""`"accept"`, `"decline"` or `"cancel"`: a result's `.status`."""

DEFAULT_ELICIT_TTL = 300_000
"""FrontMCP's default timeout, in milliseconds; elicitkit takes seconds: `timeout=DEFAULT_ELICIT_TTL / 1000`."""

STAGES: Mapping[str, StageName] = {
    "generateElicitId": "generate_id",
    "lookupPending": "lookup_pending",
    "validateContent": "validate",
    "publishResult": "publish",
}
"""FrontMCP's flow stages that elicitkit has as stages of its own (`hitl.stage(...)`, `hitl.after_stage(...)`).

The others are hook points: `storePendingRecord` and `finalize` (request) are `after_ask` stages `"stored"` and
`"sent"`; `buildRequestParams` is `before_ask`; `buildResult` is `before_answer`; `finalize` (result) is
`after_answer`; `.Around` is `around`. docs/migrate-frontmcp.md has the whole table.
"""


def supports_elicitation(
    capabilities: Mapping[str, Any] | Any | None, mode: Literal["form", "url"] | None = None
) -> bool:
    """Whether client capabilities declare elicitation (of `mode`, when given), read as FrontMCP reads them.

    `capabilities` is the `initialize` request's `capabilities` (a mapping, or the SDK's `ClientCapabilities`).
    An empty `elicitation: {}` means form only; `experimental.elicitation` counts too. Inside a tool, prefer
    `hitl.supports(ctx, mode)`, which also knows the 2026-07-28 per-request capabilities and client overrides.
    """
    if capabilities is None:
        return False
    if not isinstance(capabilities, Mapping):
        dump = getattr(capabilities, "model_dump", None)
        if dump is None:
            return False
        capabilities = dump(by_alias=True, exclude_none=True)
    declared = capabilities.get("elicitation")
    if declared is None:
        experimental = capabilities.get("experimental")
        declared = experimental.get("elicitation") if isinstance(experimental, Mapping) else None
    if not isinstance(declared, Mapping):
        return False
    if mode is None:
        return True
    if "form" not in declared and "url" not in declared:
        return mode == "form"  # a bare {} is form only
    return mode in declared
