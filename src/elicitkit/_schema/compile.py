"""Python types -> MCP's restricted elicitation schema.

A question's schema may be a pydantic model, a dataclass, a TypedDict or a raw
dict. Each becomes a `FormSchema`: the `requestedSchema` sent on the wire (a
flat object of primitive properties, SEP-1330 enums, SEP-1034 defaults) plus
what is needed to turn an answer back into the type. Types are compiled once
and cached; anything the restricted schema cannot express is refused the
first time, with an error naming the field.

Titles for choices are attached one way, with `Titles`:

```python
class Target(BaseModel):
    env: Annotated[Literal["prod", "staging"], Titles(prod="Production", staging="Staging")]
```
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import types
import typing
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

import annotated_types as at
from pydantic import AnyUrl, BaseModel, EmailStr, PydanticUserError, SecretStr, TypeAdapter
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_core import SchemaError as CoreSchemaError
from typing_extensions import is_typeddict

from elicitkit._core.journal import canonical_schema
from elicitkit._errors import SchemaError
from elicitkit._schema.choices import TITLED_ONE_OF_SINCE, multi_select, single_select, with_enum_names
from elicitkit._schema.limits import not_text
from elicitkit._schema.restricted import as_written, check_raw_schema

__all__ = ["FormSchema", "Titles", "compile_schema", "raw_form"]


class Titles:
    """Display titles for a choice field's options, keyed by option value.

    `Annotated[Literal["a", "b"], Titles(a="Alpha", b="Beta")]`, or
    `Titles({"prod-eu": "Production (EU)"})` for values that are not identifiers.
    Works on `Literal`, `Enum` (keyed by member value) and their `list`/`set`.
    """

    __slots__ = ("titles",)

    def __init__(self, titles: Mapping[str, str] | None = None, /, **more: str) -> None:
        self.titles: dict[str, str] = {**(titles or {}), **more}

    def __repr__(self) -> str:
        return f"Titles({self.titles!r})"


@dataclass(frozen=True, slots=True, eq=False)
class FormSchema:
    """A compiled question schema.

    Attributes:
        wire: the schema in its current form, which validation, pages and the
            model's text read (titled choices as `oneOf`).
        source: the type (or raw dict) it was built from.
        adapter: builds the typed answer; `None` for raw dict schemas.
        nullable: fields that may be omitted and have no default (filled with None).
        secret_fields: `SecretStr` fields (only in URL-mode forms): password inputs, never pre-filled or logged.
        written: a raw schema as its author wrote it; see `requested`.
    """

    wire: dict[str, Any]
    source: Any
    adapter: TypeAdapter[Any] | None
    nullable: tuple[str, ...] = ()
    secret_fields: tuple[str, ...] = ()
    written: dict[str, Any] | None = None
    fast_check: Any = field(default=None, init=False, repr=False)
    """Built on first use by `validate.check_content`: a quick yes/no for answers that fit."""
    _canonical: str | None = field(default=None, init=False, repr=False)
    _text: str | None = field(default=None, init=False, repr=False)

    def canonical(self) -> str:
        """`wire` as the journal's digest reads it, serialised once per schema."""
        if self._canonical is None:
            object.__setattr__(self, "_canonical", canonical_schema(self.wire))
        assert self._canonical is not None
        return self._canonical

    def wire_text(self) -> str:
        """`wire` as compact JSON in its own key order (fields stay in the order they were written), serialised
        once per schema: what a stored question record holds."""
        if self._text is None:
            object.__setattr__(self, "_text", json.dumps(self.wire, separators=(",", ":")))
        assert self._text is not None
        return self._text

    def requested(self, version: str | None = None) -> dict[str, Any]:
        """The `requestedSchema` for a client that negotiated `version` (None: the current revision).

        A raw schema goes as the server wrote it (legacy `enumNames` included).
        A schema built from Python types writes titled single-selects as
        `oneOf`, or as `enum` + `enumNames` for clients older than 2025-11-25.
        """
        if self.written is not None:
            return self.written
        if version is not None and version < TITLED_ONE_OF_SINCE:  # revisions are dates: they sort as text
            return with_enum_names(self.wire)
        return self.wire

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        props: dict[str, dict[str, Any]] = self.wire["properties"]
        return props

    @property
    def required(self) -> list[str]:
        req: list[str] = self.wire.get("required", [])
        return req


_CACHE_SIZE = 1024
_cache: OrderedDict[Any, FormSchema] = OrderedDict()


