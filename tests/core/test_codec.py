"""elicitkit's requestState format, built and read in one place (no SDK, no event loop)."""

import pytest

from elicitkit._core.codec import decode_state, encode_state, is_ours


def test_a_state_reads_back_as_its_run_and_nonce() -> None:
    assert decode_state(encode_state("run-1_a", "nonce.with.dots")) == ("run-1_a", "nonce.with.dots")


def test_only_states_with_the_prefix_are_ours() -> None:
    assert is_ours(encode_state("r", "n"))
    assert not is_ours("server-own-state")
    assert not is_ours(None)
    assert not is_ours(42)


@pytest.mark.parametrize("state", ["ek1.", "ek1.run", "ek1.run.", "ek1..nonce", "other.run.nonce"])
def test_a_malformed_state_reads_as_none(state: str) -> None:
    assert decode_state(state) is None


def test_a_run_id_with_a_dot_is_refused() -> None:
    with pytest.raises(ValueError, match="must not contain"):
        encode_state("a.b", "n")
