"""The hypothesis profile every property test runs under.

No example database (nothing written into the repository), no deadline (the
machine is shared, so timing is noise), and on CI a fixed seed so a failure
there is the same failure on a laptop. No health check is suppressed.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile(
    "elicitkit",
    database=None,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    print_blob=True,
)
settings.load_profile("elicitkit")
