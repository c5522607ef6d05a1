"""Encryption at rest: records sealed with AES-256-GCM under per-principal keys.

A sealed record is laid out as

```
0x01 | key id (4) | nonce (12) | ciphertext + GCM tag (16)
```

The key is HKDF-SHA256 over the server secret with the principal in `info`,
so a record sealed for one principal cannot be opened as another's. The
version byte and key id are authenticated together with the caller's `aad`
(say, the run id), so a record cannot be moved to another context either.
The key id is a fingerprint of a key derived from the secret, never of the
secret itself; it picks the ring entry, so rotation is `[new, old]`.

Messages between nodes are also signed: `Sealer.sign` is HMAC-SHA256 under a
key derived from the first secret with its own label, and `Sealer.verify`
accepts a tag made with any secret of the ring, as opening does.

`PlainSealer` writes `0x00 | plaintext` when no secret is configured. Each
sealer refuses the other's records, so a store never silently mixes modes.
Without a secret there is no key to sign with: `PlainSealer.sign` returns no
tag and `PlainSealer.verify` accepts anything.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from elicitkit._errors import TamperedRecord

__all__ = ["SECRET_VARIABLES", "PlainSealer", "Sealer", "SealerLike", "secret_ring", "secrets_from_env"]

SECRET_VARIABLES = ("ELICITKIT_SECRET", "MCP_ELICITATION_SECRET", "MCP_SESSION_SECRET", "MCP_SERVER_SECRET")
"""Where the secret ring is read from, first set (and not blank) first: elicitkit's own variable, then
FrontMCP's three in FrontMCP's order. `ELICITKIT_SECRET_FILE` stands in for `ELICITKIT_SECRET`."""
_FILE_VAR = "ELICITKIT_SECRET_FILE"  # a file holding what ELICITKIT_SECRET would
_RING_RULE = "whitespace separates the secrets of a rotation ring, so a secret never contains a space or line break"

_SEALED = b"\x01"
_PLAIN = b"\x00"
_KID_LEN = 4
_NONCE_LEN = 12
_TAG_LEN = 16
_HEADER_LEN = 1 + _KID_LEN
_MIN_SEALED_LEN = _HEADER_LEN + _NONCE_LEN + _TAG_LEN
_MIN_SECRET_LEN = 32
_KEY_CACHE_SIZE = 4096

_RECORD_INFO = b"elicitkit/v1/record\x00"
# None and "" must derive different keys: a marker byte precedes the principal.
_NO_PRINCIPAL = b"\x00"
_PRINCIPAL = b"\x01"
_MASTER_INFO = b"elicitkit/v1/master"
_KID_LABEL = b"elicitkit/v1/key-id:"
_REQUEST_STATE_INFO = b"elicitkit/v1/request-state"
_BROKER_INFO = b"elicitkit/v1/broker"

_GENERATE = 'Generate one with: python -c "import secrets; print(secrets.token_hex(32))"'
_FAILED = (
    "sealed record failed authentication ({}): tampered, sealed for another principal, "
    "or sealed with a secret no longer configured"
)


def _hkdf(secret: bytes, info: bytes) -> bytes:
    """Derive a 32-byte key; every derivation in this module goes through here."""
    return HKDF(algorithm=SHA256(), length=32, salt=None, info=info).derive(secret)


def _principal_info(principal: str | None) -> bytes:
    if principal is None:
        return _RECORD_INFO + _NO_PRINCIPAL
    # surrogatepass keeps the derivation total for any str the transport hands us.
    return _RECORD_INFO + _PRINCIPAL + principal.encode("utf-8", "surrogatepass")


def _secret_bytes(secrets: Sequence[str | bytes], name: Callable[[int], str] = "secrets[{}]".format) -> list[bytes]:
    """The ring's secrets as bytes, each checked; `name(i)` is how an error names the i-th."""
    if isinstance(secrets, str | bytes):
        raise ValueError("Sealer takes a list of secrets (the first seals, all open), not a single secret")
    if not secrets:
        raise ValueError(f"Sealer needs at least one secret. {_GENERATE}")
    material: list[bytes] = []
    for i, secret in enumerate(secrets):
        if not isinstance(secret, str | bytes):
            # Never coerce: bytes(32) would silently become an all-zero secret.
            raise ValueError(f"{name(i)} must be str or bytes, not {type(secret).__name__}. {_GENERATE}")
        raw = secret.encode() if isinstance(secret, str) else secret
        if len(raw) < _MIN_SECRET_LEN:
            raise ValueError(
                f"{name(i)} is {len(raw)} bytes; a secret must be at least {_MIN_SECRET_LEN} bytes "
                f"of randomness. {_GENERATE}"
            )
        material.append(raw)
    return material


