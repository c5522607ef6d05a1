"""The errors a request gets when it cannot reach its run: each with a `data.reason` clients can act on."""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

__all__ = ["ended", "invalid_responses", "reused", "store_unavailable", "taking_over", "tampered", "unknown"]


def _refusal(reason: str, message: str, code: int = INVALID_PARAMS) -> MCPError:
    return MCPError(code=code, message=message, data={"reason": reason})


def ended() -> MCPError:
    return _refusal(
        "elicitation_ended", "This tool call ended before finishing (expired or cancelled); call the tool again"
    )


def unknown() -> MCPError:
    return _refusal(
        "unknown_elicitation", "This elicitation is unknown or has expired; call the tool again to start over"
    )


def reused() -> MCPError:
    return _refusal(
        "request_state_reused", "This requestState was already used; retry with the requestState of the latest result"
    )


def invalid_responses(message: str) -> MCPError:
    return _refusal("invalid_input_responses", message)


def taking_over() -> MCPError:
    return MCPError(code=INVALID_PARAMS, message="This elicitation is being taken over by another node; retry shortly")


def store_unavailable(message: str) -> MCPError:
    return _refusal("store_unavailable", message, INTERNAL_ERROR)


def tampered() -> MCPError:
    return _refusal(
        "tampered_state",
        "The stored state of this elicitation failed authentication; call the tool again",
        INTERNAL_ERROR,
    )
