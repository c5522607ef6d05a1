"""What a server sends is shown as text: no terminal sequences, no markup, no misleading links."""

from __future__ import annotations

import pytest
from rich.console import Console

from elicitkit._term.person import _ascii_host, link_refusal
from elicitkit._term.text import safe


def rendered(text: str) -> str:
    console = Console(record=True, width=200, force_terminal=False)
    console.print(safe(text))
    return console.export_text()


@pytest.mark.parametrize(
    "hostile",
    [
        "\x1b]0;PWNED\x1b\\ hello",  # retitles the window
        "\x1b]52;c;cGF5bG9hZA==\x07",  # writes the clipboard
        "\x1b[2A\x1b[2KHost: docs.example.com",  # moves up and overwrites what was printed
        "\x1b]8;;https://evil.example\x1b\\clickme\x1b]8;;\x1b\\",  # a fake hyperlink
        "\x9b31mC1 CSI",
        "[bold red]not markup[/bold red]",
    ],
)
def test_control_sequences_and_markup_from_a_server_are_shown_as_text(hostile: str) -> None:
    shown = rendered(hostile)
    assert "\x1b" not in shown
    assert "\x9b" not in shown
    assert "\x07" not in shown
    if "[bold red]" in hostile:
        assert "[bold red]not markup[/bold red]" in shown


def test_newlines_stay() -> None:
    assert rendered("a b\nc").splitlines()[:2] == ["a b", "c"]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://evil.example\\@docs.example.com/x", "backslashes"),
        ("https://docs.example.com/a b", "spaces"),
        ("https://docs.example.com/\x1b[2K", "control characters"),
        ("javascript:alert(1)", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("https:///no-host", "only http and https"),
    ],
)
def test_links_a_browser_would_read_differently_are_not_opened(url: str, reason: str) -> None:
    refusal = link_refusal(url)
    assert refusal is not None
    assert reason in refusal


def test_plain_links_are_opened_and_look_alike_hosts_show_as_the_browser_resolves_them() -> None:
    assert link_refusal("https://docs.example.com/releases/2.1?x=1#y") is None
    assert link_refusal("HTTP://127.0.0.1:8000/elicit/f/abc") is None
    assert _ascii_host("\u0430pple.com") == "xn--pple-43d.com"  # a Cyrillic a
    assert _ascii_host("docs.example.com") == "docs.example.com"
