"""A list to pick from, as keys move through it: one option (arrows, Enter) or several (Space toggles, Enter sends).

Sans-IO: the terminal widget feeds it keys and draws what it holds; the rules
(what the filter shows, where the cursor goes, how many may be checked) live
here and are tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["Picker"]

PAGE = 10
"""Options shown at once; the rest scroll into view."""


class Picker:
    """Options `(value, title)`; `picked()` says what Enter sends, or sets `error` and returns None."""

    def __init__(
        self,
        options: Sequence[tuple[str, str]],
        *,
        multi: bool = False,
        chosen: Sequence[str] = (),
        default: Sequence[str] = (),
        min_items: int | None = None,
        max_items: int | None = None,
        keys: Mapping[str, str] | None = None,
    ) -> None:
        self.options = list(options)
        self.multi = multi
        self.default = set(default)
        self.min_items = min_items
        self.max_items = max_items
        self.keys = dict(keys or {})
        """Single keys that pick an option at once (`y`/`n`, `a`/`d`/`c`), when nothing is being filtered."""
        self.filter = ""
        self.error = ""
        self.checked: set[str] = set(chosen) if multi else set()
        self.cursor = 0
        start = [value for value, _ in self.options if value in chosen] if not multi else []
        if start:
            self.cursor = [value for value, _ in self.options].index(start[0])

    # -- what is shown ---------------------------------------------------------------------------------

    def visible(self) -> list[tuple[str, str]]:
        """The options the filter lets through (by title or value, any case, anywhere in it)."""
        wanted = self.filter.casefold()
        return [(v, t) for v, t in self.options if wanted in t.casefold() or wanted in v.casefold()]

    def window(self) -> tuple[int, int]:
        """The slice of `visible()` on screen: PAGE options around the cursor."""
        count = len(self.visible())
        start = min(max(0, self.cursor - PAGE // 2), max(0, count - PAGE))
        return start, min(count, start + PAGE)

    def current(self) -> str | None:
        shown = self.visible()
        return shown[self.cursor][0] if shown else None

    # -- keys ------------------------------------------------------------------------------------------

    def move(self, delta: int) -> None:
        count = len(self.visible())
        if count:
            self.cursor = (self.cursor + delta) % count
        self.error = ""

    def type(self, char: str) -> str | None:
        """A printable key: a shortcut's value (picked at once), or one more letter of the filter."""
        if not self.filter and char.lower() in self.keys:
            return self.keys[char.lower()]
        self.filter += char
        self.cursor = 0
        self.error = "" if self.visible() else "nothing matches: Backspace to widen"
        return None

    def backspace(self) -> None:
        self.filter = self.filter[:-1]
        self.cursor = 0
        self.error = ""

    def toggle(self) -> None:
        """Space: check or uncheck the option under the cursor, within maxItems."""
        value = self.current()
        if not self.multi or value is None:
            return
        if value in self.checked:
            self.checked.discard(value)
            self.error = ""
        elif self.max_items is not None and len(self.checked) >= self.max_items:
            self.error = f"at most {self.max_items} may be checked: uncheck one first"
        else:
            self.checked.add(value)
            self.error = ""

    def picked(self) -> str | list[str] | None:
        """What Enter sends: the option under the cursor, or the checked ones in the list's order."""
        if not self.multi:
            value = self.current()
            if value is None:
                self.error = "nothing matches: Backspace to widen"
            return value
        chosen = [value for value, _ in self.options if value in self.checked]
        if self.min_items is not None and len(chosen) < self.min_items:
            self.error = f"check at least {self.min_items} (Space checks)"
            return None
        return chosen

    def limits(self) -> str:
        """`choose 1-2`, `at least 1`: what a multi-select takes, shown before the person tries."""
        low, high = self.min_items or 0, self.max_items
        if high is not None and low:
            return f"choose {low}-{high}" if low != high else f"choose {low}"
        if high is not None:
            return f"at most {high}"
        return f"at least {low}" if low else "any number"
