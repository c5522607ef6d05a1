"""Text in Discord messages: what a question says, shown literally, and clipped to Discord's limits.

Discord renders markdown in embeds (emphasis, code, spoilers, quotes, headings,
masked links, mentions, channels, emoji, timestamps), so text that comes from a
question or an answer is escaped before it goes there; labels and titles are
plain text and only clipped.
"""

from __future__ import annotations

import re

__all__ = ["clip", "clip_escaped", "literal"]

_SPECIALS = re.compile(r"[\\*_~`|>#\[\]()<@]")
_LIST_MARKER = re.compile(r"(?<![^\r\n])([ \t]*)([-+]|\d+(?=\.))")  # at the start of a line: - item, 1. item
_SCHEME = re.compile(r"(?<=[A-Za-z0-9]):(?=//)")  # https://… would be a link


def literal(text: str, limit: int) -> str:
    """`text` as Discord shows it literally (see the module docstring), stripped and clipped to `limit` characters."""
    text = _SPECIALS.sub(r"\\\g<0>", text.strip())
    text = _LIST_MARKER.sub(_unlisted, text)
    return clip_escaped(_SCHEME.sub(r"\\:", text), limit)


def clip_escaped(text: str, limit: int) -> str:
    """Escaped markdown clipped to `limit` characters, never between a backslash and what it escapes."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if (len(cut) - len(cut.rstrip("\\"))) % 2:
        cut = cut[:-1]  # half an escape would escape the ellipsis
    return cut + "…"


def _unlisted(marker: re.Match[str]) -> str:
    indent, sign = marker.group(1), marker.group(2)
    return f"{indent}{sign}\\" if sign[0].isdigit() else f"{indent}\\{sign}"  # 1\. item, \- item


def clip(text: str, limit: int) -> str:
    """Plain text stripped and clipped to `limit` characters."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
