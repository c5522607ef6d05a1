"""Showing what a server sent on the person's terminal: as text, never as terminal commands or markup.

A server controls messages, titles, descriptions, links, results and logs. A
control character in any of them (ESC starts sequences that retitle the
window, write the clipboard, move the cursor over what was printed, or fake a
hyperlink) is shown as a visible `\\xNN` instead; rich markup is escaped.
"""

from __future__ import annotations

import re

from rich.markup import escape

__all__ = ["safe"]

# C0 controls except newline and tab, DEL, and the C1 controls (U+0080-U+009F, which include CSI and OSC).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: object) -> str:
    """`text` ready for rich: control characters made visible, markup escaped."""
    return escape(_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)))
