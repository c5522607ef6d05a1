"""What nodes say to each other over the broker: signed messages, sealed bodies, and a run's outcome on the wire.

A message is a JSON header line, then a body. A forwarded arrival's header carries `id`, `run`, `reply` (where its
replies go) and `t` (the sender's timeout); its body is sealed under the run's principal with the message id, run
and reply channel as associated data. A reply's header carries the `id` it answers and no `run`: an
acknowledgement (`ack`), a "not held here" (`gone`), or, with a sealed body, the run's next outcome.

Every message, each way, is signed: its header carries `mac`, an HMAC-SHA256 under a key derived from the secret,
over the channel it is published on, the header without `mac`, and the body. Anyone who can publish on the broker
but has no secret can neither forge a message nor move one to another channel; a message whose MAC is missing or
wrong is ignored and logged, and nothing is done with it. Without a secret there is no key: messages travel
unauthenticated, as a shared store without a secret warns at start-up.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any, Literal

from mcp.server.context import HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from pydantic import BaseModel

from elicitkit._core.jsontext import canonical
from elicitkit._crypto import SealerLike

__all__ = ["Message", "Refusal", "aad", "decode_outcome", "encode_outcome", "ignored", "pack", "seconds", "unpack"]

logger = logging.getLogger("elicitkit")


def seconds(value: Any) -> float:
    """A header's number of seconds; 0 when absent or not a finite, positive number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        return 0.0
    return float(value)


def aad(*parts: str) -> bytes:
    """Associated data binding a sealed body to its message id, run and reply channel."""
    return "|".join(parts).encode()


Message = tuple[dict[str, Any], bytes]
"""A message as unpacked: its header (without `mac`) and its body."""

Refusal = Literal["malformed", "forged"]
_REFUSED: dict[Refusal, str] = {
    "malformed": "Ignored %s: malformed",
    "forged": "Ignored %s: its MAC is missing or wrong (forged, moved from another channel, or signed with a "
    "secret this node does not have)",
}


def _signed_part(channel: str, header: dict[str, Any], body: bytes) -> bytes:
    """What a MAC covers: the channel, the header (canonical JSON, without `mac`) and the body, each
    length-prefixed so that no part can pass for another."""
    name, text = channel.encode(), canonical(header).encode()
    return b"".join(
        (len(name).to_bytes(8, "big"), name, len(text).to_bytes(8, "big"), text, len(body).to_bytes(8, "big"), body)
    )


def pack(sealer: SealerLike, channel: str, header: dict[str, Any], body: bytes = b"") -> bytes:
    """A message for `channel`: its header line, signed for that channel (no `mac` without a secret), then `body`."""
    tag = sealer.sign(_signed_part(channel, header, body))
    line = json.dumps({**header, "mac": tag.hex()} if tag else header).encode()
    return line + b"\n" + body if body else line


def unpack(sealer: SealerLike, channel: str, raw: bytes) -> tuple[dict[str, Any], bytes] | Refusal:
    """A message read on `channel` as its header (without `mac`) and body, or why it must be ignored."""
    head, _, body = raw.partition(b"\n")
    try:
        header = json.loads(head.decode())  # (from text: bytes would have their encoding detected first)
    except ValueError:
        return "malformed"
    if not isinstance(header, dict):
        return "malformed"
    mac = header.pop("mac", "")
    try:
        tag = bytes.fromhex(mac) if isinstance(mac, str) else None
    except ValueError:
        tag = None
    if tag is None or not sealer.verify(_signed_part(channel, header, body), tag):
        return "forged"
    return header, body


def ignored(refusal: Refusal, what: str) -> None:
    # Names the channel or run only: what the message says is the sender's, and may be anyone's.
    logger.warning(_REFUSED[refusal], what)


def encode_outcome(result: HandlerResult | None = None, error: BaseException | None = None) -> dict[str, Any]:
    if error is not None:
        if isinstance(error, MCPError):
            return {"error": error.error.model_dump(mode="json", exclude_none=True)}
        logger.error("A forwarded run failed", exc_info=error)
        return {"error": {"code": INTERNAL_ERROR, "message": "Internal error"}}
    if isinstance(result, BaseModel):
        return {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
    return {"result": result}


def decode_outcome(outcome: dict[str, Any]) -> HandlerResult:
    """The outcome as the receiving node returns it to its client; an error is raised."""
    if "error" in outcome:
        error = outcome["error"]
        raise MCPError(code=error["code"], message=error["message"], data=error.get("data"))
    result: HandlerResult = outcome["result"]
    return result
