"""Which route a question takes: one pure function of what the server and the client allow."""

from __future__ import annotations

from elicitkit._core.routing import NoRoute, RouteFacts, choose_route, explain

FORM_CLIENT_2025 = RouteFacts(
    mode="form",
    to_channel=False,
    in_run=True,
    hosted=False,
    legacy_task=False,
    client_shows=True,
    can_send=True,
    mrtr=False,
    fallback="llm",
)
FORM_CLIENT_2026 = FORM_CLIENT_2025._replace(hosted=True, can_send=False, mrtr=True)
NO_FORMS = FORM_CLIENT_2025._replace(client_shows=False, hosted=True)


def test_a_client_that_shows_forms_is_asked_the_way_its_era_asks() -> None:
    assert choose_route(FORM_CLIENT_2025) == "native"
    assert choose_route(FORM_CLIENT_2026) == "mrtr"


def test_a_channel_question_goes_to_the_channel_whatever_the_client_shows() -> None:
    assert choose_route(FORM_CLIENT_2026._replace(to_channel=True)) == "channel"
    assert choose_route(NO_FORMS._replace(to_channel=True)) == "channel"
    assert choose_route(FORM_CLIENT_2025._replace(to_channel=True, in_run=False)) is NoRoute.CHANNEL_OUTSIDE_RUN


def test_a_client_that_cannot_show_the_question_gets_the_servers_fallback() -> None:
    assert choose_route(NO_FORMS) == "llm"
    assert choose_route(NO_FORMS._replace(fallback="handler")) == "handler"
    assert choose_route(NO_FORMS._replace(fallback="error")) is NoRoute.CLIENT_CANNOT_SHOW
    assert choose_route(NO_FORMS._replace(hosted=False)) is NoRoute.FALLBACK_OUTSIDE_HOST


def test_a_2025_client_without_a_back_channel_is_treated_as_one_that_cannot_show_forms() -> None:
    assert choose_route(FORM_CLIENT_2025._replace(can_send=False, hosted=True)) == "llm"


def test_a_2026_question_needs_a_hosted_body() -> None:
    assert choose_route(FORM_CLIENT_2026._replace(hosted=False)) is NoRoute.MRTR_OUTSIDE_HOST


def test_a_2025_task_asks_its_client_through_tasks_result_even_without_a_back_channel() -> None:
    assert choose_route(FORM_CLIENT_2025._replace(legacy_task=True, can_send=False, hosted=True)) == "native"


def test_every_refusal_says_what_to_do() -> None:
    for why in NoRoute:
        assert explain(why, "form")
    assert "links (URL mode)" in explain(NoRoute.CLIENT_CANNOT_SHOW, "url")


def test_a_form_goes_to_elicitkits_view_in_the_chat_when_the_client_renders_apps() -> None:
    in_view = NO_FORMS._replace(app_view="fallback")
    assert choose_route(in_view) == "app"
    assert choose_route(in_view._replace(fallback="error")) == "app"  # the view is the person's own form
    assert choose_route(in_view._replace(mode="url")) == "llm"  # a link never goes through the host
    assert choose_route(in_view._replace(hosted=False)) is NoRoute.FALLBACK_OUTSIDE_HOST
    assert choose_route(FORM_CLIENT_2025._replace(app_view="fallback")) == "native"
    assert choose_route(FORM_CLIENT_2026._replace(app_view="fallback")) == "mrtr"
    assert choose_route(FORM_CLIENT_2026._replace(app_view="first")) == "app"
    assert choose_route(FORM_CLIENT_2026._replace(app_view="first", to_channel=True)) == "channel"
