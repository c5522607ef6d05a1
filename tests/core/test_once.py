"""The names of what the store spends once: an answer's claim, and a page link's binding to a browser."""

from elicitkit._core.once import Claim, link_binding, spent_token


def test_a_claim_is_spent_under_its_run_named_as_a_redis_cluster_hash_tag() -> None:
    assert spent_token("run-1", Claim.of_question("page", "q1")) == "round:{run-1}:page:q1"


def test_a_page_links_binding_is_named_by_its_question_and_each_approvers_link_binds_apart() -> None:
    assert link_binding("q1") == link_binding("q1")
    assert link_binding("q1") != link_binding("q2")
    ada, grace = link_binding("q1", ("slack", "U1")), link_binding("q1", ("slack", "U2"))
    assert len({link_binding("q1"), ada, grace}) == 3
    assert ada.startswith("bind:q1:")
    # The holder is hashed whole: ids that contain the separator cannot pose as another holder.
    assert link_binding("q1", ("a", "b:c")) != link_binding("q1", ("a:b", "c"))
