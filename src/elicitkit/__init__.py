"""elicitkit: human-in-the-loop elicitation for MCP servers that just works.

```python
hitl = Elicitation(server)
answer = await hitl.elicit(ctx, "Deploy v2.1?", Approval)
```
"""

from elicitkit.capabilities import supports_elicitation
from elicitkit.elicitation import Elicitation
from elicitkit.errors import (
    ElicitationClientError,
    ElicitationError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
    SchemaError,
)
from elicitkit.results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit.schema import Titles

__all__ = [
    "Accepted",
    "Cancelled",
    "Declined",
    "Elicitation",
    "ElicitationClientError",
    "ElicitationError",
    "ElicitationNotSupported",
    "ElicitationResult",
    "ElicitationTimeout",
    "InvalidElicitationContent",
    "Problem",
    "SchemaError",
    "Titles",
    "supports_elicitation",
]
