"""elicitkit: human-in-the-loop elicitation for MCP servers that just works.

```python
hitl = Elicitation(server)
answer = await hitl.elicit(ctx, "Deploy v2.1?", Approval)
```
"""

from elicitkit.capabilities import supports_elicitation
from elicitkit.clients import ClientOverride
from elicitkit.elicitation import Elicitation
from elicitkit.errors import (
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
from elicitkit.fallback import PendingQuestion
from elicitkit.results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit.schema import Titles

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