class SealerLike(Protocol):
    """What records, the cluster's messages and links are sealed and signed with: a `Sealer`, or a `PlainSealer`."""

    def seal(self, principal: str | None, plaintext: bytes, *, aad: bytes = b"") -> bytes: ...

    def open(self, principal: str | None, sealed: bytes, *, aad: bytes = b"") -> bytes: ...

    def sign(self, data: bytes) -> bytes: ...

    def verify(self, data: bytes, tag: bytes) -> bool: ...


class Sealer:
    """Seal and open records with AES-256-GCM under keys derived per principal.

    `secrets` is a rotation ring: `secrets[0]` seals, every secret opens. Each
    secret must be at least 32 bytes (UTF-8 for `str`); an empty ring, a
    wrong type, a short or a duplicated secret raises `ValueError`.
    Derived keys are cached (LRU), so steady-state calls do no key derivation.
    """

    def __init__(self, secrets: Sequence[str | bytes]) -> None:
        self._secrets: dict[bytes, bytes] = {}
        for i, secret in enumerate(_secret_bytes(secrets)):
            kid = hashlib.sha256(_KID_LABEL + _hkdf(secret, _MASTER_INFO)).digest()[:_KID_LEN]
            if kid in self._secrets:
                raise ValueError(f"secrets[{i}] duplicates an earlier secret in the ring")
            self._secrets[kid] = secret
        self._seal_kid = next(iter(self._secrets))
        self._aead = lru_cache(maxsize=_KEY_CACHE_SIZE)(self._derive_aead)
        self._mac_keys = [_hkdf(secret, _BROKER_INFO) for secret in self._secrets.values()]

    def _derive_aead(self, kid: bytes, principal: str | None) -> AESGCM:
        return AESGCM(_hkdf(self._secrets[kid], _principal_info(principal)))

    def seal(self, principal: str | None, plaintext: bytes, *, aad: bytes = b"") -> bytes:
        """Encrypt `plaintext` for `principal`, bound to `aad`; returns the sealed record."""
        header = _SEALED + self._seal_kid
        nonce = os.urandom(_NONCE_LEN)
        return header + nonce + self._aead(self._seal_kid, principal).encrypt(nonce, plaintext, header + aad)

    def open(self, principal: str | None, sealed: bytes, *, aad: bytes = b"") -> bytes:
        """Decrypt a record sealed for `principal` with the same `aad`; returns the plaintext.

        Raises:
            TamperedRecord: the record was modified, truncated, sealed for
                another principal or `aad`, sealed with a secret no longer in
                the ring, or written by `PlainSealer` (not sealed).
        """
        if sealed[:1] == _PLAIN:
            raise TamperedRecord(
                "record is not sealed (it was written without a secret); refusing to accept plaintext "
                "while a secret is configured"
            )
        if len(sealed) < _MIN_SEALED_LEN:
            raise TamperedRecord(_FAILED.format("record too short"))
        if sealed[:1] != _SEALED:
            raise TamperedRecord(_FAILED.format(f"unknown format version 0x{sealed[0]:02x}"))
        header, kid = sealed[:_HEADER_LEN], sealed[1:_HEADER_LEN]
        if kid not in self._secrets:
            raise TamperedRecord(_FAILED.format("unknown key id"))
        nonce, body = sealed[_HEADER_LEN : _HEADER_LEN + _NONCE_LEN], sealed[_HEADER_LEN + _NONCE_LEN :]
        try:
            return self._aead(kid, principal).decrypt(nonce, body, header + aad)
        except InvalidTag:
            raise TamperedRecord(_FAILED.format("authentication tag mismatch")) from None

    def sign(self, data: bytes) -> bytes:
        """A 32-byte MAC of `data` (HMAC-SHA256) under the broker key of the ring's first secret."""
        return hmac.digest(self._mac_keys[0], data, "sha256")

    def verify(self, data: bytes, tag: bytes) -> bool:
        """Whether `tag` is a MAC of `data` under the broker key of any secret of the ring."""
        return any(hmac.compare_digest(hmac.digest(key, data, "sha256"), tag) for key in self._mac_keys)

    def request_state_keys(self) -> list[bytes]:
        """One 32-byte key per secret, in ring order, for `RequestStateSecurity(keys=...)`.

        Every node sharing the secrets derives the same keys, so any node can
        open any node's `requestState`.
        """
        return [_hkdf(secret, _REQUEST_STATE_INFO) for secret in self._secrets.values()]


