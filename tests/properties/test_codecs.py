"""Properties of what elicitkit hands out and reads back: the `requestState` inside the SDK's seal, sealed
records, signed messages, page-link tokens and the store's one-time tokens.

Whatever is handed out reads back as it was; whatever was changed, cut, lengthened, sealed under another key or
for another principal, or has expired, is refused with the documented error, never taken and never another
exception. A ring holding an old secret still reads what the old secret sealed.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState

from elicitkit._core.codec import decode_state, encode_state, is_ours
from elicitkit._core.kinds import is_id
from elicitkit._core.once import Claim, link_binding, spent_token
from elicitkit._crypto import PlainSealer, Sealer
from elicitkit._errors import TamperedRecord
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from tests.properties.strategies import TEXT

OLD = "o" * 32 + "-old-secret-for-property-tests"
NEW = "n" * 32 + "-new-secret-for-property-tests"
OTHER = "x" * 32 + "-another-deployments-secret"

ids = st.from_regex(r"[A-Za-z0-9_-]{1,128}", fullmatch=True)
principals = st.none() | TEXT
payloads = st.binary(max_size=200)
PURPOSES = ("form", "callback", "go", "browser", "channel")
LATER = float(int(time.time()) + 3600)
"""A fixed base for expiries, so that one example draws the same token length every time it runs."""


@st.composite
def links(draw: st.DrawFn) -> Link:
    return Link(
        question_id=draw(TEXT),
        principal=draw(principals),
        purpose=draw(st.sampled_from(PURPOSES)),
        expires_at=LATER + draw(st.floats(0, 10**6)),
        target=draw(st.none() | TEXT),
        by=draw(st.none() | st.tuples(TEXT, TEXT, st.none() | TEXT)),
    )


@st.composite
def changed(draw: st.DrawFn, token: str) -> str:
    """`token` with one character replaced, removed, or inserted, cut short, or lengthened."""
    how = draw(st.sampled_from(["replace", "remove", "insert", "truncate", "extend"]))
    at = draw(st.integers(0, len(token) - 1))
    # Drawn without looking at the token: a sealed token is random (its nonce), so a draw that depended on its
    # characters (a filter) would draw differently when Hypothesis replays the example, which it refuses.
    other = draw(st.characters(exclude_categories=()))
    if other == token[at]:
        other = "A" if token[at] != "A" else "B"
    if how == "replace":
        return token[:at] + other + token[at + 1 :]
    if how == "remove":
        return token[:at] + token[at + 1 :]
    if how == "insert":
        return token[:at] + other + token[at:]
    if how == "truncate":
        return token[:at]
    return token + draw(st.text(st.characters(exclude_categories=()), min_size=1, max_size=8))


# --- requestState ------------------------------------------------------------------------------------------------


@given(ids.filter(lambda i: "." not in i), TEXT.filter(lambda t: bool(t) and "." not in t), st.none() | TEXT)
def test_an_encoded_request_state_decodes_to_its_run_nonce_and_owner(
    run_id: str, nonce: str, owner: str | None
) -> None:
    state = encode_state(run_id, nonce, owner)
    assert is_ours(state)
    assert decode_state(state) == (run_id, nonce, owner or None)  # (a node's name may hold dots)


@given(st.sampled_from(["", "run", "r.un"]), st.sampled_from(["", "nonce", "non.ce"]))
def test_a_request_state_that_could_not_be_read_back_is_never_made(run_id: str, nonce: str) -> None:
    if run_id and nonce and "." not in run_id + nonce:
        assert decode_state(encode_state(run_id, nonce)) == (run_id, nonce, None)
    else:
        with pytest.raises(ValueError, match="must be non-empty and must not contain"):
            encode_state(run_id, nonce)


@given(
    TEXT
    | st.sampled_from(["ek1.", "ek1..", "ek1.a.", "ek1..b", "ek1.a.b.", "ek1.a.b.c", "ek1.a.b.c.d"])
    | TEXT.map("ek1.".__add__)
)
def test_any_text_as_a_request_state_reads_as_a_run_nonce_and_owner_or_as_none(state: str) -> None:
    decoded = decode_state(state)
    if decoded is not None:
        assert is_ours(state) and decoded.run_id and decoded.nonce and decoded.owner != ""
        assert encode_state(*decoded) == state


@given(payloads, st.data())
def test_the_sdk_seal_of_a_request_state_under_elicitkit_keys_opens_only_unchanged_and_across_rotation(
    payload: bytes, data: st.DataObject
) -> None:
    old = AESGCMRequestStateCodec(Sealer([OLD]).request_state_keys())
    rotated = AESGCMRequestStateCodec(Sealer([NEW, OLD]).request_state_keys())
    token = old.seal(payload)
    assert old.unseal(token) == payload
    assert rotated.unseal(token) == payload  # a node with the new secret first still reads the old state
    assert rotated.unseal(rotated.seal(payload)) == payload
    with pytest.raises(InvalidRequestState):
        AESGCMRequestStateCodec(Sealer([OTHER]).request_state_keys()).unseal(token)
    with pytest.raises(InvalidRequestState):
        old.unseal(data.draw(changed(token)))


# --- sealed records and signed messages ----------------------------------------------------------------------------


@st.composite
def altered_record(draw: st.DrawFn, record: bytes) -> bytes:
    how = draw(st.sampled_from(["flip", "truncate", "extend"]))
    if how == "flip":
        at = draw(st.integers(0, len(record) - 1))
        bit = draw(st.integers(1, 255))
        return record[:at] + bytes([record[at] ^ bit]) + record[at + 1 :]
    if how == "truncate":
        return record[: draw(st.integers(0, len(record) - 1))]
    return record + draw(st.binary(min_size=1, max_size=8))


@given(principals, payloads, st.binary(max_size=40))
def test_a_sealed_record_opens_to_its_plaintext_for_its_principal_and_context(
    principal: str | None, payload: bytes, aad: bytes
) -> None:
    sealer = Sealer([NEW])
    record = sealer.seal(principal, payload, aad=aad)
    assert sealer.open(principal, record, aad=aad) == payload
    assert Sealer([NEW, OLD]).open(principal, record, aad=aad) == payload
    assert Sealer([OLD, NEW]).open(principal, record, aad=aad) == payload


@given(principals, payloads, st.binary(max_size=40), st.data())
@settings(max_examples=200)
def test_a_record_changed_cut_lengthened_or_opened_elsewhere_is_refused(
    principal: str | None, payload: bytes, aad: bytes, data: st.DataObject
) -> None:
    sealer = Sealer([NEW])
    record = sealer.seal(principal, payload, aad=aad)
    attempts: list[tuple[Any, str | None, bytes, bytes]] = [
        (sealer, principal, data.draw(altered_record(record)), aad),
        (sealer, data.draw(principals.filter(lambda p: p != principal)), record, aad),
        (sealer, principal, record, data.draw(st.binary(max_size=40).filter(lambda a: a != aad))),
        (Sealer([OLD]), principal, record, aad),
        (PlainSealer(), principal, record, aad),
    ]
    for opener, who, sealed, context in attempts:
        with pytest.raises(TamperedRecord):
            opener.open(who, sealed, aad=context)


@given(principals, st.binary(max_size=60))
def test_a_sealed_and_a_plain_record_are_each_refused_by_the_other_sealer(
    principal: str | None, payload: bytes
) -> None:
    with pytest.raises(TamperedRecord):
        Sealer([NEW]).open(principal, PlainSealer().seal(principal, payload))
    assert PlainSealer().open(principal, PlainSealer().seal(principal, payload)) == payload


@given(st.binary(max_size=100))
def test_any_bytes_given_as_a_record_are_refused_never_opened(junk: bytes) -> None:
    with pytest.raises(TamperedRecord):
        Sealer([NEW]).open(None, junk)


@given(st.binary(max_size=200), st.data())
def test_a_signed_message_verifies_across_rotation_and_not_once_changed(message: bytes, data: st.DataObject) -> None:
    tag = Sealer([OLD]).sign(message)
    assert Sealer([OLD]).verify(message, tag)
    assert Sealer([NEW, OLD]).verify(message, tag)
    assert not Sealer([OTHER]).verify(message, tag)
    assert not Sealer([OLD]).verify(data.draw(st.binary(max_size=200).filter(lambda m: m != message)), tag)
    assert not Sealer([OLD]).verify(message, data.draw(altered_record(tag)))


# --- page-link tokens ----------------------------------------------------------------------------------------------


@given(links())
def test_a_minted_link_reads_back_as_it_was_and_across_rotation(link: Link) -> None:
    token = LinkTokens([OLD]).mint(link)
    assert token.isascii() and "=" not in token and "/" not in token and "+" not in token
    assert LinkTokens([OLD]).read(token, link.purpose) == link
    assert LinkTokens([NEW, OLD]).read(token, link.purpose) == link


@given(links(), st.data())
@settings(max_examples=300)
def test_a_changed_cut_or_lengthened_link_is_refused(link: Link, data: st.DataObject) -> None:
    tokens = LinkTokens([NEW])
    token = tokens.mint(link)
    with pytest.raises(InvalidLink):
        tokens.read(data.draw(changed(token)), link.purpose)


def test_a_link_spelled_another_way_is_refused() -> None:
    # Python's base64 decoder skips what is not in its alphabet and ignores a last character's unused bits.
    tokens = LinkTokens([NEW])
    link = Link("q1", "alice", "form", LATER)
    token = tokens.mint(link)
    assert len(token) % 4 in (2, 3)  # the last character carries unused bits
    last = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    respelled = base64.urlsafe_b64encode(last).decode().rstrip("=")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    same_bytes = [
        respelled[:-1] + c
        for c in alphabet
        if c != respelled[-1] and base64.urlsafe_b64decode(respelled[:-1] + c + "=" * (-len(token) % 4)) == last
    ]
    assert same_bytes  # other spellings of the very same bytes exist
    for other in [token + "!", token[:5] + "." + token[5:], token + "====", " " + token, *same_bytes]:
        with pytest.raises(InvalidLink):
            tokens.read(other, "form")
    assert tokens.read(token, "form") == link


@given(links())
def test_a_link_for_another_page_from_another_deployment_or_expired_is_refused(link: Link) -> None:
    token = LinkTokens([NEW]).mint(link)
    for purpose in PURPOSES:
        if purpose != link.purpose:
            with pytest.raises(InvalidLink):
                LinkTokens([NEW]).read(token, purpose)  # type: ignore[arg-type]
    with pytest.raises(InvalidLink):
        LinkTokens([OTHER]).read(token, link.purpose)
    expired = LinkTokens([NEW]).mint(Link(link.question_id, link.principal, link.purpose, time.time() - 1))
    with pytest.raises(InvalidLink, match="expired"):
        LinkTokens([NEW]).read(expired, link.purpose)


@given(TEXT | st.text(st.sampled_from("ABCDEFabcdef0123456789-_="), max_size=120), st.sampled_from(PURPOSES))
def test_any_text_given_as_a_link_is_refused(token: str, purpose: Any) -> None:
    with pytest.raises(InvalidLink):
        LinkTokens([NEW]).read(token, purpose)


@given(st.binary(min_size=29, max_size=120), st.sampled_from(PURPOSES))
def test_any_bytes_in_a_link_token_are_refused(raw: bytes, purpose: Any) -> None:
    token = base64.urlsafe_b64encode(b"\x01" + raw).decode().rstrip("=")
    with pytest.raises(InvalidLink):
        LinkTokens([NEW]).read(token, purpose)


# --- the store's one-time tokens -----------------------------------------------------------------------------------


@given(ids, ids, TEXT, TEXT, st.booleans(), st.booleans())
def test_one_time_tokens_of_different_claims_or_runs_never_collide(
    run_a: str, run_b: str, text_a: str, text_b: str, round_a: bool, round_b: bool
) -> None:
    assert is_id(run_a) and is_id(run_b)
    a, b = Claim(text_a, round_a), Claim(text_b, round_b)
    if (run_a, text_a) != (run_b, text_b):
        assert spent_token(run_a, a) != spent_token(run_b, b)
    assert spent_token(run_a, a) != link_binding(run_b)


holders = st.none() | st.tuples(st.sampled_from(["slack", "discord", "teams", "web"]), TEXT)
"""(channel, user id): the channel is one the server added, the user id is whatever the channel says."""


@given(ids, ids, holders, holders)
def test_a_link_binding_is_one_per_question_and_holder(
    question_a: str, question_b: str, holder_a: tuple[str, str] | None, holder_b: tuple[str, str] | None
) -> None:
    if (question_a, holder_a) != (question_b, holder_b):
        assert link_binding(question_a, holder_a) != link_binding(question_b, holder_b)
