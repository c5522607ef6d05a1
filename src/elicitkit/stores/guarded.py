"""A store (and a broker) whose backend failures surface as one clear `StoreUnavailable`.

Backends raise their own errors (`sqlite3.Error`, redis-py's `RedisError`,
`OSError` for a dropped connection); the engine sees `StoreUnavailable`, which
a tool reports with a clear message and the protocol layer maps to an error
the client can retry. A broker is most often the store's own server (Redis):
publishing to it fails as the store does, with the same refusal.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, cast

from elicitkit._errors import StoreUnavailable
from elicitkit.stores.base import Broker, Store

__all__ = ["BACKEND_ERRORS", "guarded", "guarded_broker"]


def _backend_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)
    try:
        from redis.exceptions import RedisError
    except ImportError:
        return errors
    return (*errors, RedisError)


BACKEND_ERRORS = _backend_errors()


class _Guarded:
    def __init__(self, store: Store | Broker, only: frozenset[str] | None = None) -> None:
        self._store = store
        self._only = only
        """The methods to guard (None: every one)."""

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute) or (self._only is not None and name not in self._only):
            return attribute
        method = cast(Callable[..., Awaitable[Any]], attribute)

        @functools.wraps(method)
        async def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return await method(*args, **kwargs)
            except BACKEND_ERRORS as exc:
                raise StoreUnavailable(
                    f"The elicitation store is unavailable ({type(exc).__name__}); nothing was lost, retry shortly"
                ) from exc

        # Wrapped once per name: later reads find it in the instance and skip `__getattr__`.
        setattr(self, name, call)
        return call


def guarded(store: Store) -> Store:
    """`store`, with every backend failure raised as `StoreUnavailable`."""
    return cast(Store, _Guarded(store))


def guarded_broker(broker: Broker) -> Broker:
    """`broker`, with a backend failure to publish (or to count listeners) raised as `StoreUnavailable`; its
    listeners ride out a dropped connection themselves."""
    return cast(Broker, _Guarded(broker, frozenset({"publish", "listeners"})))
