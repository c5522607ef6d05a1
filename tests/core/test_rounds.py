"""The one-time round nonce a 2026-07-28 retry must echo."""

from elicitkit._core.rounds import Round


def test_a_round_nonce_works_once() -> None:
    rounds = Round()
    nonce = rounds.open()
    assert rounds.matches(nonce)
    assert rounds.take(nonce)
    assert not rounds.take(nonce)
    assert not rounds.matches(nonce)


def test_a_round_handed_out_again_before_it_is_used_keeps_its_nonce_and_the_next_round_gets_a_fresh_one() -> None:
    rounds = Round()
    first = rounds.open()
    assert rounds.open() == first  # a resend, or a client told to come back: the same state works
    assert rounds.take(first)
    second = rounds.open()
    assert second != first
    assert not rounds.take(first)
    assert rounds.take(second)


def test_no_nonce_matches_while_no_retry_is_expected() -> None:
    rounds = Round()
    assert not rounds.matches("")
    assert not rounds.take("anything")
    nonce = rounds.open()
    rounds.close()
    assert not rounds.take(nonce)


def test_matching_does_not_use_the_nonce() -> None:
    rounds = Round()
    nonce = rounds.open()
    assert rounds.matches(nonce) and rounds.matches(nonce)
    assert rounds.take(nonce)
