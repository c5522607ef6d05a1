"""Human channels: ask people in elicitkit's web inbox, Slack, Discord or Microsoft Teams.

```python
hitl = Elicitation(server, channels=[WebInbox(), SlackChannel(token=..., signing_secret=...)])
await hitl.confirm(ctx, "Deploy?", via=slack("#deploys", approvers={"U024BE7LH"}))
```

`Channel` is the protocol a channel implements (see `elicitkit.channels.base`);
the Slack and Teams channels need `pip install 'elicitkit[slack]'` /
`'elicitkit[teams]'` when constructed.
"""

from elicitkit.channels.discord import DiscordChannel  # noqa: I001  (the functions below must come last)
from elicitkit.channels.slack import SlackChannel
from elicitkit.channels.teams import TeamsChannel
from elicitkit.channels.web_inbox import WebInbox

# After the submodules: `web` is the function, not the `web` module.
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
