"""elicitkit: human-in-the-loop elicitation for MCP servers that just works.

```python
hitl = Elicitation(server)
answer = await hitl.elicit(ctx, "Deploy v2.1?", Approval)
```

Importing the package costs next to nothing: each name is imported the first
time it is used, so `elicitkit ask` inside a shell tool starts in milliseconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elicitkit._clients import ClientOverride
    from elicitkit._elicitation import Elicitation
    from elicitkit._engine.stages import StageEvent
    from elicitkit._errors import (
        ElicitationClientError,
        ElicitationError,
        ElicitationNotSupported,
        ElicitationTimeout,
        ElicitationVetoed,
        InvalidElicitationContent,
        Problem,
        SchemaError,
        StoreUnavailable,
        TamperedRecord,
    )
    from elicitkit._fallback import Fallback, FallbackHandler, PendingQuestion
    from elicitkit._hookdata import Ask, Outcome, QuestionInfo
    from elicitkit._results import Accepted, Cancelled, Declined, ElicitationResult
    from elicitkit._schema.compile import Titles
    from elicitkit._timeouts import SERVER_DEFAULT, Timeout
    from elicitkit._web.app import PageIdentity
    from elicitkit._web.limits import BodyLimits

_HOMES = {
    "Accepted": "elicitkit._results",
    "Ask": "elicitkit._hookdata",
    "BodyLimits": "elicitkit._web.limits",
    "Cancelled": "elicitkit._results",
    "ClientOverride": "elicitkit._clients",
    "Declined": "elicitkit._results",
    "Elicitation": "elicitkit._elicitation",
    "ElicitationClientError": "elicitkit._errors",
    "ElicitationError": "elicitkit._errors",
    "ElicitationNotSupported": "elicitkit._errors",
    "ElicitationResult": "elicitkit._results",
    "ElicitationTimeout": "elicitkit._errors",
    "ElicitationVetoed": "elicitkit._errors",
    "Fallback": "elicitkit._fallback",
    "FallbackHandler": "elicitkit._fallback",
    "InvalidElicitationContent": "elicitkit._errors",
    "Outcome": "elicitkit._hookdata",
    "PageIdentity": "elicitkit._web.app",
    "PendingQuestion": "elicitkit._fallback",
    "Problem": "elicitkit._errors",
    "QuestionInfo": "elicitkit._hookdata",
    "SERVER_DEFAULT": "elicitkit._timeouts",
    "SchemaError": "elicitkit._errors",
    "StageEvent": "elicitkit._engine.stages",
    "StoreUnavailable": "elicitkit._errors",
    "TamperedRecord": "elicitkit._errors",
    "Timeout": "elicitkit._timeouts",
    "Titles": "elicitkit._schema.compile",
}

__all__ = [
    "Accepted",
    "Ask",
    "BodyLimits",
    "Cancelled",
    "ClientOverride",
    "Declined",
    "Elicitation",
    "ElicitationClientError",
    "ElicitationError",
    "ElicitationNotSupported",
    "ElicitationResult",
    "ElicitationTimeout",
    "ElicitationVetoed",
    "Fallback",
    "FallbackHandler",
    "InvalidElicitationContent",
    "Outcome",
    "PageIdentity",
    "PendingQuestion",
    "Problem",
    "QuestionInfo",
    "SERVER_DEFAULT",
    "SchemaError",
    "StageEvent",
    "StoreUnavailable",
    "TamperedRecord",
    "Timeout",
    "Titles",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'elicitkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # imported once; later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
