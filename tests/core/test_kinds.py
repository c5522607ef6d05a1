"""The domain's words: ids, and the rule that a link's accept only acknowledges."""

from elicitkit._core.kinds import ACTIONS, new_id, only_acknowledges


def test_ids_are_128_random_url_safe_bits() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 22 and "." not in i and "/" not in i and "+" not in i for i in ids)


def test_only_an_accept_of_one_of_elicitkits_pages_merely_acknowledges() -> None:
    assert only_acknowledges(True, "accept")
    assert not only_acknowledges(True, "decline")
    assert not only_acknowledges(True, "cancel")
    assert not any(only_acknowledges(False, action) for action in ACTIONS)
