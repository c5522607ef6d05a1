"""elicitkit: human-in-the-loop elicitation for MCP servers that just works.

```python
hitl = Elicitation(server)
answer = await hitl.elicit(ctx, "Deploy v2.1?", Approval)
```
"""

from elicitkit._clients import ClientOverride
from elicitkit._elicitation import Elicitation
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

__all__ = [
    "Accepted",
    "Ask",
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
    "StoreUnavailable",
    "TamperedRecord",
    "Timeout",
    "Titles",
]
