"""HTML form fields from the restricted schema, and form posts back into answers.

`field_views` turns each property into a `FieldView`, which the `fields.html`
template renders; the template engine escapes every string that comes from a
question (message, titles, descriptions, choices, defaults). The browser
enforces each constraint it can (`required`, `minlength`, `maxlength`, `min`,
`max`, input types); the server validates the answer again regardless. Fields
listed in `secret` render as password inputs and are never pre-filled.
Nothing is chosen for the person: a single choice without a default has no
option selected (radios for short lists, an empty first option for long
ones), and a yes/no without a default is two radios, neither ticked.

The page's own controls (`CONTROLS`: the CSRF value, the pressed button, the
inbox's question token, a decline's reason) are posted beside the fields under a prefix no schema
property may take (`PAGE_CONTROLS`), and `page_controls` reads them from a post:
each at most once, or the post is refused whole.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from elicitkit._schema.choices import options_of
from elicitkit._schema.restricted import PAGE_CONTROLS

__all__ = [
    "CONTROLS",
    "RADIOS_UP_TO",
    "Controls",
    "FieldView",
    "Control",
    "field_views",
    "page_controls",
    "parse_form",
    "typed_number",
]


@dataclass(frozen=True, slots=True)
class Controls:
    """The names of the page's own form controls, which the templates and the handlers share."""

    csrf: str = f"{PAGE_CONTROLS}csrf"
    action: str = f"{PAGE_CONTROLS}action"
    token: str = f"{PAGE_CONTROLS}token"
    reason: str = f"{PAGE_CONTROLS}reason"
    """Why the person declines (optional; read only with Decline)."""


CONTROLS = Controls()


def page_controls(posted: Iterable[tuple[str, Any]]) -> dict[str, str] | None:
    """The page's own controls in a post, by name; None when one of them comes more than once, or not as text.

    A page sends each of its controls once. A post that repeats one was not sent by the page as it was
    rendered, and is refused whole rather than read by picking one of the values.
    """
    controls: dict[str, str] = {}
    for name, value in posted:
        if not name.startswith(PAGE_CONTROLS):
            continue
        if name in controls or not isinstance(value, str):
            return None
        controls[name] = value
    return controls


_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
_YES_NO = [("true", "Yes"), ("false", "No")]
RADIOS_UP_TO = 5
"""A single choice of at most this many options is a set of radios (every option in sight); a longer one, a
`<select>` whose first option is empty, so nothing is chosen for the person."""

Control = Literal["check", "yesno", "radios", "select", "multi", "input"]


@dataclass(frozen=True, slots=True)
class FieldView:
    """What a page (or a chat channel's form) needs to show one field.

    `kind` is what the field is (a yes/no, a single or multi choice, an input); `control` is how elicitkit's
    pages show it. `clearable` choices offer "No answer" (the field is optional and has no default).
    """

    name: str
    label: str
    kind: Literal["boolean", "multi", "select", "input"]
    required: bool
    value: Any
    help: str | None
    error: str | None = None
    """What to do about this field, in plain words (`messages.explain`), after a refused answer."""
    again: bool = False
    """A secret field on a refused answer's page: what was typed is never sent back, so it must be typed again."""
    options: list[tuple[str, str]] = field(default_factory=list)
    chosen: frozenset[str] = frozenset()
    """The options chosen, as the form posts them (a boolean's as "true" or "false")."""
    clearable: bool = False
    defaulted: bool = False
    """The schema gives a default."""
    limits: str | None = None
    """A multi-select's bounds, in words."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """An `<input>`'s type and the constraints the browser enforces."""
    scope: str = "f"
    """Prefixes the field's element ids: unique on a page that shows several questions."""

    @property
    def control(self) -> Control:
        """How the page shows the field: a boolean with a default is one checkbox (`check`), one without is Yes
        and No radios, neither chosen (`yesno`); a single choice is radios up to `RADIOS_UP_TO` options, else a
        `select` whose first option is empty; a multi-select is checkboxes."""
        if self.kind == "boolean":
            return "check" if self.defaulted else "yesno"
        if self.kind == "select":
            return "radios" if len(self.options) <= RADIOS_UP_TO else "select"
        return self.kind

    @property
    def choices(self) -> list[tuple[str, str]]:
        """The options a page offers: a boolean's are Yes and No."""
        return _YES_NO if self.kind == "boolean" else self.options

    @property
    def id(self) -> str:
        """The id of the field's control (its first radio or checkbox): labels and the error summary point here."""
        return f"{self.scope}-{self.name}"

    @property
    def hint_id(self) -> str | None:
        return f"{self.id}-hint" if self.help or self.limits else None

    @property
    def error_id(self) -> str | None:
        return f"{self.id}-error" if self.error else None

    @property
    def again_id(self) -> str | None:
        return f"{self.id}-again" if self.again else None

    @property
    def described_by(self) -> str | None:
        """The ids of the hint, the note to type a secret again and the error, for `aria-describedby`."""
        ids = [i for i in (self.hint_id, self.again_id, self.error_id) if i]
        return " ".join(ids) or None


