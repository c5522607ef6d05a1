"""What every channel's callback does before it knows who is calling: read the body, but not without bound."""

from __future__ import annotations

from starlette.requests import Request

__all__ = ["bounded_body"]


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The raw body (signatures cover its exact bytes), or None past `limit` bytes.

    The sender is not authenticated yet, so nothing past the limit is read: a declared length over it is refused
    at once, and a body without one is read only up to it.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