class PlainSealer:
    """The no-secret mode: stores bytes unchanged behind a 0x00 marker byte.

    `principal` and `aad` are accepted for signature parity and ignored: with
    no secret there is nothing to bind them with.
    """

    def seal(self, principal: str | None, plaintext: bytes, *, aad: bytes = b"") -> bytes:
        """Return `plaintext` marked as a plain record."""
        return _PLAIN + plaintext

    def open(self, principal: str | None, sealed: bytes, *, aad: bytes = b"") -> bytes:
        """Return the plaintext of a plain record.

        Raises:
            TamperedRecord: the record is sealed (configure the secret) or is
                not an elicitkit record at all.
        """
        if sealed[:1] == _SEALED:
            raise TamperedRecord(
                "record is sealed; configure the secret (ELICITKIT_SECRET or Elicitation(secret=...)) to open it"
            )
        if sealed[:1] != _PLAIN:
            raise TamperedRecord("record is not a plain elicitkit record (missing or unknown format version)")
        return sealed[1:]

    def sign(self, data: bytes) -> bytes:
        """No tag (`b""`): with no secret there is no key to sign with."""
        return b""

    def verify(self, data: bytes, tag: bytes) -> bool:
        """Always True: with no secret, nothing can be checked, so messages between nodes are unauthenticated."""
        return True


