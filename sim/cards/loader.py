"""Read protocol and variant files (TOML, see docs/cards.md) and validate them; sim/cards/compiler.py
compiles the cards to the engine's records. Every error names the file, the card and the key."""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field, fields
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)

from sim.cards import vocabulary as vocab
from sim.cards.reader import ReadError, read_box
from sim.engine import _core
from sim.engine._core import constants
from sim.inputs import InputFileError, describe_char, find_control_char, parse_toml, read_input_text
from sim.schema import Problem, Strict, before, check, fail, is_whole, one_of, problem, quoted, refuse, whole, words

if _core.VOCAB_DIGEST != vocab.engine_digest():
    raise ImportError(
        "the compiled engine was built from another card vocabulary (sim/cards/vocabulary/ "
        "changed since): rebuild it, e.g. python setup.py build_ext --inplace"
    )

K = constants()
BOXES = ("top", "middle", "bottom")


def _official_dir() -> Path:
    """datasets/protocols of the source tree, or of the installed `protolab_datasets` package."""
    here = Path(__file__).resolve().parent.parent.parent / "datasets" / "protocols"
    if here.is_dir():
        return here

    return Path(str(files("protolab_datasets") / "protocols"))


OFFICIAL_DIR = _official_dir()

SELECTOR_KEYS = set(vocab.SELECTOR_KEYS)
STEP_OPTION_KEYS = {
    "may",
    "if",
    "who",
    "to",
    "from",
    "face",
    "under",
    "side",
    "random",
    "ignore_middle",
    "into",
    "per",
    "count",
    "up_to",
}
KEYWORDS = sorted({v.word for v in vocab.VERBS})
# amounts a condition (`if = "hand > 1"`) or a value selector (`value_gt = "hand"`) can name
AMOUNTS = set(vocab.AMOUNTS)
NAMED_CONDITIONS = set(K["if"])
# passive keys that carry an amount (the record field it goes to), and those that are a flag
AMOUNT_PASSIVES = {
    "facedown_value": "facedown_value",
    "line_value": "line_value",
    "line_value_per_facedown": "per_facedown",
    "line_value_per_hand_card": "per_hand",
    "line_value_per_opponent_card": "per_opp_card",
}
FLAG_PASSIVES = (
    "play_faceup_anywhere",
    "ignore_middle",
    "skip_check_cache",
    "return_to_deck_top",
    "unflippable",
    "no_draw_with_hand",
    "no_opponent_middle_on_your_turn",
    "protocol_faceup_here",
)
DENY_PASSIVES = {"facedown": "deny_facedown_line", "any": "deny_any_line", "faceup": "deny_faceup"}
PASSIVE_KEYS = {*AMOUNT_PASSIVES, *FLAG_PASSIVES, "deny_play", "play_anywhere", "play_either_side", "deny"}
DENY_ACTIONS = tuple(w for w in K["deny"] if isinstance(w, str))


def parse_condition(text: str) -> tuple[str, str, str | int] | None:
    """`"hand > 1"` -> ("hand", ">", 1); `"your_value_here < opponent_value_here"` keeps names."""
    parts = text.split()
    if len(parts) != 3 or parts[1] not in K["ops"] or parts[0] not in AMOUNTS:
        return None
    rhs: str | int = parts[2]
    if parts[2].lstrip("-").isdigit():
        rhs = int(parts[2])
    elif parts[2] not in AMOUNTS:
        return None
    return parts[0], parts[1], rhs


class CardDataError(ValueError):
    """A card file that cannot be used; the message says where and what was expected."""


