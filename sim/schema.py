"""Declarative checks of the files a user writes (card files, scenarios, run, training and tune
specs): each file's keys are a pydantic model (docs/architecture.md, "Why pydantic"), and the
first problem pydantic finds becomes the project's one readable line: the dotted key, what was
expected and what was found. The readers add the file's name and raise their own error type.

A model says what a key accepts in its annotation: a plain type (strict: "3" is no number, true no
integer), a `Field(description=...)` that names the expectation for messages, or one of the small
checks below (`one_of`, `whole`, `check`) that phrase the expectation themselves. Unknown keys are
errors (extra="forbid")."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn, TypeGuard

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

PROBLEM = "protolab_schema"  # the error type of the checks below; its message is said as given
UNKNOWN = "protolab_unknown"  # an unknown key, named before anything else in its table is checked


class Strict(BaseModel):
    """A table of a user's file: known keys only (a misspelt key is named as unknown before its
    table's other keys are checked), values of exactly the declared type."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.model_config.get("extra") == "forbid":
            known = {f.alias or n for n, f in cls.model_fields.items()}
            unknown = sorted(k for k in data if k not in known)
            if unknown:
                raise PydanticCustomError(UNKNOWN, "unknown key {key}", {"key": unknown[0]})
        return data


class Checked(Strict):
    """A table whose defaults pass the same checks as a given value (normalised alike: a default
    number is a float as a given one is), as the specs' stored and hashed forms need."""

    model_config = ConfigDict(validate_default=True)


def fail(message: str, key: str = "") -> NoReturn:
    """Refuse a value with `message` ("expected ..., got ..."); `key` names a key below the one
    being checked (a model-level check naming the key at fault)."""
    raise PydanticCustomError(PROBLEM, "{message}", {"message": message, "key": key})


def check(test: Callable[[Any], bool], expected: str, got: bool = True) -> Any:
    """A value that passes `test`; else "expected EXPECTED, got VALUE" (`got=False`: without the value)."""

    def run(v: Any) -> Any:
        if not test(v):
            fail(f"expected {expected}, got {v!r}" if got else f"expected {expected}")
        return v

    return Annotated[Any, AfterValidator(run)]


def refuse(message: str) -> Any:
    """A key that may not be given here; `message` says why."""
    return Annotated[Any, AfterValidator(lambda v: fail(message))]