def secrets_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret ring from the environment; `[]` when no variable holds a secret.

    Read from `ELICITKIT_SECRET` (or the file `ELICITKIT_SECRET_FILE` names),
    else FrontMCP's variables in FrontMCP's order: `MCP_ELICITATION_SECRET`,
    `MCP_SESSION_SECRET`, `MCP_SERVER_SECRET`. The first that holds a secret
    is the ring; a blank one is passed over. Several secrets in one variable
    are separated by whitespace (spaces, tabs or line breaks) for rotation,
    the first sealing: whitespace is the one thing a secret never contains,
    while a comma, or any other character, is part of the secret.

    Raises:
        ValueError: both `ELICITKIT_SECRET` and `ELICITKIT_SECRET_FILE` are
            set, or the file cannot be used: unreadable, holding no secret,
            or open to group or others (like ssh's keys, it must be `chmod 600`).
    """
    return _ring_from_env(os.environ if environ is None else environ)[1]


def _ring_from_env(env: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """The variable the ring comes from, and the ring (`None, []`: none holds a secret)."""
    ring = _ring(env.get(SECRET_VARIABLES[0], ""))
    path = env.get(_FILE_VAR, "").strip()
    if ring and path:
        raise ValueError(f"{SECRET_VARIABLES[0]} and {_FILE_VAR} are both set; give the secret one way")
    if ring:
        return SECRET_VARIABLES[0], ring
    if path:
        return _FILE_VAR, _ring_from_file(path)
    for name in SECRET_VARIABLES[1:]:
        ring = _ring(env.get(name, ""))
        if ring:
            return name, ring
    return None, []


def secret_ring(
    secret: str | Sequence[str] | None,
    *,
    store: str | None,
    plaintext_store: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The secrets an `Elicitation` seals with: `secret` when given, else the environment's; `[]` for none.

    `store` names the kind of a durable store (`"SQLite"`, `"Redis"`, a class
    name), None for the memory store. What a durable store keeps outlives the
    process, so it is never kept unsealed by accident: it needs a secret, unless
    `plaintext_store` says plaintext at rest is wanted. The memory store needs
    none.

    Raises:
        ValueError: an empty ring or a secret shorter than 32 bytes (whatever the
            store), a secret variable set but empty while the store is durable, a
            durable store without a secret and without `plaintext_store`, or
            `plaintext_store` together with `secret=`. Each message says how to
            generate a secret.
    """
    if secret is not None:
        if plaintext_store:
            raise ValueError(
                "secret=... and plaintext_store=True contradict each other: a secret seals what the store "
                "keeps. Drop plaintext_store=True."
            )
        ring = [secret] if isinstance(secret, str) else list(secret)
        if not ring:
            raise ValueError(f"secret= holds no secret: give one of at least {_MIN_SECRET_LEN} bytes. {_GENERATE}")
        _secret_bytes(ring, (lambda i: "secret") if isinstance(secret, str) else "secret[{}]".format)
        return ring
    env = os.environ if environ is None else environ
    name, ring = _ring_from_env(env)
    if name is not None:
        if len(ring) == 1:
            _secret_bytes(ring, lambda i: name)
            return ring
        try:
            _secret_bytes(ring, lambda i: f"{name}'s secret {i + 1}")
        except ValueError as exc:
            raise ValueError(f"{exc} ({name} holds {len(ring)} secrets: {_RING_RULE}.)") from None
        return ring
    if store is None:
        return []
    blank = next((variable for variable in (*SECRET_VARIABLES, _FILE_VAR) if variable in env), None)
    if blank is not None:
        raise ValueError(
            f"{blank} is set but empty, which never means 'no secret' for a {store} store. Set it to a secret of "
            f"at least {_MIN_SECRET_LEN} bytes, the same on every node. {_GENERATE}. (To keep the store in "
            f"plaintext on purpose, unset it and pass plaintext_store=True.)"
        )
    if plaintext_store:
        return []
    raise ValueError(
        f"A {store} store keeps questions, answers and journals beyond this process, so it needs a secret to seal "
        f"them: set ELICITKIT_SECRET (or Elicitation(secret=...)) to the same secret on every node. {_GENERATE}. "
        f"To keep them in plaintext on purpose (tests, local development), pass Elicitation(..., "
        f"plaintext_store=True) (elicitkit serve: --plaintext-store)."
    )


def _ring(text: str) -> list[str]:
    return text.split()


def _ring_from_file(path: str) -> list[str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise ValueError(f"{_FILE_VAR}: cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if os.name == "posix" and mode & 0o077:
            raise ValueError(
                f"{_FILE_VAR}: permissions {mode:04o} for {path} are too open: other users could read or change "
                f"the secret. Make it readable by its owner only: chmod 600 {path}"
            )
        try:
            ring = _ring(f.read().decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"{_FILE_VAR}: {path} is not UTF-8 text") from None
    if not ring:
        raise ValueError(f"{_FILE_VAR}: {path} holds no secret. {_GENERATE}")
    return ring