@dataclass
class Box:
    text: str = ""
    when: str | None = None
    by: str = "you"
    do: list[dict[str, Any]] = field(default_factory=list)
    passive: list[dict[str, Any]] = field(default_factory=list)
    during: str | None = None
    where: str | None = None
    covered_by: str | None = None
    read: bool = field(default=False, metadata={"key": False})  # `do`/`passive`/`when` read from `text`
    # why the reader refused the text of a text-only box ("" if it did not), and the words it could
    # not read, as written: such a box has no steps, and is never played as blank (sim/cards/refusals.py)
    refused: str = field(default="", metadata={"key": False})
    unread: tuple[str, ...] = field(default=(), metadata={"key": False})

    @property
    def encoded(self) -> bool:
        """Blank only when left empty on purpose (no text); otherwise read or written with steps."""
        return not self.refused and (not self.text or bool(self.do or self.passive))

    def as_data(self) -> dict[str, Any]:
        """The keys this box sets (those that differ from an empty box), as a file would write them:
        what a variant inherits and what `cards show` prints."""
        return {k: copy.deepcopy(getattr(self, k)) for k in BOX_KEYS if getattr(self, k) != getattr(EMPTY_BOX, k)}


# The keys a box may have: the fields of Box, declared once above.
BOX_KEYS = tuple(f.name for f in fields(Box) if f.metadata.get("key", True))
EMPTY_BOX = Box()


@dataclass
class CardSpec:
    name: str
    protocol: str
    set: str
    value: int
    boxes: dict[str, Box]
    source: str

    @property
    def encoded(self) -> bool:
        return all(b.encoded for b in self.boxes.values())

    def text(self, box: str) -> str:
        return self.boxes[box].text if box in self.boxes else ""

    def as_data(self) -> dict[str, Any]:
        """The card as a file would write it (every encoded key), e.g. `cards show --format json`."""
        boxes = {b: self.boxes[b].as_data() for b in BOXES if b in self.boxes}
        return {"name": self.name, "value": self.value, **boxes}


@dataclass
class ProtocolSpec:
    name: str
    set: str
    cards: list[CardSpec]
    source: str


@dataclass
class VariantSpec:
    """Replacements for official cards: each entry names the card it replaces."""

    name: str
    replaces: dict[str, dict[str, Any]]
    source: str


