"""elicitkit's `requestState`: `ek1.<run id>.<round nonce>[.<owner node>]`, built and read here only.

The SDK seals the whole `requestState` (AES-GCM, bound to the principal) before
it reaches the client, so this inner format needs no protection of its own;
its nonce makes each round's state usable once. The owner, where a shared store
names one, is the node that held the run when it handed the state out: the node
a retry landing elsewhere sends its answers to first, without looking the run
up (a hint: the run may have moved since, and its record says where).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PREFIX", "State", "decode_state", "encode_state", "is_ours"]

PREFIX = "ek1."


class State(NamedTuple):
    run_id: str
    nonce: str
    owner: str | None = None
    """The node that held the run when this state was handed out (None: not said)."""


def encode_state(run_id: str, nonce: str, owner: str | None = None) -> str:
    """The state of a run's round; `decode_state` reads it back as `State(run_id, nonce, owner)`."""
    if not run_id or "." in run_id or not nonce or "." in nonce:
        raise ValueError("a run id and a round nonce must be non-empty and must not contain '.'")
    return f"{PREFIX}{run_id}.{nonce}.{owner}" if owner else f"{PREFIX}{run_id}.{nonce}"


def is_ours(state: object) -> bool:
    """Whether a retry's `requestState` is one elicitkit handed out (anything else is the server's own)."""
    return isinstance(state, str) and state.startswith(PREFIX)


def decode_state(state: str) -> State | None:
    """The run, round and owner `state` names, or None when it is not a well-formed elicitkit state."""
    if not is_ours(state):
        return None
    run_id, dot, rest = state.removeprefix(PREFIX).partition(".")
    nonce, named, owner = rest.partition(".")
    if not run_id or not dot or not nonce or (named and not owner):
        return None
    return State(run_id, nonce, owner or None)
