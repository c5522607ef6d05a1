"""The domain's words: ids."""

from elicitkit._core.kinds import new_id


def test_ids_are_128_random_url_safe_bits() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 22 and "." not in i and "/" not in i and "+" not in i for i in ids)
