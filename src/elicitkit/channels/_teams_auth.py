"""Bot Framework authentication of what reaches the Teams channel (Teams → the bot's messaging endpoint).

The Bot Connector sends every activity with `Authorization: Bearer <JWT>`.
`ConnectorAuth.verify` checks it the way Microsoft's Bot Framework SDKs do, and
checks that the activity is a Teams one:

1. the activity's `channelId` is `msteams`, and its `serviceUrl` is the
   configured `service_url` (same scheme, host, port and path; a trailing slash
   does not matter). A bot registered on other Bot Framework channels (Web Chat,
   Direct Line) receives their activities with tokens as genuine as Teams', but
   there the client chooses who it says it is, so nothing but Teams may answer;
2. the OpenID configuration (`openid_config_url`) names the `jwks_uri`; the key
   set is cached for a day, and fetched again when a token names an unknown
   `kid` (key rollover) — at most once every 30 seconds for unknown `kid`s, so
   that forged ones cannot make the bot hammer Microsoft. Before any key set
   was fetched, a failed fetch is not tried again for 30 seconds, and while a
   fetch is under way (or backing off) activities it would be needed for are
   answered at once (`KeysUnavailable`, 503: the Bot Connector retries) rather
   than queued behind it;
3. the signature is RS256 with the key the header's `kid` names;
4. `iss` is the connector's issuer (`https://api.botframework.com`), `aud` is
   the bot's app id, `exp` and `nbf` hold within `leeway` seconds;
5. the token's `serviceurl` claim (Microsoft writes it in lower case; `serviceUrl`
   is accepted too) equals the activity's `serviceUrl`, so a token issued for one
   service cannot vouch for activities claiming another;
6. the key's `endorsements` (Microsoft's keys list the channels each one may sign
   for) include `msteams`; a key without endorsements is endorsed for nothing,
   as in the Bot Framework SDKs.

Connector tokens are bearer tokens reused for many activities until they
expire (about an hour), and they name no user, conversation or activity (no
`jti` either), so a signature does not cover the activity itself: a token
cannot be spent once, nor bound to one conversation, without refusing Teams'
own activities. `SeenActivities` refuses an activity id seen before in its
conversation for as long as the token that carried it could still be accepted
(its `exp` plus `leeway`); the memory is per process and bounded (the oldest ids
go first), and the desk still takes each answer once across nodes whatever the
channel lets through. What an activity says of its sender is checked with
Teams itself (see `_teams`).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

if TYPE_CHECKING:
    import jwt

__all__ = [
    "ConnectorAuth",
    "KeysUnavailable",
    "SeenActivities",
    "Unauthorized",
    "require",
]

logger = logging.getLogger("elicitkit")

CHANNEL_ID = "msteams"
"""The Bot Framework channel of Microsoft Teams: the only one whose activities are taken."""
HTTP_TIMEOUT = 10.0
_KEYS_MAX_AGE = 24 * 3600.0
_REFETCH_AFTER = 30.0


def require() -> None:
    """Fail with what to install when PyJWT is missing (it is imported where tokens are checked, so that
    `elicitkit.channels` imports without it)."""
    try:
        import jwt  # noqa: F401
    except ImportError:
        raise ImportError("TeamsChannel needs PyJWT to check Teams' tokens: pip install 'elicitkit[teams]'") from None


class Unauthorized(Exception):
    """An activity that does not come from the Bot Connector; `reason` is for the log, never for the caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KeysUnavailable(Exception):
    """The connector's signing keys could not be fetched, so no activity can be checked right now."""


@dataclass(frozen=True, slots=True)
class _Key:
    jwk: jwt.PyJWK
    endorsements: frozenset[str] | None


async def _get_json(url: str) -> Any:
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as client:
        response = await client.get(url)
        response.raise_for_status()
        return response.json()