def _err(path: Path | str, card: str | None, key: str | None, msg: str) -> CardDataError:
    where = str(path)
    if card:
        where += f": {card}"
    if key:
        where += f": key '{key}'"
    return CardDataError(f"{where}: {msg}")


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed file (at most a few MB, a regular file); strings holding control characters are
    refused, since names and texts are printed to the terminal (an ESC would reach it)."""
    try:
        raw = parse_toml(read_input_text(path))
    except InputFileError as e:
        raise CardDataError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise CardDataError(f"{path}: not valid TOML: {e}") from None
    found = find_control_char(raw)
    if found:
        key, ch = found
        raise _err(path, None, key, f"contains the control character {describe_char(ch)}; expected printable text")
    return raw


# -- the schema: what each key of a card file accepts, declared once ---------------------------------


def _count_text(v: Any) -> bool:
    return isinstance(v, str) and (v in NAMED_CONDITIONS or parse_condition(v) is not None)


def _value_ok(v: Any) -> bool:
    return v in ("that", "stated") or (isinstance(v, list) and bool(v) and all(is_whole(x) and 0 <= x <= 15 for x in v))


class PerTable(Strict):
    """A step's quantity, `per = { face = "down" }`: what the step's number is counted for (docs/cards.md,
    Quantities). Field cards are chosen by the field verbs' selectors, covered ones included unless
    `covered` says otherwise; a hand, trash or deck is the text's player's unless `whose` says."""

    of: one_of(K["of"]) = "cards"
    whose: one_of(K["whose"]) | None = None
    covered: one_of(K["covered"], 'true, false or "any"') | None = None
    face: one_of(K["face"]) | None = None
    other: Annotated[bool | None, Field(description="true or false")] = None
    line: words("any", "this", "other") | None = None
    protocol: words("same", "other") | None = None

    @model_validator(mode="after")
    def _fits(self) -> PerTable:
        card_keys = ("covered", "face", "other", "protocol")
        if self.of != "cards" and any(getattr(self, k) is not None for k in card_keys):
            fail(f"'{self.of}' counts no field cards: covered, face, other and protocol select field cards", "of")
        if self.of not in ("cards", "lines") and self.line is not None:
            fail(f"'{self.of}' is not counted by line", "line")
        if self.of == "lines" and self.whose is not None:
            fail("lines belong to both sides: no whose", "whose")
        if self.of == "lines" and self.line == "this":
            fail('this line is 1 line: write the number, or line = "other"', "line")
        return self


# The values each selector and option of a step accepts (`from` and `mode` depend on the verb: StepTable).
STEP_VALUES: dict[str, Any] = {
    "whose": one_of(K["whose"]),
    "covered": one_of(K["covered"], 'true, false or "any"'),
    "face": one_of(K["face"]),
    "other": bool,
    "line": one_of(K["line"]),
    "value": check(_value_ok, 'a list of values 0-15, "that" or "stated"'),
    "value_gt": one_of(AMOUNTS),
    "value_lt": one_of(AMOUNTS),
    "min_cards": whole(0, 36, got=False),
    "pick": one_of(K["pick"]),
    "each": one_of(K["each"]),
    "protocol": one_of(("same", "other")),
    "may": bool,
    "if": check(
        _count_text,
        f'one of {sorted(NAMED_CONDITIONS)} or a comparison "AMOUNT OP AMOUNT|N" '
        f"with AMOUNT in {sorted(AMOUNTS)} and OP in {sorted(K['ops'])}",
    ),
    "who": one_of(("you", "opponent")),
    "to": one_of(K["to"]),
    "from": Any,
    "under": one_of(("this",)),
    "side": one_of(("opponent",)),
    "random": bool,
    "ignore_middle": bool,
    "into": one_of(("opponent_trash",)),
    "per": PerTable,
    "count": PerTable,
    "up_to": bool,
}
assert set(STEP_VALUES) == SELECTOR_KEYS | STEP_OPTION_KEYS, "a selector or option without its values"


def _either(v: Any) -> Any:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(b, list) and b for b in v)):
        fail("expected two non-empty arrays of steps")
    return v


def _verb_value(word: str, v: Any, source: Any) -> None:
    """The verb key's value: a count the (engine) verb takes, or one of its literal values (the engine
    verb is picked by the step's `from`)."""
    row = vocab.engine_verb(word, source)
    if row.value == vocab.STEPS:
        return  # either: its branches are steps (the field's type)
    if row.value != vocab.COUNT:
        if v not in row.value or (v is True) != (True in row.value):
            fail("expected " + quoted(row.value), word)
    elif isinstance(v, str) and v in vocab.COUNT_WORDS and v not in row.counts:
        fail(f"count {v!r} does not apply to '{word}'; expected a number or one of {list(row.counts)}", word)
    elif not ((is_whole(v) and 1 <= v <= 30) or (not isinstance(v, bool) and v in row.counts)):
        fail(f"expected a count 1-30 or one of {list(row.counts)}, got {v!r}", word)


