"""Open redirects: elicitkit sends a browser elsewhere in one place only, `/elicit/go/…`, and only to the
target sealed into that link when the tool started its flow.

A forged, altered or other-purpose token, a used or foreign link, or redirect-looking parameters on any
of elicitkit's pages get a page of elicitkit's own, never a `Location`; and a tool cannot seal a target that
is not https (plain http for loopback only), carries credentials or control characters.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context

from elicitkit.channels import WebInbox
from tests.channels.test_web_inbox import header_identity
from tests.scenes import new_server, serving, text_of
from tests.security.test_links_and_tokens import altered, forged
from tests.test_urlmode import Links, asking, assert_refused, come_back, form_server, sign_in_server

pytestmark = pytest.mark.anyio

EVIL = "https://evil.example/landing"
PROVIDER = "https://id.example.com"


def assert_no_redirect(response: httpx.Response) -> None:
    assert not 300 <= response.status_code < 400, (response.status_code, response.headers.get("location"))
    assert "location" not in response.headers
    assert "refresh" not in response.headers
    assert 'http-equiv="refresh"' not in response.text.lower()


@pytest.mark.parametrize("attack", ["forged", "altered", "callback state"])
async def test_the_go_hop_with_a_forged_altered_or_other_purpose_token_redirects_nowhere(
    mode: str, attack: str
) -> None:
    hitl, flows = sign_in_server(PROVIDER)
    async with asking(hitl, mode) as scene:
        call = scene.call("sign_in")
        go_link = (await scene.links.next()).url
        genuine = await scene.browser.get(go_link)
        assert genuine.status_code == 303
        assert genuine.headers["location"].startswith(f"{PROVIDER}/authorize?")
        [state] = parse_qs(urlsplit(genuine.headers["location"]).query)["state"]
        token = go_link.rsplit("/", 1)[1]
        bad = {"forged": forged(token), "altered": altered(token), "callback state": state}[attack]
        refused = await scene.browser.get(f"{scene.base}/elicit/go/{bad}")
        assert_refused(refused, 400, "This link is not valid")
        assert_no_redirect(refused)
        await come_back(scene, call, state, "genuine")
    assert [f.content for f in flows] == [{"code": "genuine"}]


async def test_the_go_hop_of_an_answered_question_or_for_someone_else_redirects_nowhere(mode: str) -> None:
    server, hitl = new_server("redirects", timeout=10, page_identity=header_identity)

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        def start(callback: str, state: str) -> str:
            return f"{PROVIDER}/authorize?redirect_uri={quote(callback, safe='')}&state={state}"

        return (await hitl.url_flow(ctx, "Sign in", start)).action

    async with asking(hitl, mode) as scene, httpx.AsyncClient(headers={"X-Test-User": "mallory"}) as mallory:
        call = scene.call("sign_in")
        go_link = (await scene.links.next()).url
        someone_else = await mallory.get(go_link)
        assert_refused(someone_else, 403, "This link was sent to someone else")
        assert_no_redirect(someone_else)
        went = await scene.browser.get(go_link)
        [state] = parse_qs(urlsplit(went.headers["location"]).query)["state"]
        await come_back(scene, call, state, "done")
        answered = await scene.browser.get(go_link)
        assert_refused(answered, 410, "already answered")
        assert_no_redirect(answered)


@pytest.mark.parametrize(
    "target",
    [
        "javascript:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "http://evil.example/landing",
        "//evil.example/landing",
        "https://ada:hunter2@evil.example/landing",
        "https://evil.example/landing\r\nSet-Cookie: ek=stolen",
        "https://evil.example\\@id.example.com/",
    ],
)
async def test_a_flow_cannot_seal_an_unsafe_target_into_the_go_hop(mode: str, target: str) -> None:
    server, hitl = new_server("targets", timeout=10)

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        try:
            await hitl.url_flow(ctx, "Sign in", lambda callback, state: target)
        except ValueError as exc:
            return f"refused: {exc}"
        return "sent"

    links = Links()
    async with serving(hitl) as url, Client(url, mode=mode, elicitation_callback=links) as client:
        result = await client.call_tool("sign_in", {})
    assert text_of(result).startswith("refused: An elicitation URL must")
    assert links.asked == []
    assert hitl.pending_questions == 0


async def test_redirect_parameters_on_elicitkits_pages_redirect_nowhere(mode: str) -> None:
    hitl, _ = form_server(channels=[WebInbox()], page_identity=header_identity)
    lure = {"next": EVIL, "redirect": EVIL, "redirect_uri": EVIL, "return_to": EVIL, "url": EVIL}
    async with asking(hitl, mode) as scene, httpx.AsyncClient(headers={"X-Test-User": "alice"}) as alice:
        call, link, page = await scene.open()
        base = scene.base
        responses = [
            await scene.browser.get(link, params=lure),
            await scene.browser.get(f"{base}/elicit/f/{forged(link.rsplit('/', 1)[1])}", params=lure),
            await scene.browser.get(f"{base}/elicit/cb", params={"state": "x", **lure}),
            await scene.browser.get(f"{base}/elicit/go/x", params=lure),
            await alice.get(f"{base}/elicit/inbox", params=lure),
            await alice.post(f"{base}/elicit/inbox/answer", params=lure, data=lure),
            await scene.browser.post(link, params=lure, data={"ek:csrf": page.csrf, "ek:action": "decline", **lure}),
        ]
        for response in responses:
            assert_no_redirect(response)
        assert text_of(await call.result()) == "Declined"