def compile_schema(schema: Any, *, secrets: bool = False) -> FormSchema:
    """Compile `schema` (model, dataclass, TypedDict or raw dict) to a `FormSchema`.

    `secrets=True` admits `SecretStr` fields: only for forms on elicitkit's own
    page (URL mode), never for forms the MCP client shows.

    Raises:
        SchemaError: the schema is outside MCP's restricted subset; the message
            names the field and why.
    """
    if isinstance(schema, FormSchema):
        return schema
    # A class is never a raw schema: it is spared `Mapping`'s ABC check (most of a cached type's cost).
    if not isinstance(schema, type) and isinstance(schema, Mapping):
        return raw_form(schema)
    key = (schema, "secrets") if secrets else schema
    try:
        compiled = _cache[key]
    except (KeyError, TypeError):
        pass
    else:
        _cache.move_to_end(key)
        return compiled
    compiled = _compile_type(schema, secrets)
    _cache[key] = compiled
    # Bounded: a server that builds models on the fly (create_model per call) must not grow forever.
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return compiled


def raw_form(schema: Mapping[str, Any]) -> FormSchema:
    """A `FormSchema` for a hand-written schema: checked, read in the current form, sent as written."""
    where = not_text(schema, "schema")
    if where is not None:
        raise SchemaError(f"{where} must be Unicode text: it has a lone surrogate")
    return FormSchema(wire=check_raw_schema(schema), source=schema, adapter=None, written=as_written(schema))


def _compile_type(tp: Any, secrets: bool = False) -> FormSchema:
    name = getattr(tp, "__name__", repr(tp))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if not tp.__pydantic_complete__ and not _rebuilt(tp):
            raise SchemaError(
                f"Cannot ask with {name!r}: pydantic could not resolve its annotations yet; "
                f"define every type it uses first, or call {name}.model_rebuild()"
            )
        fields = dict(tp.model_fields)
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        fields = {}
        for f in dataclasses.fields(tp):
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = PydanticUndefined
            fields[f.name] = FieldInfo.from_annotated_attribute(hints[f.name], default)
    elif is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        optional_keys: frozenset[str] = getattr(tp, "__optional_keys__", frozenset())
        fields = {}
        for key, hint in hints.items():
            info = FieldInfo.from_annotation(_strip_required(hint))
            # Under `from __future__ import annotations` the TypedDict class cannot see NotRequired/Required in
            # the string annotations, so `__optional_keys__` is wrong; the resolved hint says it reliably.
            origin = get_origin(hint)
            not_required = origin is typing.NotRequired or (key in optional_keys and origin is not typing.Required)
            if not_required and info.is_required():
                info = FieldInfo.merge_field_infos(info, default=None)
            fields[key] = info
    else:
        raise SchemaError(
            f"Cannot ask with {name!r}: an elicitation schema is a pydantic model, a dataclass, "
            "a TypedDict or a raw JSON schema dict"
        )
    properties: dict[str, Any] = {}
    required: list[str] = []
    nullable: list[str] = []
    secret_fields: list[str] = []
    for field_name, info in fields.items():
        # The wire key is the name the answer is validated under.
        key = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or field_name
        prop, optional = _property(f"{name}.{field_name}", info, secrets)
        if secrets and _is_secret(info):
            secret_fields.append(key)
            prop.pop("default", None)
        properties[key] = prop
        has_default = not info.is_required()
        if not has_default and not optional:
            required.append(key)
        elif not has_default:
            nullable.append(key)
    wire: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        wire["required"] = required
    # The same checks as a hand-written schema: defaults that fit, bounds that admit an answer.
    wire = check_raw_schema(wire, lambda field: f"Field '{name}.{field}'", root=f"Cannot ask with {name!r}")
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(tp)
    except PydanticUserError as exc:
        raise SchemaError(f"Cannot ask with {name!r}: {exc.message}") from None
    except CoreSchemaError as exc:
        # A dataclass or TypedDict is only checked by pydantic here (a model, when its class is made): say why.
        raise SchemaError(f"Cannot ask with {name!r}: pydantic cannot validate it: {exc}") from None
    return FormSchema(
        wire=wire, source=tp, adapter=adapter, nullable=tuple(nullable), secret_fields=tuple(secret_fields)
    )


def _is_secret(info: FieldInfo) -> bool:
    annotation, _ = _unwrap_annotated(info.annotation, [])
    if _is_union(annotation):
        annotation = next((a for a in get_args(annotation) if a is not type(None)), None)
    return annotation is SecretStr


def _rebuilt(model: type[BaseModel]) -> bool:
    try:
        return bool(model.model_rebuild())
    except (PydanticUserError, NameError):
        return False


def _strip_required(hint: Any) -> Any:
    """Drop `Required[...]`/`NotRequired[...]` wrappers, which only say whether a TypedDict key may be missing."""
    if get_origin(hint) is Annotated:
        inner, *meta = get_args(hint)
        return Annotated[(_strip_required(inner), *meta)]
    if get_origin(hint) in (typing.Required, typing.NotRequired):
        return get_args(hint)[0]
    return hint