class StepBase(Strict):
    """One step, `{ draw = 1, whose = "opponent" }`: exactly one verb key, and the selectors and options
    (and `mode`, for a verb with modes) it takes. Keys are named as written (`from`, `if` and `return`
    are aliases)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, step: Any) -> Any:
        if not isinstance(step, dict):
            fail(f"expected a table like {{ draw = 1 }}, got {step!r}")
        verbs = [k for k in step if k in KEYWORDS]
        if len(verbs) != 1:
            fail(f"expected exactly one verb ({', '.join(KEYWORDS)}), got {sorted(step)}")
        allowed = SELECTOR_KEYS | STEP_OPTION_KEYS | {verbs[0]} | ({"mode"} if vocab.by_word(verbs[0]).modes else set())
        unknown = [k for k in step if k not in allowed]
        if unknown:
            fail(f"unknown key for verb '{verbs[0]}'; expected one of {sorted(allowed - {verbs[0]})}", unknown[0])
        return step

    @model_validator(mode="after")
    def _verb_rules(self) -> StepBase:
        """What depends on the verb: its value, its sources (`from`) and its mode."""
        given = self.model_dump(by_alias=True, exclude_none=True)
        word = next(k for k in given if k in KEYWORDS)
        row = vocab.by_word(word)
        _verb_value(word, given[word], given.get("from"))
        sources = vocab.sources_of(word)
        if "from" in given and given["from"] not in sources:
            fail(f"expected one of {sorted(sources)}, got {given['from']!r}", "from")
        if row.modes and "mode" not in given:
            fail(f"'{word}' needs a mode: one of {sorted(row.modes)}", "mode")
        if "mode" in given and given["mode"] not in row.modes:
            fail(f"expected one of {sorted(row.modes)}, got {given['mode']!r}", "mode")
        _quantity_rules(word, given)
        return self


def _quantity_rules(word: str, given: dict[str, Any]) -> None:
    """`per` multiplies the verb's number; `count` is what a comparison names as "count", and is
    given exactly when one does."""
    if "per" in given and not is_whole(given[word]):
        fail(f"'per' counts the verb's number: write a number, e.g. {word} = 1, got {given[word]!r}", "per")
    if given.get("up_to") and not (is_whole(given[word]) and vocab.by_word(word).on_field):
        fail(f"'up_to' is a choice of 0 up to a number of field cards: write {word} = N on a field verb", "up_to")
    named = [k for k in ("value_gt", "value_lt", word) if given.get(k) == "count"]
    cond = parse_condition(given["if"]) if isinstance(given.get("if"), str) else None
    named += ["if"] if cond is not None and "count" in (cond[0], cond[2]) else []
    if named and "count" not in given:
        fail("names 'count', but the step has no count = { ... } saying what to count", named[0])
    if "count" in given and not named:
        fail('nothing in the step names it (if = "count >= 2", value_gt = "count", draw = "count")', "count")


def _field(key: str, t: Any) -> tuple[Any, None]:
    return Annotated[t | None, Field(alias=key, description="true or false" if t is bool else None)], None


_STEP_FIELDS: dict[str, Any] = {
    "mode_": _field("mode", Any),
    **{f"{k}_": _field(k, t) for k, t in STEP_VALUES.items()},
    **{f"{w}_": _field(w, before(_either, list[list["StepTable"]]) if w == "either" else Any) for w in KEYWORDS},
}
StepTable = create_model("StepTable", __base__=StepBase, **_STEP_FIELDS)
StepTable.model_rebuild(_types_namespace={"StepTable": StepTable})  # either's branches are steps


Amount = check(is_whole, "a whole number", got=False) | None
DenyProtocol = STEP_VALUES["protocol"]
DenyCovered = STEP_VALUES["covered"]
Flag = Annotated[bool | None, Field(description="true or false")]


class Modifier(Strict):
    """One passive modifier, `{ line_value = 1, whose = "opponent" }`."""

    facedown_value: Amount = None
    line_value: Amount = None
    line_value_per_facedown: Amount = None
    line_value_per_hand_card: Amount = None
    line_value_per_opponent_card: Amount = None
    play_faceup_anywhere: Flag = None
    ignore_middle: Flag = None
    skip_check_cache: Flag = None
    return_to_deck_top: Flag = None
    unflippable: Flag = None
    no_draw_with_hand: Flag = None
    no_opponent_middle_on_your_turn: Flag = None
    protocol_faceup_here: Flag = None
    deny_play: words("facedown", "faceup", "any") | None = None
    play_anywhere: Flag = None
    play_either_side: one_of((True, "any_face"), 'true (face-up) or "any_face"', got=False) | None = None
    deny: words(*DENY_ACTIONS) | None = None
    face: words("up", "down", "any") | None = None
    by: words("you", "opponent", "any") | None = None
    whose: words("you", "opponent", "any") | None = None
    scope: words("this_line", "this_stack", "all") | None = None
    if_: Annotated[words("other_protocol_faceup_in_stack") | None, Field(alias="if")] = None
    # a restriction's card selectors beyond whose and face: the field verbs' own keys
    value: check(_deny_values_ok, "a list of values 0-7", got=False) | None = None
    protocol: DenyProtocol | None = None
    covered: DenyCovered | None = None

    @model_validator(mode="after")
    def _restriction(self) -> Modifier:
        """A restriction's keys fit its action; `face`, `by` and `whose = "any"` are a restriction's."""
        if self.deny is None:
            self._no_restriction_keys()
        else:
            self._restriction_keys_fit()
        return self

    def _no_restriction_keys(self) -> None:
        """A modifier that is no restriction has none of a restriction's own keys."""
        for key in ("face", "by", *DENY_SELECTORS):
            if getattr(self, key) is not None:
                fail(f"'{key}' belongs to a restriction (deny = ...)", key)
        if self.whose == "any":
            fail('whose = "any" belongs to a restriction (deny = ...)', "whose")

    def _restriction_keys_fit(self) -> None:
        """Each key a restriction gives applies to its action (deny = ...)."""
        for key in ("face", *DENY_SELECTORS):
            if getattr(self, key) is not None and self.deny not in vocab.DENY_ON_FIELD:
                fail(f"a {self.deny} restriction selects no field cards: no '{key}'", key)
        if self.deny in ("shift_from", "shift_to") and self.scope != "this_line":
            fail(f'a {self.deny} restriction is about this line: scope = "this_line"', "scope")
        if self.whose is not None and self.deny not in (*vocab.DENY_ON_CARDS, "rearrange"):
            fail(f"a {self.deny} restriction selects no cards: no 'whose' (use 'by')", "whose")
        if self.scope not in (None, "this_line", "all"):
            fail('a restriction\'s scope is "this_line" or "all"', "scope")
        if self.scope == "this_line" and self.deny not in vocab.DENY_IN_LINE:
            fail(f'a {self.deny} restriction has no line: no scope = "this_line"', "scope")