class ConnectorAuth:
    """Checks that an activity is a Teams one and that the Bot Connector's `Authorization` header vouches for it
    (see the module docstring)."""

    def __init__(self, app_id: str, openid_config_url: str, issuer: str, leeway: float, service_url: str) -> None:
        self.app_id = app_id
        self.openid_config_url = openid_config_url
        self.issuer = issuer
        self.leeway = leeway
        self.service_url = service_url
        self._service = _service(service_url)
        self._keys: dict[str, _Key] = {}
        self._fetched_at: float | None = None
        self._rolled_at: float | None = None
        self._failed_at: float | None = None
        self._fetching = False

    async def verify(self, authorization: str | None, activity: Mapping[str, Any]) -> dict[str, Any]:
        """The token's claims when it vouches for `activity`.

        Raises:
            Unauthorized: no token, or one that fails any check.
            KeysUnavailable: the key set could not be fetched.
        """
        import jwt

        # The activity first: these checks cost nothing, and an activity failing them never makes the bot fetch keys.
        channel, service = activity.get("channelId"), activity.get("serviceUrl")
        if channel != CHANNEL_ID:
            raise Unauthorized(f"an activity from the Bot Framework channel {channel!r}, not {CHANNEL_ID!r}")
        if self._service is None or _service(service) != self._service:
            raise Unauthorized(f"an activity from the service {service!r}, not the configured {self.service_url!r}")
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("no bearer token")
        try:
            header = jwt.get_unverified_header(token.strip())
        except jwt.PyJWTError:
            raise Unauthorized("a malformed token") from None
        if header.get("alg") != "RS256":
            raise Unauthorized(f"a token signed with {header.get('alg')!r}, not RS256")
        kid = header.get("kid")
        key = await self._key(kid) if isinstance(kid, str) else None
        if key is None:
            raise Unauthorized(f"a token signed with an unknown key {kid!r}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token.strip(),
                key.jwk,
                algorithms=["RS256"],
                audience=self.app_id,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"a token that failed verification ({type(exc).__name__}: {exc})") from None
        claimed = claims.get("serviceurl", claims.get("serviceUrl"))
        if _service(claimed) != _service(service):
            raise Unauthorized(f"a token for service {claimed!r} on an activity from {service!r}")
        if key.endorsements is None or CHANNEL_ID not in key.endorsements:
            raise Unauthorized(f"a key endorsed for {sorted(key.endorsements or ())}, not for {CHANNEL_ID!r}")
        return claims

    async def _key(self, kid: str) -> _Key | None:
        """The key `kid` names, fetching the key set when it is due (see the module docstring).

        Raises:
            KeysUnavailable: the key set is needed, and a fetch is under way, failed a moment ago, or fails now.
        """
        now = time.monotonic()
        fetched = self._fetched_at
        rollover = False
        if fetched is not None and now - fetched <= _KEYS_MAX_AGE:
            if kid in self._keys or (self._rolled_at is not None and now - self._rolled_at < _REFETCH_AFTER):
                return self._keys.get(kid)
            rollover = True  # Microsoft may have published a key we have not seen
        if self._fetching:
            # Never queue behind a fetch: each request would wait for it, and whoever can reach the endpoint
            # could pile them up. A stale key set still serves the keys it has.
            if kid in self._keys:
                return self._keys[kid]
            raise KeysUnavailable("the Bot Framework keys are being fetched")
        if not self._keys and self._failed_at is not None and now - self._failed_at < _REFETCH_AFTER:
            raise KeysUnavailable(
                f"the Bot Framework keys could not be fetched from {self.openid_config_url} a moment ago; "
                f"the next try is at most every {_REFETCH_AFTER:.0f} seconds"
            )
        if rollover:
            self._rolled_at = now
        # No await between the check of `_fetching` and setting it: one fetch at a time on the event loop.
        self._fetching = True
        try:
            await self._fetch(now)
        finally:
            self._fetching = False
        return self._keys.get(kid)

    async def _fetch(self, now: float) -> None:
        import jwt

        try:
            config = await _get_json(self.openid_config_url)
            key_set = await _get_json(str(config["jwks_uri"]))
            entries = list(key_set["keys"])
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            if self._keys:
                logger.warning("Could not refresh the Bot Framework keys (%s); keeping the previous ones", exc)
                self._fetched_at = now - _KEYS_MAX_AGE + _REFETCH_AFTER  # try again in a while, not on every request
                return
            self._failed_at = now  # and not again for a while: requests meanwhile are answered 503 at once
            logger.warning(
                "Could not fetch the Bot Framework keys from %s (%s); Teams activities cannot be checked, "
                "trying again in %.0f seconds",
                self.openid_config_url,
                exc,
                _REFETCH_AFTER,
            )
            raise KeysUnavailable(
                f"could not fetch the Bot Framework keys from {self.openid_config_url}: {exc}"
            ) from None
        keys: dict[str, _Key] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("kid"), str):
                continue
            try:
                jwk = jwt.PyJWK(entry, algorithm="RS256")
            except jwt.PyJWTError:
                continue  # a key type this bot never accepts
            endorsements = entry.get("endorsements")
            keys[entry["kid"]] = _Key(
                jwk, frozenset(map(str, endorsements)) if isinstance(endorsements, list) else None
            )
        self._keys = keys
        self._fetched_at = now


def _service(url: Any) -> tuple[str, str, int | None, str] | None:
    """A service URL as compared: scheme, host, port and path without its trailing slashes (None: not a URL)."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80), parts.path.rstrip("/")


class SeenActivities:
    """Activity ids already accepted, each kept until its token expires (bounded: the oldest go first)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._until: OrderedDict[tuple[str, str], float] = OrderedDict()

    def first_time(self, key: tuple[str, str], until: float) -> bool:
        """Remember `key` until `until` (seconds since the epoch); False when it was already remembered."""
        now = time.time()
        for old, expires in list(self._until.items()):
            if expires >= now:
                break
            del self._until[old]
        if key in self._until:
            return False
        self._until[key] = until
        while len(self._until) > self.limit:
            self._until.popitem(last=False)
        return True