def _property(where: str, info: FieldInfo, secrets: bool = False) -> tuple[dict[str, Any], bool]:
    """One field's wire property, and whether the field is optional (`X | None`)."""
    annotation, metadata = _unwrap_annotated(info.annotation, list(info.metadata))
    optional = False
    if _is_union(annotation):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) != len(get_args(annotation)) and len(members) == 1:
            optional = True
            annotation, metadata = _unwrap_annotated(members[0], metadata)
        else:
            raise SchemaError(f"Field {where!r}: a union of types cannot be asked; use one type (X | None is fine)")
    titles = next((m.titles for m in metadata if isinstance(m, Titles)), None)
    prop = {"type": "string"} if secrets and annotation is SecretStr else _type_property(where, annotation, titles)
    _apply_constraints(where, prop, metadata)
    if info.title:
        prop["title"] = info.title
    if info.description:
        prop["description"] = info.description
    default = info.get_default(call_default_factory=True) if not info.is_required() else None
    if default is not None and not isinstance(default, SecretStr):
        prop["default"] = _wire_default(default)
    return prop, optional


def _unwrap_annotated(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    while get_origin(annotation) is Annotated:
        annotation, *more = get_args(annotation)
        metadata = [*metadata, *more]
        for extra in more:
            if isinstance(extra, FieldInfo):
                metadata.extend(extra.metadata)
    return annotation, metadata


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (typing.Union, types.UnionType)


def _type_property(where: str, tp: Any, titles: dict[str, str] | None) -> dict[str, Any]:
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is SecretStr:
        raise SchemaError(
            f"Field {where!r}: secrets must not be asked in form mode (the MCP client and the model "
            "would see them); ask for them in URL mode instead"
        )
    if tp is str:
        return {"type": "string"}
    if tp is EmailStr:
        return {"type": "string", "format": "email"}
    if isinstance(tp, type) and issubclass(tp, AnyUrl):
        return {"type": "string", "format": "uri"}
    if tp is dt.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is dt.date:
        return {"type": "string", "format": "date"}
    options = _options(where, tp)
    if options is not None:
        return single_select(options, titles)
    if get_origin(tp) in (list, set, frozenset):
        (item,) = get_args(tp) or (Any,)
        item, _ = _unwrap_annotated(item, [])
        options = _options(where, item)
        if options is None:
            raise SchemaError(
                f"Field {where!r}: a list must be a multi-select of fixed choices "
                "(list[Literal[...]] or list[SomeEnum]); free lists and lists of objects cannot be asked"
            )
        return multi_select(options, titles)
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp) or is_typeddict(tp)):
        raise SchemaError(f"Field {where!r}: nested objects cannot be asked; the form must be flat")
    raise SchemaError(f"Field {where!r}: type {getattr(tp, '__name__', tp)!r} cannot be asked in a form")


def _options(where: str, tp: Any) -> list[str] | None:
    """The string options of a `Literal[...]` or `Enum`, or None when `tp` is neither."""
    if get_origin(tp) is Literal:
        values = list(get_args(tp))
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [member.value for member in tp]
    else:
        return None
    if not values or not all(isinstance(v, str) for v in values):
        raise SchemaError(f"Field {where!r}: choices must be strings (use Literal['a', 'b'] or a str Enum)")
    return values


def _apply_constraints(where: str, prop: dict[str, Any], metadata: list[Any]) -> None:
    kind = prop["type"]
    for m in metadata:
        if isinstance(m, at.MinLen | at.MaxLen):
            if kind not in ("string", "array"):
                raise SchemaError(f"Field {where!r}: length limits apply to text and multi-selects only")
            is_min = isinstance(m, at.MinLen)
            if kind == "string":
                prop["minLength" if is_min else "maxLength"] = m.min_length if is_min else m.max_length  # type: ignore[union-attr]
            else:
                prop["minItems" if is_min else "maxItems"] = m.min_length if is_min else m.max_length  # type: ignore[union-attr]
        elif isinstance(m, at.Ge | at.Le | at.Gt | at.Lt):
            if kind not in ("integer", "number"):
                raise SchemaError(f"Field {where!r}: numeric bounds apply to numbers only")
            if isinstance(m, at.Ge):
                prop["minimum"] = m.ge
            elif isinstance(m, at.Le):
                prop["maximum"] = m.le
            elif kind == "integer":
                # The restricted schema has inclusive bounds only; integers convert exactly.
                prop["minimum" if isinstance(m, at.Gt) else "maximum"] = (
                    m.gt + 1 if isinstance(m, at.Gt) else m.lt - 1  # type: ignore[operator]
                )
            # An exclusive float bound has no wire form; the server still enforces it on the answer.


def _wire_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, set | frozenset | list | tuple):
        items = [_wire_default(v) for v in value]
        return sorted(items) if isinstance(value, set | frozenset) else items
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, AnyUrl):
        return str(value)
    return value
