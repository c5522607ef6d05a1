"""elicitkit's `requestState`: `ek1.<run id>.<round nonce>`, built and read here only.

The SDK seals the whole `requestState` (AES-GCM, bound to the principal) before
it reaches the client, so this inner format needs no protection of its own;
its nonce makes each round's state usable once.
"""

from __future__ import annotations

__all__ = ["PREFIX", "decode_state", "encode_state", "is_ours"]

PREFIX = "ek1."


def encode_state(run_id: str, nonce: str) -> str:
    """The state of a run's round; `decode_state` reads it back as `(run_id, nonce)`."""
    if not run_id or "." in run_id:
        raise ValueError("a run id must be non-empty and must not contain '.'")
    if not nonce:
        raise ValueError("a round nonce must be non-empty")
    return f"{PREFIX}{run_id}.{nonce}"


def is_ours(state: object) -> bool:
    """Whether a retry's `requestState` is one elicitkit handed out (anything else is the server's own)."""
    return isinstance(state, str) and state.startswith(PREFIX)


def decode_state(state: str) -> tuple[str, str] | None:
    """(run id, nonce), or None when `state` is not a well-formed elicitkit state."""
    if not is_ours(state):
        return None
    run_id, dot, nonce = state.removeprefix(PREFIX).partition(".")
    if not run_id or not dot or not nonce:
        return None
    return run_id, nonce