def quoted(values: Iterable[Any]) -> str:
    """'"a", "b" or "c"' (true for True): how a message lists the words a key accepts."""
    words = ["true" if v is True else "false" if v is False else f'"{v}"' for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def one_of(values: Iterable[Any], expected: str = "", got: bool = True) -> Any:
    """One of `values` (compared with their type: true is not 1); the message lists them sorted
    unless `expected` says it otherwise."""
    ok = tuple(values)
    phrase = expected or f"one of {sorted(ok, key=str)}"
    return check(lambda v: any(v == x and type(v) is type(x) for x in ok), phrase, got)


def words(*values: Any) -> Any:
    """One of `values`, said as '"a", "b" or "c"' (without the value given)."""
    return one_of(values, quoted(values), got=False)


def is_whole(v: Any) -> TypeGuard[int]:
    """An integer that is no bool (TOML's true and false are Python ints too)."""
    return isinstance(v, int) and not isinstance(v, bool)


def whole(lo: int, hi: int, expected: str = "", got: bool = True) -> Any:
    """A whole number lo..hi."""
    return check(lambda v: is_whole(v) and lo <= v <= hi, expected or f"a whole number {lo}-{hi}", got)


def before(run: Callable[[Any], Any], inner: Any) -> Any:
    """`inner`, with `run` looking at the raw value first (a shape pydantic's own message would blur)."""
    return Annotated[inner, BeforeValidator(run)]


# -- the phrases of the experiment specs ("expected the seed, a whole number at least 0; got -1") ------------


def integer(lo: int, hi: int, what: str) -> Any:
    """A whole number lo..hi."""
    return _said(lambda v: is_whole(v) and lo <= v <= hi, integer_expected(lo, hi, what) + "; got ")


def integer_expected(lo: int, hi: int, what: str) -> str:
    """'expected WHAT, a whole number at least LO and at most HI' (hi >= 2**62: no upper bound worth saying)."""
    bound = f"at least {lo:,}" if hi >= 2**62 else f"at least {lo:,} and at most {hi:,}"
    return f"expected {what}, a whole number {bound}"


def number(lo: float, hi: float, what: str) -> Any:
    """A number lo..hi (an integer is a number too), as a float."""
    return _said(
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and lo <= v <= hi,
        f"expected {what}, a number from {lo:g} to {hi:g}; got ",
        float,
    )


def text(what: str) -> Any:
    """A non-blank string, stripped."""
    return _said(lambda v: isinstance(v, str) and bool(v.strip()), f"expected {what}, got ", str.strip)


def texts(what: str) -> Any:
    """A list of non-blank strings (`what`: plural), stripped."""
    item = text(what)  # an item type built at runtime (Annotated)
    return before(lambda v: v if isinstance(v, list) else fail(f"expected a list of {what}, got {v!r}"), list[item])  # type: ignore[valid-type]


def choice(values: Iterable[str]) -> Any:
    """One of the words `values` ("expected one of last, best; got 'top'")."""
    ok = tuple(values)
    return _said(lambda v: isinstance(v, str) and v in ok, f"expected one of {', '.join(ok)}; got ")


def _said(test: Callable[[Any], bool], message: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """A value passing `test` (then `convert`ed); else `message` followed by the value."""

    def run(v: Any) -> Any:
        if not test(v):
            fail(message + repr(v))
        return convert(v) if convert else v

    return Annotated[Any, AfterValidator(run)]


# -- the one line ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with a file: where (`key`, dotted: "top.do[0].whose"), what kind of
    problem (`kind`: "unknown", "missing" or "value"), and the sentence that says it."""

    key: str
    kind: str
    message: str
    allowed: tuple[str, ...] = ()  # "unknown": the keys the table takes, in declaration order
    value: Any = None
    table: type[BaseModel] | None = None  # "unknown": the model of the table holding the key
    field: FieldInfo | None = None  # "missing", "value": the declaration of the key


def problem(error: ValidationError, model: type[BaseModel], unknown: Callable[[Problem], str] | None = None) -> Problem:
    """The first error of `error` (raised validating `model`) as a Problem; `unknown` phrases an
    unknown key (default: "unknown key; expected one of [...]", sorted)."""
    e = error.errors(include_url=False)[0]
    parts, field, table = _walk(model, e["loc"])
    ctx = e.get("ctx") or {}
    if e["type"] == PROBLEM:
        key = _dotted([*parts, *([ctx["key"]] if ctx.get("key") else [])])
        return Problem(key, "value", ctx["message"], value=e["input"], field=field)
    if e["type"] in (UNKNOWN, "extra_forbidden"):
        if e["type"] == UNKNOWN:  # Strict._known_keys: the loc is the table's, the key in ctx
            parts, value = [*parts, ctx["key"]], e["input"][ctx["key"]]
        else:  # pydantic's own check: the loc is the key's
            value = e["input"]
        allowed = tuple(f.alias or n for n, f in table.model_fields.items()) if table else ()
        p = Problem(_dotted(parts), "unknown", "", allowed, value, table)
        text = unknown(p) if unknown else f"unknown key; expected one of {sorted(allowed)}"
        return dataclasses.replace(p, message=text)
    key = _dotted(parts)
    expected = (
        field.description
        if field and field.description
        else "a table"
        if e["type"] in ("model_type", "dict_type")
        else e["msg"].lower()
    )
    if e["type"] == "missing":
        return Problem(key, "missing", f"missing; expected {expected}", field=field)
    return Problem(key, "value", f"expected {expected}, got {e['input']!r}", value=e["input"], field=field)


def _dotted(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _walk(
    model: type[BaseModel], loc: tuple[str | int, ...]
) -> tuple[list[str | int], FieldInfo | None, type[BaseModel] | None]:
    """Follow `loc` through the model's annotations: the key path as the file spells it (union
    members and validator steps dropped), the field at its end, and the table (model) holding it."""
    parts: list[str | int] = []
    tp: Any = model
    field: FieldInfo | None = None
    table: type[BaseModel] | None = None
    for step in loc:
        tp = _bare(tp)
        if _is_model(tp):
            table, field = tp, _field_of(tp, step)
            parts.append(step)
            tp = field.annotation if field else Any  # an unknown key: its table is `tp`
        elif _is_union(tp):
            tp = typing.get_args(tp)[0]  # a member's name: pydantic's, not the file's
        elif isinstance(step, int | str) and typing.get_origin(tp) in (list, tuple, dict):
            parts.append(step)
            args = typing.get_args(tp)
            tp, field = (args[-1] if args else Any), None  # list[X], tuple[X, ...], dict[str, X]: X
        # other steps (a validator's name, "function-after[...]") are pydantic's, not the file's
    end = _bare(tp)
    return parts, field, end if _is_model(end) else table


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _field_of(model: type[BaseModel], key: str | int) -> FieldInfo | None:
    return next((f for n, f in model.model_fields.items() if (f.alias or n) == key), None)


def _bare(tp: Any) -> Any:
    """`tp` without Annotated, and an optional's None."""
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    if _is_union(tp):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return _bare(members[0])
    return tp


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)
