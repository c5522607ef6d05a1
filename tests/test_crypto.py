"""Encryption at rest: per-principal keys, context binding, rotation, fail-closed opening."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from mcp.server.request_state import RequestStateSecurity

from elicitkit import _crypto as crypto
from elicitkit._crypto import PlainSealer, Sealer, secret_ring, secrets_from_env
from elicitkit._errors import ElicitationError, TamperedRecord

OLD = "o" * 32 + "-old-secret-with-enough-randomness"
NEW = "n" * 32 + "-new-secret-with-enough-randomness"
PLAINTEXT = b"my blood type is AB negative"


def test_a_sealed_record_opens_to_its_plaintext() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", PLAINTEXT, aad=b"run-1")
    assert PLAINTEXT not in record
    assert sealer.open("alice", record, aad=b"run-1") == PLAINTEXT


def test_the_record_layout_is_version_key_id_nonce_and_ciphertext_with_tag() -> None:
    record = Sealer([NEW]).seal(None, PLAINTEXT)
    assert record[0] == 0x01
    assert len(record) == 1 + 4 + 12 + len(PLAINTEXT) + 16


def test_sealing_twice_gives_different_records_because_the_nonce_is_random() -> None:
    sealer = Sealer([NEW])
    assert sealer.seal("alice", PLAINTEXT) != sealer.seal("alice", PLAINTEXT)


def test_bytes_and_str_secrets_are_accepted_and_the_same_text_gives_the_same_keys() -> None:
    record = Sealer([NEW]).seal("alice", PLAINTEXT)
    assert Sealer([NEW.encode()]).open("alice", record) == PLAINTEXT


def test_an_empty_plaintext_round_trips() -> None:
    sealer = Sealer([NEW])
    assert sealer.open("alice", sealer.seal("alice", b"")) == b""


def test_a_record_sealed_for_one_principal_does_not_open_for_another() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", PLAINTEXT)
    for other in ("bob", None, "", "alice "):
        with pytest.raises(TamperedRecord):
            sealer.open(other, record)


def test_no_principal_and_the_empty_principal_derive_different_keys() -> None:
    sealer = Sealer([NEW])
    with pytest.raises(TamperedRecord):
        sealer.open("", sealer.seal(None, PLAINTEXT))
    with pytest.raises(TamperedRecord):
        sealer.open(None, sealer.seal("", PLAINTEXT))


def test_a_principal_with_a_lone_surrogate_still_seals() -> None:
    sealer = Sealer([NEW])
    assert sealer.open("a\udc80", sealer.seal("a\udc80", PLAINTEXT)) == PLAINTEXT


def test_a_record_does_not_open_under_different_associated_data() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", PLAINTEXT, aad=b"run-1")
    for other in (b"run-2", b"", b"run-1\x00"):
        with pytest.raises(TamperedRecord):
            sealer.open("alice", record, aad=other)


def test_flipping_any_single_byte_of_a_record_fails_closed() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", b"yes", aad=b"run-1")
    for position in range(len(record)):
        for flip in (0x01, 0x80, 0xFF):
            tampered = bytearray(record)
            tampered[position] ^= flip
            with pytest.raises(TamperedRecord):
                sealer.open("alice", bytes(tampered), aad=b"run-1")


def test_a_truncated_or_extended_record_fails_closed() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", b"yes")
    for length in range(1, len(record)):
        with pytest.raises(TamperedRecord):
            sealer.open("alice", record[:length])
    with pytest.raises(TamperedRecord):
        sealer.open("alice", record + b"\x00")
    with pytest.raises(TamperedRecord, match="too short"):
        sealer.open("alice", b"")


def test_an_unknown_format_version_is_refused() -> None:
    sealer = Sealer([NEW])
    record = sealer.seal("alice", PLAINTEXT)
    with pytest.raises(TamperedRecord, match="unknown format version 0x02"):
        sealer.open("alice", b"\x02" + record[1:])


def test_tampered_record_is_an_elicitation_error() -> None:
    assert issubclass(TamperedRecord, ElicitationError)


def test_a_record_sealed_under_the_old_ring_opens_after_rotation() -> None:
    record = Sealer([OLD]).seal("alice", PLAINTEXT, aad=b"run-1")
    assert Sealer([NEW, OLD]).open("alice", record, aad=b"run-1") == PLAINTEXT


def test_the_rotated_ring_seals_with_the_first_secret() -> None:
    record = Sealer([NEW, OLD]).seal("alice", PLAINTEXT)
    assert Sealer([NEW]).open("alice", record) == PLAINTEXT
    with pytest.raises(TamperedRecord, match="unknown key id"):
        Sealer([OLD]).open("alice", record)


def test_a_record_sealed_with_a_removed_secret_fails_with_a_clear_error() -> None:
    record = Sealer([OLD]).seal("alice", PLAINTEXT)
    with pytest.raises(TamperedRecord) as caught:
        Sealer([NEW]).open("alice", record)
    assert "sealed with a secret no longer configured" in str(caught.value)


def test_the_key_id_picks_the_ring_entry_whatever_its_position() -> None:
    ring = Sealer([NEW, OLD])
    old_record = Sealer([OLD]).seal("alice", PLAINTEXT)
    new_record = Sealer([NEW]).seal("alice", PLAINTEXT)
    assert old_record[1:5] != new_record[1:5]
    assert ring.seal("bob", PLAINTEXT)[1:5] == new_record[1:5]
    assert Sealer([OLD, NEW]).open("alice", new_record) == PLAINTEXT
    assert ring.open("alice", old_record) == PLAINTEXT


def test_the_key_id_is_stable_and_reveals_neither_secret_nor_its_hash() -> None:
    import hashlib

    kid = Sealer([NEW]).seal(None, b"")[1:5]
    assert kid == Sealer([NEW]).seal("x", b"")[1:5]
    assert kid not in NEW.encode()
    assert kid != hashlib.sha256(NEW.encode()).digest()[:4]


@pytest.mark.parametrize(
    ("secrets", "message"),
    [
        ([], "at least one secret"),
        (["too-short"], "secrets\\[0\\] is 9 bytes"),
        ([NEW, "x" * 31], "secrets\\[1\\] is 31 bytes"),
        ([NEW, 12345], "secrets\\[1\\] must be str or bytes, not int"),
        ([NEW, None], "must be str or bytes, not NoneType"),
    ],
)
def test_an_unusable_secret_is_refused_with_how_to_generate_one(secrets: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Sealer(secrets)  # type: ignore[arg-type]
    assert 'python -c "import secrets; print(secrets.token_hex(32))"' in str(caught.value)


def test_a_short_secret_counts_utf8_bytes_not_characters() -> None:
    Sealer(["é" * 16])  # 32 bytes in UTF-8
    with pytest.raises(ValueError, match="15 bytes"):
        Sealer([b"\xc3" * 15])


def test_a_single_secret_not_in_a_list_is_refused() -> None:
    with pytest.raises(ValueError, match="list of secrets"):
        Sealer(NEW)
    with pytest.raises(ValueError, match="list of secrets"):
        Sealer(NEW.encode())  # type: ignore[arg-type]


def test_a_duplicated_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="secrets\\[2\\] duplicates an earlier secret"):
        Sealer([NEW, OLD, NEW.encode()])


def test_error_messages_never_contain_plaintext_or_secrets() -> None:
    record = Sealer([OLD]).seal("alice", PLAINTEXT, aad=b"run-1")
    sealer = Sealer([NEW, OLD])
    failures: list[Exception] = []
    attempts: list[Callable[[], object]] = [
        lambda: sealer.open("bob", record, aad=b"run-1"),
        lambda: sealer.open("alice", record, aad=b"run-2"),
        lambda: Sealer([NEW]).open("alice", record, aad=b"run-1"),
        lambda: sealer.open("alice", record[:-1], aad=b"run-1"),
        lambda: sealer.open("alice", PlainSealer().seal("alice", PLAINTEXT)),
        lambda: PlainSealer().open("alice", record),
        lambda: Sealer([NEW, NEW]),
        lambda: Sealer([NEW, NEW[:20]]),
    ]
    for attempt in attempts:
        with pytest.raises((TamperedRecord, ValueError)) as caught:
            attempt()
        failures.append(caught.value)
    for exc in failures:
        text = str(exc) + repr(exc)
        assert PLAINTEXT.decode() not in text
        assert "blood" not in text
        for secret in (NEW, OLD, NEW[:20]):
            assert secret not in text
            assert secret.encode().hex() not in text


def test_tampering_messages_name_the_possible_causes() -> None:
    sealer = Sealer([NEW])
    with pytest.raises(TamperedRecord) as caught:
        sealer.open("bob", sealer.seal("alice", PLAINTEXT))
    assert str(caught.value).startswith(
        "sealed record failed authentication (authentication tag mismatch): tampered, "
        "sealed for another principal, or sealed with a secret no longer configured"
    )


def test_repeated_seals_and_opens_do_not_derive_keys_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sealer = Sealer([NEW, OLD])
    derive = crypto._hkdf
    calls: list[bytes] = []

    def counting(secret: bytes, info: bytes) -> bytes:
        calls.append(info)
        return derive(secret, info)

    monkeypatch.setattr(crypto, "_hkdf", counting)
    records = [sealer.seal("alice", PLAINTEXT) for _ in range(50)]
    assert len(calls) == 1
    for record in records:
        assert sealer.open("alice", record) == PLAINTEXT
    assert len(calls) == 1
    sealer.seal("bob", PLAINTEXT)
    sealer.seal("bob", PLAINTEXT)
    assert len(calls) == 2


def test_request_state_keys_are_one_32_byte_key_per_secret_in_ring_order() -> None:
    keys = Sealer([NEW, OLD]).request_state_keys()
    assert [len(k) for k in keys] == [32, 32]
    assert keys[0] != keys[1]
    assert keys[0] == Sealer([NEW]).request_state_keys()[0]
    assert keys[1] == Sealer([OLD, NEW]).request_state_keys()[0]
    assert NEW.encode()[:32] not in keys


def test_request_state_keys_let_every_node_open_every_nodes_request_state() -> None:
    node_a = RequestStateSecurity(keys=Sealer([NEW]).request_state_keys())
    node_b = RequestStateSecurity(keys=Sealer([NEW]).request_state_keys())
    token = node_a.codec.seal(b'{"s":"state"}')
    assert node_b.codec.unseal(token) == b'{"s":"state"}'
    rotated = RequestStateSecurity(keys=Sealer([OLD, NEW]).request_state_keys())
    assert rotated.codec.unseal(token) == b'{"s":"state"}'


def test_request_state_keys_differ_from_the_record_keys_domain() -> None:
    # A request-state token must not be a sealed record: different derivation, different format.
    sealer = Sealer([NEW])
    token = RequestStateSecurity(keys=sealer.request_state_keys()).codec.seal(PLAINTEXT)
    with pytest.raises(TamperedRecord):
        sealer.open(None, token.encode())


MESSAGE = b'elicitkit:node:a|{"id":"m1","gone":true}|'


def test_a_mac_is_32_bytes_and_the_same_for_every_node_sharing_the_secret() -> None:
    tag = Sealer([NEW]).sign(MESSAGE)
    assert len(tag) == 32
    assert Sealer([NEW.encode()]).sign(MESSAGE) == tag
    assert Sealer([NEW]).verify(MESSAGE, tag)


def test_a_mac_made_before_a_rotation_verifies_after_it_and_the_new_ring_signs_with_its_first_secret() -> None:
    old_tag = Sealer([OLD]).sign(MESSAGE)
    rotated = Sealer([NEW, OLD])
    assert rotated.verify(MESSAGE, old_tag)
    assert rotated.sign(MESSAGE) == Sealer([NEW]).sign(MESSAGE)
    assert not Sealer([OLD]).verify(MESSAGE, rotated.sign(MESSAGE))


def test_a_mac_fails_for_a_flipped_byte_of_message_or_tag() -> None:
    sealer = Sealer([NEW])
    tag = sealer.sign(MESSAGE)
    for position in range(len(MESSAGE)):
        tampered = bytearray(MESSAGE)
        tampered[position] ^= 0x01
        assert not sealer.verify(bytes(tampered), tag)
    for position in range(len(tag)):
        forged = bytearray(tag)
        forged[position] ^= 0x80
        assert not sealer.verify(MESSAGE, bytes(forged))


def test_a_mac_fails_for_another_channel_another_secret_or_no_tag() -> None:
    sealer = Sealer([NEW])
    tag = sealer.sign(MESSAGE)
    assert not sealer.verify(MESSAGE.replace(b"node:a", b"node:b"), tag)
    assert not Sealer([OLD]).verify(MESSAGE, tag)
    for wrong in (b"", tag[:16], tag + b"\x00"):
        assert not sealer.verify(MESSAGE, wrong)


def test_the_mac_key_is_a_derivation_of_its_own() -> None:
    import hashlib
    import hmac

    sealer = Sealer([NEW])
    tag = sealer.sign(MESSAGE)
    for key in (NEW.encode(), *sealer.request_state_keys()):
        assert hmac.digest(key, MESSAGE, hashlib.sha256) != tag


def test_a_plain_sealer_signs_with_no_tag_and_verifies_anything() -> None:
    plain = PlainSealer()
    assert plain.sign(MESSAGE) == b""
    assert plain.verify(MESSAGE, b"")
    assert plain.verify(MESSAGE, Sealer([NEW]).sign(MESSAGE))


def test_secrets_come_from_elicitkit_secret_first() -> None:
    env = {"ELICITKIT_SECRET": NEW, "MCP_ELICITATION_SECRET": OLD}
    assert secrets_from_env(env) == [NEW]


def test_secrets_fall_back_to_the_frontmcp_variable() -> None:
    assert secrets_from_env({"MCP_ELICITATION_SECRET": OLD}) == [OLD]
    assert secrets_from_env({"ELICITKIT_SECRET": "  ", "MCP_ELICITATION_SECRET": OLD}) == [OLD]


def test_whitespace_separated_secrets_form_a_rotation_ring() -> None:
    assert secrets_from_env({"ELICITKIT_SECRET": f" {NEW}  {OLD}\n"}) == [NEW, OLD]
    assert secrets_from_env({"ELICITKIT_SECRET": f"{NEW}\n{OLD}\n"}) == [NEW, OLD]
    assert secrets_from_env({"MCP_SESSION_SECRET": f"{NEW}\t{OLD}"}) == [NEW, OLD]


@pytest.mark.parametrize("variable", ["ELICITKIT_SECRET", "MCP_ELICITATION_SECRET", "MCP_SESSION_SECRET"])
def test_a_comma_is_part_of_a_secret_and_never_splits_it(variable: str) -> None:
    with_comma = f"{NEW},{OLD}"
    assert secrets_from_env({variable: with_comma}) == [with_comma]
    sealed = Sealer(secrets_from_env({variable: with_comma})).seal(None, PLAINTEXT)
    with pytest.raises(TamperedRecord):
        Sealer([NEW]).open(None, sealed)  # sealed with the whole secret, not its first half


def test_frontmcps_variables_are_read_in_frontmcps_order_after_elicitkits_own() -> None:
    every = {
        "ELICITKIT_SECRET": "e" * 32,
        "MCP_ELICITATION_SECRET": "a" * 32,
        "MCP_SESSION_SECRET": "b" * 32,
        "MCP_SERVER_SECRET": "c" * 32,
    }
    order = list(every)
    for first in range(len(order)):
        assert secrets_from_env({name: every[name] for name in order[first:]}) == [every[order[first]]]
    # As FrontMCP's `||`, a blank variable is passed over.
    assert secrets_from_env({"MCP_ELICITATION_SECRET": "", "MCP_SESSION_SECRET": " ", "MCP_SERVER_SECRET": OLD}) == [
        OLD
    ]


def test_a_ring_whose_secret_holds_a_space_is_refused_saying_whitespace_separates_secrets() -> None:
    with pytest.raises(ValueError, match="MCP_SERVER_SECRET") as refused:
        secret_ring(None, store=None, environ={"MCP_SERVER_SECRET": "correct horse battery staple"})
    assert "MCP_SERVER_SECRET's secret 1 is 7 bytes" in str(refused.value)
    assert "whitespace separates the secrets of a rotation ring" in str(refused.value)


def test_no_secret_configured_gives_an_empty_ring() -> None:
    assert secrets_from_env({}) == []
    assert secrets_from_env({"ELICITKIT_SECRET": ""}) == []


def test_secrets_are_read_from_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELICITKIT_SECRET", raising=False)
    monkeypatch.setenv("MCP_ELICITATION_SECRET", f"{NEW} {OLD}")
    assert secrets_from_env() == [NEW, OLD]
    assert Sealer(secrets_from_env()).open(None, Sealer([OLD]).seal(None, PLAINTEXT)) == PLAINTEXT


def test_a_plain_record_round_trips_behind_a_zero_version_byte() -> None:
    plain = PlainSealer()
    record = plain.seal("alice", PLAINTEXT, aad=b"run-1")
    assert record == b"\x00" + PLAINTEXT
    assert plain.open("alice", record, aad=b"run-1") == PLAINTEXT
    assert plain.open(None, plain.seal(None, b"")) == b""


def test_a_sealer_refuses_a_plain_record() -> None:
    with pytest.raises(TamperedRecord, match="record is not sealed"):
        Sealer([NEW]).open("alice", PlainSealer().seal("alice", PLAINTEXT))


def test_a_plain_sealer_refuses_a_sealed_record() -> None:
    with pytest.raises(TamperedRecord, match="record is sealed; configure the secret"):
        PlainSealer().open("alice", Sealer([NEW]).seal("alice", PLAINTEXT))


def test_a_plain_sealer_refuses_bytes_that_are_not_an_elicitkit_record() -> None:
    for junk in (b"", b"\x02junk", b"{}"):
        with pytest.raises(TamperedRecord, match="not a plain elicitkit record"):
            PlainSealer().open(None, junk)
