"""elicitkit's requestState format, built and read in one place (no SDK, no event loop)."""

import pytest

from elicitkit._core.codec import decode_state, encode_state, is_ours


def test_a_state_reads_back_as_its_run_its_nonce_and_the_node_that_handed_it_out() -> None:
    assert decode_state(encode_state("run-1_a", "n0nce")) == ("run-1_a", "n0nce", None)
    assert decode_state(encode_state("run-1_a", "n0nce", "node-1.example.com")) == (
        "run-1_a",
        "n0nce",
        "node-1.example.com",
    )


def test_only_states_with_the_prefix_are_ours() -> None:
    assert is_ours(encode_state("r", "n"))
    assert not is_ours("server-own-state")
    assert not is_ours(None)
    assert not is_ours(42)


@pytest.mark.parametrize("state", ["ek1.", "ek1.run", "ek1.run.", "ek1..nonce", "ek1.run.nonce.", "other.run.nonce"])
def test_a_malformed_state_reads_as_none(state: str) -> None:
    assert decode_state(state) is None


def test_a_run_id_or_nonce_with_a_dot_is_refused() -> None:
    with pytest.raises(ValueError, match="must not contain"):
        encode_state("a.b", "n")
    with pytest.raises(ValueError, match="must not contain"):
        encode_state("a", "n.b")
