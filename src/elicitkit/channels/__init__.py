"""Human channels: ask people in elicitkit's web inbox, Slack, Discord or Microsoft Teams.

```python
hitl = Elicitation(server, channels=[WebInbox(), SlackChannel(token=..., signing_secret=...)])
await hitl.confirm(ctx, "Deploy?", via=slack("#deploys", approvers={"U024BE7LH"}))
```

`Channel` is the protocol a channel implements (see `elicitkit.channels.base`).
The channel classes load when first named, so `import elicitkit` pays for none
of them; Slack, Discord and Teams need `pip install 'elicitkit[slack]'`,
`'elicitkit[discord]'` or `'elicitkit[teams]'`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from elicitkit.channels.base import (
    Channel,
    ChannelRefused,
    Closing,
    Desk,
    Prompt,
    Responder,
    Verdict,
    Via,
    discord,
    slack,
    teams,
    web,
)

if TYPE_CHECKING:
    from elicitkit.channels._discord import DiscordChannel
    from elicitkit.channels._slack import SlackChannel
    from elicitkit.channels._teams import TeamsChannel
    from elicitkit.channels._web_inbox import WebInbox

__all__ = [
    "Channel",
    "ChannelRefused",
    "Closing",
    "Desk",
    "DiscordChannel",
    "Prompt",
    "Responder",
    "SlackChannel",
    "TeamsChannel",
    "Verdict",
    "Via",
    "WebInbox",
    "discord",
    "slack",
    "teams",
    "web",
]

# Class name -> (module, the extra that installs what it needs).
_CHANNELS = {
    "DiscordChannel": ("_discord", "discord"),
    "SlackChannel": ("_slack", "slack"),
    "TeamsChannel": ("_teams", "teams"),
    "WebInbox": ("_web_inbox", None),
}


def __getattr__(name: str) -> Any:
    found = _CHANNELS.get(name)
    if found is None:
        raise AttributeError(f"module 'elicitkit.channels' has no attribute {name!r}")
    module, extra = found
    try:
        loaded = importlib.import_module(f"elicitkit.channels.{module}")
    except ModuleNotFoundError as exc:
        if extra is None or exc.name is None or exc.name.startswith("elicitkit"):
            raise
        raise ImportError(f"{name} needs {exc.name}: pip install 'elicitkit[{extra}]'") from exc
    value = getattr(loaded, name)
    globals()[name] = value
    return value
