"""elicitkit: human-in-the-loop elicitation for MCP servers that just works.

```python
hitl = Elicitation(server)
answer = await hitl.elicit(ctx, "Deploy v2.1?", Approval)
```
"""

from elicitkit._capabilities import supports_elicitation
from elicitkit._clients import ClientOverride
from elicitkit._elicitation import Elicitation
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
    SchemaError,
    StoreUnavailable,
    TamperedRecord,
)
from elicitkit._fallback import PendingQuestion
from elicitkit._results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit._schema.compile import Titles

__all__ = [
    "Accepted",
    "Cancelled",
    "ClientOverride",
    "Declined",
    "Elicitation",
    "ElicitationClientError",
    "ElicitationError",
    "ElicitationNotSupported",
    "ElicitationResult",
    "ElicitationTimeout",
    "InvalidElicitationContent",
    "PendingQuestion",
    "Problem",
    "SchemaError",
    "StoreUnavailable",
    "TamperedRecord",
    "Titles",
    "supports_elicitation",
]