def typed_number(raw: str, kind: str) -> Any:
    """A number typed as text, as the schema's type: whole numbers exactly (no detour through a float, which
    rounds past 2**53); text that is no number stays text, so validation says what is wrong with it."""
    text = raw.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return raw
    return int(number) if kind == "integer" and number.is_integer() else number


def field_views(
    schema: Mapping[str, Any],
    values: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    secret: Collection[str] = (),
    scope: str = "f",
) -> list[FieldView]:
    """A view of every property, pre-filled with `values` (else the defaults; never for secret fields).

    `errors` are the plain-words messages of a refused answer, by field (`messages.explain`); on that page a
    secret field says it must be typed again.
    """
    required = set(schema.get("required", []))
    refused = bool(errors)
    views = []
    for name, prop in schema.get("properties", {}).items():
        hidden = name in secret
        value = None if hidden else (values or {}).get(name, prop.get("default"))
        common = {
            "name": name,
            "label": prop.get("title") or name,
            "required": name in required,
            "value": value,
            "help": prop.get("description"),
            "error": (errors or {}).get(name),
            "again": hidden and refused,
            "scope": scope,
        }
        views.append(_view(prop, hidden, common))
    return views


def _view(prop: Mapping[str, Any], secret: bool, common: dict[str, Any]) -> FieldView:
    kind = prop.get("type", "string")
    # Nothing to fall back on when left unanswered: the person must be able to leave it so.
    common |= {"defaulted": "default" in prop, "clearable": not common["required"] and "default" not in prop}
    if kind == "boolean":
        value = common["value"]
        chosen = frozenset() if value is None else frozenset({"true" if value is True else "false"})
        return FieldView(kind="boolean", chosen=chosen, **common)
    if kind == "array":
        bounds = [
            f"{word} {prop[key]}" for word, key in (("at least", "minItems"), ("at most", "maxItems")) if key in prop
        ]
        chosen = frozenset(common["value"] or ())
        options = options_of(prop.get("items", {})) or []
        limits = f"Choose {' and '.join(bounds)}." if bounds else None
        return FieldView(kind="multi", options=options, chosen=chosen, limits=limits, **common)
    choices = options_of(prop)
    if choices:
        chosen = frozenset() if common["value"] is None else frozenset({common["value"]})
        return FieldView(kind="select", options=choices, chosen=chosen, **common)
    value = common["value"]
    attributes: dict[str, Any] = {}
    if kind in ("integer", "number"):
        attributes = {"type": "number", "step": "1" if kind == "integer" else "any"}
        attributes |= {html: prop[key] for html, key in (("min", "minimum"), ("max", "maximum")) if key in prop}
    else:
        attributes["type"] = "password" if secret else _INPUT_TYPES.get(prop.get("format", ""), "text")
        attributes |= {
            html: prop[key] for html, key in (("minlength", "minLength"), ("maxlength", "maxLength")) if key in prop
        }
        if secret:
            attributes["autocomplete"] = "off"
    attributes["value"] = value  # None (nothing to pre-fill) leaves the attribute out
    return FieldView(kind="input", attributes=attributes, **common)


def parse_form(schema: Mapping[str, Any], form: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Turn posted form values into answer content; unparseable values pass through for validation to report."""
    content: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        values = [v for v in form.get(name, []) if v != ""]
        kind = prop.get("type", "string")
        if kind == "array":
            if name in form:
                content[name] = values
            continue
        if kind == "boolean":
            if values:
                content[name] = values[-1] == "true"
            continue
        if not values:
            continue
        raw = values[-1]
        if kind in ("integer", "number"):
            content[name] = typed_number(raw, kind)
        elif prop.get("format") == "date-time" and len(raw) in (16, 19) and "T" in raw:
            # <input type="datetime-local"> sends no offset; the person's entry is taken as UTC.
            content[name] = (raw + ":00" if len(raw) == 16 else raw) + "Z"
        else:
            content[name] = raw
    return content
