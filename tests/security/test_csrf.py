"""Cross-site request forgery: another site makes the person's browser post an answer.

Such a post comes without the page's cookie (elicitkit's cookies are `SameSite`), and the other site
cannot read the page's hidden field (no CORS headers, no framing). Whatever it sends instead — no field,
a guessed one, a real field without the cookie — is refused, resumes nothing, and the person's own post
from the page is then taken.
"""

from __future__ import annotations

import dataclasses
import secrets

import httpx
import pytest

from tests.channels.test_web_inbox import calling, inbox_server, person
from tests.scenes import serving, text_of
from tests.test_urlmode import GOOD, asking, assert_open, form_server, send_good

pytestmark = pytest.mark.anyio

CROSS_SITE = {"Origin": "https://evil.example", "Referer": "https://evil.example/win", "Sec-Fetch-Site": "cross-site"}


@pytest.mark.parametrize("forgery", ["no field", "guessed field", "real field without the cookie"])
async def test_a_cross_site_post_to_the_secure_form_is_refused_and_resumes_nothing(mode: str, forgery: str) -> None:
    hitl, answers = form_server()
    async with asking(hitl, mode) as scene, httpx.AsyncClient(headers=CROSS_SITE) as elsewhere:
        call, link, page = await scene.open()
        cookie = page.response.headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=lax" in cookie or "samesite=strict" in cookie
        assert "access-control-allow-origin" not in page.response.headers
        posted = {"ek:action": "accept", **GOOD}
        if forgery == "no field":
            sent = await scene.browser.post(link, data=posted, headers=CROSS_SITE)
        elif forgery == "guessed field":
            sent = await scene.browser.post(
                link, data={"ek:csrf": secrets.token_urlsafe(32), **posted}, headers=CROSS_SITE
            )
        else:
            sent = await elsewhere.post(link, data={"ek:csrf": page.csrf, **posted})
        assert sent.status_code == 403, sent.text
        # Without the page's cookie a post is another browser's: the link is bound to the person's.
        refusal = (
            "This form was not sent from this page"
            if forgery != "real field without the cookie"
            else ("This link was opened in another browser")
        )
        assert refusal in sent.text
        assert_open(hitl, call, answers)
        await send_good(scene.browser, link, page)
        assert text_of(await call.result()) == "Accepted"
    assert len(answers) == 1


@pytest.mark.parametrize("forgery", ["no field", "guessed field", "real field without the cookie"])
async def test_a_cross_site_post_to_the_web_inbox_is_refused_and_answers_nothing(mode: str, forgery: str) -> None:
    hitl = inbox_server()
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        person(url, "alice") as elsewhere,  # alice's identity, but not her page's cookie
        alice.events() as events,
        calling(url, mode) as call,
    ):
        question = await alice.arrival(events, "Ship checkout?")
        alice.http.headers.update(CROSS_SITE)
        if forgery == "no field":
            sent = await alice.answer(question, csrf="", value="true")
        elif forgery == "guessed field":
            sent = await alice.answer(dataclasses.replace(question, csrf=secrets.token_urlsafe(32)), value="true")
        else:
            sent = await elsewhere.answer(question, value="true")
        assert sent.status_code == 403, sent.text
        assert "This form was not sent from your inbox." in sent.text
        assert "access-control-allow-origin" not in sent.headers
        assert [q.message for q in await alice.questions()] == ["Ship checkout?"]
        for name in CROSS_SITE:
            del alice.http.headers[name]
        assert (await alice.answer(question, value="false")).status_code == 200
        assert await call.text() == "not shipped"