def _deny_values_ok(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(is_whole(x) and 0 <= x <= 7 for x in v)


DENY_SELECTORS = ("value", "protocol", "covered")


def _one_modifier(mod: Any) -> Any:
    if not isinstance(mod, dict) or not (set(mod) & PASSIVE_KEYS):
        fail(f"expected a table with one of {sorted(PASSIVE_KEYS)}")
    return mod


class BoxTable(Strict):
    """A top, middle or bottom box: its text and what it does (its trigger, steps and modifiers)."""

    position: ClassVar[str] = ""
    text: Annotated[str, Field(description="a string")] = ""
    when: one_of(K["when"]) | None = None
    by: words("you", "opponent", "any") = "you"
    during: words("your_turn", "opponent_turn") | None = None
    where: words("this_line") | None = None
    covered_by: words("same_protocol") | None = None
    do: Annotated[list[StepTable], Field(description="an array of steps")] = []
    passive: Annotated[list[before(_one_modifier, Modifier)], Field(description="an array of modifiers")] = []

    @model_validator(mode="after")
    def _triggered(self) -> BoxTable:
        if self.position != "middle" and self.do and self.when is None:
            fail("steps in a top or bottom box need a trigger (when = ...)", "when")
        if sum(m.deny is not None for m in self.passive) > 1:
            fail("one restriction (deny = ...) per box", "passive")
        return self


class MiddleBox(BoxTable):
    position = "middle"
    when: refuse("a middle box has no trigger; it runs when played or uncovered") | None = None


BOX_TABLES = {b: MiddleBox if b == "middle" else BoxTable for b in BOXES}


def _problem(e: ValidationError, model: type[BaseModel]) -> tuple[str, str]:
    """(key, message) of the first problem pydantic found; an unknown key lists the keys its table takes."""
    p = problem(e, model, _unknown)
    return p.key, p.message


def _unknown(p: Problem) -> str:
    if p.table is Modifier:
        return f"unknown key; expected one of {sorted(PASSIVE_KEYS)}"
    return f"unknown key; expected one of {sorted(p.allowed)}"


def parse_box(path: Path | str, card: str, box: str, raw: Any, protocol: str = "") -> Box:
    """One box; given the card's `protocol`, a box with `text` and no `do` or `passive` is read from
    its text (sim/cards/reader.py)."""
    if not isinstance(raw, dict):
        raise _err(path, card, box, "expected a table with text/when/do/passive")
    if protocol and isinstance(raw.get("text"), str) and raw["text"] and not {"do", "passive"} & set(raw):
        return _read_box(path, card, box, raw, protocol)
    try:
        BOX_TABLES[box].model_validate(raw)
    except ValidationError as e:
        key, msg = _problem(e, BOX_TABLES[box])
        raise _err(path, card, f"{box}.{key}", msg) from None
    return Box(**{k: raw[k] for k in BOX_KEYS if k in raw})


def _read_box(path: Path | str, card: str, box: str, raw: dict[str, Any], protocol: str) -> Box:
    """A text-only box: its keys as read from the text (keys the file gives win), then checked
    like any box. A text the reader refuses gives a box marked refused (the other keys it gives
    still checked), so that every refused box of a file can be reported at once."""
    try:
        keys = read_box(raw["text"], protocol)
    except ReadError as e:
        refused = parse_box(path, card, box, raw)
        refused.refused, refused.unread = str(e), tuple(raw["text"][a:b] for a, b in e.unread)
        return refused
    parsed = parse_box(path, card, box, {**keys, **raw})
    parsed.read = True
    return parsed


BoxRaw = Annotated[dict[str, Any], Field(description="a table with text/when/do/passive")]


class CardTable(Strict):
    """One [[cards]] table of a protocol file (or a variant's replacement, merged onto its card); its
    boxes are checked one by one, after reading a text-only box (parse_box)."""

    value: whole(0, 15)
    name: Annotated[str, Field(description="a card name")] = ""
    replaces: str = ""
    top: BoxRaw = {}
    middle: BoxRaw = {}
    bottom: BoxRaw = {}


def parse_card(path: Path, protocol: str, set_name: str, raw: Any, i: int) -> CardSpec:
    if not isinstance(raw, dict):
        raise _err(path, f"{protocol} card #{i + 1}", None, "expected a [[cards]] table")
    try:
        CardTable.model_validate(raw)
    except ValidationError as e:
        p = problem(e, CardTable, lambda _: "unknown key; expected value, name, top, middle or bottom")
        value = raw.get("value")
        card = (
            raw["name"]
            if isinstance(raw.get("name"), str) and p.key != "name"
            else f"{protocol} {value}"
            if is_whole(value) and 0 <= value <= 15 and p.key != "value"
            else f"{protocol} card #{i + 1}"
        )
        raise _err(path, card, p.key, p.message) from None
    value = raw["value"]
    name = raw.get("name", f"{protocol} {value}")
    boxes = {b: parse_box(path, name, b, raw[b], protocol) for b in BOXES if b in raw}
    return CardSpec(name=name, protocol=protocol, set=set_name, value=value, boxes=boxes, source=str(path))


class ProtocolFile(Strict):
    """A protocol file: its name, set and six [[cards]] (each checked by CardTable, in parse_card)."""

    protocol: check(lambda v: isinstance(v, str) and bool(v.strip()), "a protocol name", got=False)
    set: Annotated[str, Field(description="a set name")]
    cards: before(
        lambda v: (
            v
            if isinstance(v, list) and len(v) == 6
            else fail(f"expected exactly 6 [[cards]], got {len(v) if isinstance(v, list) else 'no'}")
        ),
        list[Any],
    )


_REPLACES = 'the name of the card to replace, e.g. "Fire 1"'


class Replacement(Strict):
    """A [[cards]] table of a variant file: the card it replaces; its other keys are the card's and
    are checked once merged onto it (sim/pool.py)."""

    model_config = ConfigDict(extra="allow")
    replaces: Annotated[check(lambda v: isinstance(v, str), _REPLACES, got=False), Field(description=_REPLACES)]


_AT_LEAST_ONE = 'at least one [[cards]] table with replaces = "Card name"'


class VariantFile(Strict):
    """A variant file: its name and the cards it replaces."""

    variant: Annotated[str, Field(description="the variant's name")]
    cards: Annotated[
        before(lambda v: v if isinstance(v, list) and v else fail(f"expected {_AT_LEAST_ONE}"), list[Replacement]),
        Field(description=_AT_LEAST_ONE),
    ]


def _file_problem(
    path: Path, raw: dict[str, Any], e: ValidationError, model: type[BaseModel], unknown: str
) -> CardDataError:
    """A problem of a protocol or variant file's top level, or of one of its [[cards]] ("card #2")."""
    p = problem(e, model, lambda _: unknown)
    if p.kind == "missing" and model is ProtocolFile:
        return _err(
            path,
            None,
            p.key,
            "missing; a protocol file needs protocol, set and [[cards]] "
            "(a variant file needs variant and [[cards]] with replaces)",
        )
    if p.key == "cards" and model is ProtocolFile and isinstance(raw.get("protocol"), str):
        return _err(path, raw["protocol"], p.key, p.message)
    if p.key.startswith("cards["):
        n, _, key = p.key.removeprefix("cards[").partition("]")
        return _err(path, f"card #{int(n) + 1}", key.lstrip(".") or None, p.message)
    return _err(path, None, p.key, p.message)


def load_file(path: str | Path) -> ProtocolSpec | VariantSpec:
    """Parse one card file: a protocol (`protocol = ...`) or a variant (`variant = ...`)."""
    path = Path(path)
    raw = read_toml(path)
    if "variant" in raw:
        return _load_variant(path, raw)
    try:
        ProtocolFile.model_validate(raw)
    except ValidationError as e:
        raise _file_problem(path, raw, e, ProtocolFile, "unknown key; expected protocol, set, cards") from None
    name, set_name = raw["protocol"], raw["set"]
    cards = [parse_card(path, name, set_name, c, i) for i, c in enumerate(raw["cards"])]
    _distinct(path, cards)
    return ProtocolSpec(name=name, set=set_name, cards=cards, source=str(path))


def _distinct(path: Path, cards: list[CardSpec]) -> None:
    """The six cards of a protocol have distinct names and values."""
    names = [c.name for c in cards]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise _err(path, sorted(dup)[0], "name", "two cards have this name; give them distinct values or names")
    values = [c.value for c in cards]
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        named = [c.name for c in cards if c.value == twice[0]]
        raise _err(
            path,
            named[1],
            "value",
            f"value {twice[0]} is also {named[0]}'s; the six cards of a protocol "
            "have distinct values (a variant file may give a card another card's value)",
        )


def _load_variant(path: Path, raw: dict[str, Any]) -> VariantSpec:
    try:
        VariantFile.model_validate(raw)
    except ValidationError as e:
        raise _file_problem(
            path, raw, e, VariantFile, "unknown key in a variant file; expected variant and cards"
        ) from None
    out: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(raw["cards"]):
        target = c["replaces"].strip()
        earlier = next((n for n in out if n.lower() == target.lower()), None)
        if earlier is not None:
            raise _err(
                path,
                f"card #{i + 1}",
                "replaces",
                f"{target!r} is already replaced by an earlier [[cards]] "
                "table of this file; put both changes in one table",
            )
        out[target] = c
    return VariantSpec(name=raw["variant"], replaces=out, source=str(path))


def official_files() -> list[Path]:
    return sorted(OFFICIAL_DIR.glob("*.toml"))
