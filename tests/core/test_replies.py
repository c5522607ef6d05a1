"""What a reply does to a question: one rule for the seven ways an answer arrives."""

from __future__ import annotations

import pytest

from elicitkit._core.journal import Held
from elicitkit._core.kinds import ACTIONS, Answer
from elicitkit._core.replies import Ruling, Source, Standing, accepts, counts_attempt, rule

SOURCES: tuple[Source, ...] = ("client", "handler", "retry", "model", "task", "page", "channel")


def ruled(
    action: str = "accept",
    *,
    standing: Standing = "open",
    held: Held = Held.EMPTY,
    mode: str = "form",
    observable: bool = False,
    follows_schema: bool = True,
    source: Source = "retry",
    wrong: bool = False,
) -> Ruling:
    def problems(answer: Answer) -> object | None:
        return "wrong" if wrong else None

    return rule(
        standing,
        held,
        "url" if mode == "url" else "form",
        observable,
        follows_schema,
        Answer(action, {"field": "value"} if action == "accept" else None),
        source,
        problems,
    )


@pytest.mark.parametrize("source", SOURCES)
def test_a_fitting_answer_to_an_open_question_answers_it_whatever_its_way_in(source: Source) -> None:
    for action in ACTIONS:
        assert ruled(action, source=source) is Ruling.ANSWERS


@pytest.mark.parametrize("source", SOURCES)
def test_an_accept_that_breaks_the_schema_is_refused_whatever_its_way_in(source: Source) -> None:
    assert ruled(source=source, wrong=True) is Ruling.REFUSED
    assert ruled("decline", source=source, wrong=True) is Ruling.ANSWERS  # only an accept carries content


@pytest.mark.parametrize("source", SOURCES)
def test_a_question_answered_already_takes_no_second_answer(source: Source) -> None:
    assert ruled(source=source, standing="answered") is Ruling.DUPLICATE
    assert ruled(source=source, held=Held.SAME) is Ruling.DUPLICATE


@pytest.mark.parametrize("source", SOURCES)
def test_a_question_that_is_gone_or_that_the_run_went_past_is_stale(source: Source) -> None:
    assert ruled(source=source, standing="gone") is Ruling.STALE
    assert ruled(source=source, held=Held.MOVED_ON) is Ruling.STALE


@pytest.mark.parametrize("source", SOURCES)
def test_a_reworded_question_takes_its_answer_the_same_whatever_its_way_in(source: Source) -> None:
    # The journal holds the first wording's answer at this position: the new wording's answer is still taken.
    assert ruled(source=source, held=Held.REWORDED) is Ruling.ANSWERS


def test_a_clients_accept_of_a_link_to_our_page_only_acknowledges_it() -> None:
    for source in ("client", "retry", "model", "task", "handler"):
        assert ruled(source=source, mode="url", observable=True) is Ruling.ACKNOWLEDGES
        assert ruled("decline", source=source, mode="url", observable=True) is Ruling.ANSWERS
    assert ruled(source="retry", mode="url", observable=False) is Ruling.ANSWERS  # someone else's link


def test_our_page_carries_the_answer_itself_checked_unless_a_third_party_sent_it() -> None:
    assert ruled(source="page", mode="url", observable=True) is Ruling.ANSWERS
    assert ruled(source="page", mode="url", observable=True, wrong=True) is Ruling.REFUSED
    assert ruled(source="page", mode="url", observable=True, follows_schema=False, wrong=True) is Ruling.ANSWERS


def test_a_links_accept_through_the_client_carries_no_content_to_check() -> None:
    assert ruled(source="model", mode="url", wrong=True) is Ruling.ANSWERS


def test_each_way_in_answers_only_the_questions_put_on_its_route() -> None:
    assert accepts("retry", "mrtr", False) and not accepts("retry", "llm", False)
    assert accepts("task", "mrtr", False) and not accepts("task", "channel", False)
    assert accepts("model", "llm", False) and not accepts("model", "mrtr", False)
    assert accepts("channel", "channel", False) and not accepts("channel", "mrtr", False)
    assert accepts("page", "mrtr", True) and accepts("page", "channel", False) and not accepts("page", "llm", False)
    assert accepts("client", "native", False) and accepts("handler", "handler", False)


def test_only_a_person_on_our_page_or_a_channel_may_correct_an_answer_without_using_an_attempt() -> None:
    assert [s for s in SOURCES if not counts_attempt(s)] == ["page", "channel"]
