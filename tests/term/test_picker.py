"""A list to pick from, as keys move through it: the rules the arrow-key widgets draw, without a terminal."""

from __future__ import annotations

from elicitkit._term.picker import PAGE, Picker

TEAMS = [("ops", "Operations"), ("dev", "Development"), ("qa", "Quality")]
CHECKS = [("lint", "lint"), ("unit", "unit"), ("e2e", "e2e")]


def test_the_cursor_starts_on_the_chosen_option_and_wraps_around() -> None:
    picker = Picker(TEAMS, chosen=["dev"], default=["dev"])
    assert picker.current() == "dev"
    picker.move(1)
    picker.move(1)
    assert picker.current() == "ops"
    picker.move(-1)
    assert picker.picked() == "qa"


def test_typing_filters_by_title_or_value_in_any_case_and_backspace_widens() -> None:
    picker = Picker(TEAMS)
    for char in "DEV":
        picker.type(char)
    assert picker.visible() == [("dev", "Development")]
    picker.backspace()
    picker.backspace()
    picker.backspace()
    assert len(picker.visible()) == 3
    for char in "zz":
        picker.type(char)
    assert picker.visible() == []
    assert picker.picked() is None
    assert "nothing matches" in picker.error


def test_shortcut_keys_pick_at_once_unless_a_filter_is_being_typed() -> None:
    picker = Picker([("yes", "Yes"), ("no", "No")], keys={"y": "yes", "n": "no"})
    assert picker.type("N") == "no"
    actions = Picker([("accept", "Answer it"), ("decline", "Decline")], keys={"d": "decline"})
    assert actions.type("a") is None  # not a shortcut: it filters
    assert actions.type("d") is None  # a filter is being typed: "ad" filters, it does not decline
    assert actions.filter == "ad"


def test_space_checks_within_max_items_and_enter_needs_min_items() -> None:
    picker = Picker(CHECKS, multi=True, chosen=["lint"], min_items=1, max_items=2)
    assert picker.limits() == "choose 1-2"
    picker.move(1)
    picker.toggle()
    picker.move(1)
    picker.toggle()
    assert picker.checked == {"lint", "unit"}
    assert picker.error == "at most 2 may be checked: uncheck one first"
    picker.move(1)
    picker.toggle()  # lint off
    picker.toggle()  # and on again
    assert picker.picked() == ["lint", "unit"]  # in the list's order
    picker.toggle()
    picker.move(1)
    picker.toggle()
    assert picker.picked() is None
    assert picker.error == "check at least 1 (Space checks)"


def test_limits_read_as_a_person_would_say_them() -> None:
    assert Picker(CHECKS, multi=True).limits() == "any number"
    assert Picker(CHECKS, multi=True, min_items=2).limits() == "at least 2"
    assert Picker(CHECKS, multi=True, max_items=2).limits() == "at most 2"
    assert Picker(CHECKS, multi=True, min_items=2, max_items=2).limits() == "choose 2"


def test_a_long_list_shows_a_page_around_the_cursor() -> None:
    options = [(str(n), f"Option {n}") for n in range(30)]
    picker = Picker(options)
    assert picker.window() == (0, PAGE)
    picker.move(-1)  # wraps to the last one
    assert picker.window() == (30 - PAGE, 30)
    picker.move(-12)
    start, end = picker.window()
    assert start <= picker.cursor < end
