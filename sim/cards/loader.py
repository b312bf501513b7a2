"""Read protocol and variant files (TOML, see docs/cards.md), validate them, and compile them to
the engine's step records. Every error names the file, the card and the key."""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field, fields
from importlib.resources import files
from pathlib import Path
from typing import Any

from sim.cards import vocabulary as vocab
from sim.cards.reader import ReadError, read_box
from sim.engine import _core
from sim.engine._core import constants
from sim.inputs import InputFileError, describe_char, find_control_char, parse_toml, read_input_text

if _core.VOCAB_DIGEST != vocab.engine_digest():
    raise ImportError("the compiled engine was built from another card vocabulary (sim/cards/vocabulary.py "
                      "changed since): rebuild it, e.g. python setup.py build_ext --inplace")

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
STEP_OPTION_KEYS = {"may", "if", "who", "to", "from", "face", "under", "side", "random",
                    "ignore_middle", "into"}
KEYWORDS = sorted({v.word for v in vocab.VERBS})
# amounts a condition (`if = "hand > 1"`) or a value selector (`value_gt = "hand"`) can name
AMOUNTS = set(vocab.AMOUNTS)
NAMED_CONDITIONS = set(K["if"])
# passive keys that carry an amount (the record field it goes to), and those that are a flag
AMOUNT_PASSIVES = {"facedown_value": "facedown_value", "line_value": "line_value",
                   "line_value_per_facedown": "per_facedown", "line_value_per_hand_card": "per_hand",
                   "line_value_per_opponent_card": "per_opp_card"}
FLAG_PASSIVES = ("play_faceup_anywhere", "ignore_middle", "skip_check_cache", "return_to_deck_top",
                 "unflippable", "no_draw_with_hand", "no_opponent_middle_on_your_turn",
                 "protocol_faceup_here")
DENY_PASSIVES = {"facedown": "deny_facedown_line", "any": "deny_any_line", "faceup": "deny_faceup"}
PASSIVE_KEYS = {*AMOUNT_PASSIVES, *FLAG_PASSIVES, "deny_play", "play_anywhere", "play_either_side"}


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
    read: bool = field(default=False, metadata={"key": False})   # `do`/`passive`/`when` read from `text`

    @property
    def encoded(self) -> bool:
        return not self.text or bool(self.do or self.passive)

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


def _check_step(path: Path, card: str, box: str, step: Any, i: int) -> None:
    key = f"{box}.do[{i}]"
    if not isinstance(step, dict):
        raise _err(path, card, key, f"expected a table like {{ draw = 1 }}, got {step!r}")
    verbs = [k for k in step if k in KEYWORDS]
    if len(verbs) != 1:
        raise _err(path, card, key, f"expected exactly one verb ({', '.join(KEYWORDS)}), "
                   f"got {sorted(step)}")
    verb = verbs[0]
    count = step[verb]
    row = vocab.by_word(verb)
    allowed = SELECTOR_KEYS | STEP_OPTION_KEYS | {verb} | ({"mode"} if row.modes else set())
    for k in step:
        if k not in allowed:
            raise _err(path, card, f"{key}.{k}", f"unknown key for verb '{verb}'; "
                       f"expected one of {sorted(allowed - {verb})}")
    if row.value == vocab.STEPS:
        if not (isinstance(count, list) and len(count) == 2 and all(isinstance(b, list) and b for b in count)):
            raise _err(path, card, f"{key}.either", "expected two non-empty arrays of steps")
        for b, branch in enumerate(count):
            for j, s in enumerate(branch):
                _check_step(path, card, f"{box}.do[{i}].either[{b}]", s, j)
        return
    _check_verb_value(path, card, key, step, verb)
    checks = {
        "whose": set(K["whose"]), "face": set(K["face"]), "line": set(K["line"]),
        "pick": set(K["pick"]), "each": set(K["each"]), "to": set(K["to"]), "from": set(vocab.sources_of(verb)),
        "mode": set(row.modes),
        "who": {"you", "opponent"}, "under": {"this"}, "side": {"opponent"},
        "protocol": {"same", "other"}, "into": {"opponent_trash"},
    }
    for k, ok in checks.items():
        if k in step and step[k] not in ok:
            raise _err(path, card, f"{key}.{k}", f"expected one of {sorted(ok)}, got {step[k]!r}")
    if "if" in step:
        c = step["if"]
        if not isinstance(c, str) or (c not in NAMED_CONDITIONS and parse_condition(c) is None):
            raise _err(path, card, f"{key}.if", f"expected one of {sorted(NAMED_CONDITIONS)} or a "
                       f"comparison \"AMOUNT OP AMOUNT|N\" with AMOUNT in {sorted(AMOUNTS)} and OP "
                       f"in {sorted(K['ops'])}, got {c!r}")
    for k in ("value_gt", "value_lt"):
        if k in step and step[k] not in AMOUNTS:
            raise _err(path, card, f"{key}.{k}", f"expected one of {sorted(AMOUNTS)}, got {step[k]!r}")
    if "covered" in step and step["covered"] not in K["covered"]:
        raise _err(path, card, f"{key}.covered", f"expected true, false or \"any\", got {step['covered']!r}")
    for k in ("may", "other", "random", "ignore_middle"):
        if k in step and not isinstance(step[k], bool):
            raise _err(path, card, f"{key}.{k}", f"expected true or false, got {step[k]!r}")
    if "value" in step:
        v = step["value"]
        if not (v in ("that", "stated") or
                (isinstance(v, list) and v and all(isinstance(x, int) and 0 <= x <= 15 for x in v))):
            raise _err(path, card, f"{key}.value", f"expected a list of values 0-15, \"that\" or "
                       f"\"stated\", got {v!r}")
    if "min_cards" in step and not (isinstance(step["min_cards"], int) and 0 <= step["min_cards"] <= 36):
        raise _err(path, card, f"{key}.min_cards", "expected a whole number 0-36")
    if row.modes and "mode" not in step:
        raise _err(path, card, f"{key}.mode", f"'{verb}' needs a mode: one of {sorted(row.modes)}")


def _check_verb_value(path: Path, card: str, key: str, step: dict[str, Any], verb: str) -> None:
    """The verb key's value: a count the (engine) verb takes, or one of its literal values."""
    count = step[verb]
    row = vocab.engine_verb(verb, step.get("from"))
    if row.value != vocab.COUNT:
        ok = row.value
        if count not in ok or (count is True) != (True in ok):
            raise _err(path, card, f"{key}.{verb}", "expected " + " or ".join(
                "true" if v is True else f'"{v}"' for v in ok))
        return
    if isinstance(count, str) and count in vocab.COUNT_WORDS and count not in row.counts:
        raise _err(path, card, f"{key}.{verb}", f"count {count!r} does not apply to '{verb}'; "
                   f"expected a number or one of {list(row.counts)}")
    if isinstance(count, bool) or not ((isinstance(count, int) and 1 <= count <= 30) or count in row.counts):
        raise _err(path, card, f"{key}.{verb}", f"expected a count 1-30 or one of {list(row.counts)}, "
                   f"got {count!r}")


def _check_passive(path: Path, card: str, box: str, mod: Any, i: int) -> None:
    key = f"{box}.passive[{i}]"
    if not isinstance(mod, dict) or not (set(mod) & PASSIVE_KEYS):
        raise _err(path, card, key, f"expected a table with one of {sorted(PASSIVE_KEYS)}")
    extra = set(mod) - PASSIVE_KEYS - {"whose", "scope", "if"}
    if extra:
        raise _err(path, card, f"{key}.{sorted(extra)[0]}", f"unknown key; expected one of {sorted(PASSIVE_KEYS)}")
    if "deny_play" in mod and mod["deny_play"] not in DENY_PASSIVES:
        raise _err(path, card, f"{key}.deny_play", "expected \"facedown\", \"faceup\" or \"any\"")
    for k in AMOUNT_PASSIVES:
        if k in mod and (isinstance(mod[k], bool) or not isinstance(mod[k], int)):
            raise _err(path, card, f"{key}.{k}", "expected a whole number")
    if "play_either_side" in mod and mod["play_either_side"] not in (True, "any_face"):
        raise _err(path, card, f"{key}.play_either_side", "expected true (face-up) or \"any_face\"")
    if "if" in mod and mod["if"] != "other_protocol_faceup_in_stack":
        raise _err(path, card, f"{key}.if", "expected \"other_protocol_faceup_in_stack\"")
    if "whose" in mod and mod["whose"] not in ("you", "opponent"):
        raise _err(path, card, f"{key}.whose", "expected \"you\" or \"opponent\"")
    if "scope" in mod and mod["scope"] not in ("this_line", "this_stack", "all"):
        raise _err(path, card, f"{key}.scope", "expected \"this_line\", \"this_stack\" or \"all\"")


def parse_box(path: Path, card: str, box: str, raw: Any, protocol: str = "") -> Box:
    """One box; given the card's `protocol`, a box with `text` and no `do` or `passive` is read from
    its text (sim/cards/reader.py)."""
    if not isinstance(raw, dict):
        raise _err(path, card, box, "expected a table with text/when/do/passive")
    if protocol and isinstance(raw.get("text"), str) and raw["text"] and not {"do", "passive"} & set(raw):
        return _read_box(path, card, box, raw, protocol)
    extra = set(raw) - set(BOX_KEYS)
    if extra:
        raise _err(path, card, f"{box}.{sorted(extra)[0]}", f"unknown key; expected one of {sorted(BOX_KEYS)}")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise _err(path, card, f"{box}.text", "expected a string")
    when = raw.get("when")
    if when is not None:
        if box == "middle":
            raise _err(path, card, "middle.when", "a middle box has no trigger; it runs when played or uncovered")
        if when not in K["when"]:
            raise _err(path, card, f"{box}.when", f"expected one of {sorted(K['when'])}, got {when!r}")
    by = raw.get("by", "you")
    if by not in ("you", "opponent", "any"):
        raise _err(path, card, f"{box}.by", "expected \"you\", \"opponent\" or \"any\"")
    for k, ok in (("during", ("your_turn", "opponent_turn")), ("where", ("this_line",)),
                  ("covered_by", ("same_protocol",))):
        if k in raw and raw[k] not in ok:
            raise _err(path, card, f"{box}.{k}", "expected " + " or ".join(f'"{v}"' for v in ok))
    do = raw.get("do", [])
    if not isinstance(do, list):
        raise _err(path, card, f"{box}.do", "expected an array of steps")
    for i, s in enumerate(do):
        _check_step(path, card, box, s, i)
    passive = raw.get("passive", [])
    if not isinstance(passive, list):
        raise _err(path, card, f"{box}.passive", "expected an array of modifiers")
    for i, m in enumerate(passive):
        _check_passive(path, card, box, m, i)
    if box != "middle" and do and when is None:
        raise _err(path, card, f"{box}.when", "steps in a top or bottom box need a trigger (when = ...)")
    return Box(**{k: raw[k] for k in BOX_KEYS if k in raw})


def _read_box(path: Path, card: str, box: str, raw: dict[str, Any], protocol: str) -> Box:
    """A text-only box: its keys as read from the text (keys the file gives win), then checked
    like any box."""
    try:
        keys = read_box(raw["text"], protocol)
    except ReadError as e:
        raise _err(path, card, f"{box}.text", f"{e}; write the box with do/passive (docs/cards.md)") from None
    parsed = parse_box(path, card, box, {**keys, **raw})
    parsed.read = True
    return parsed


def parse_card(path: Path, protocol: str, set_name: str, raw: Any, i: int) -> CardSpec:
    if not isinstance(raw, dict):
        raise _err(path, f"{protocol} card #{i + 1}", None, "expected a [[cards]] table")
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
        raise _err(path, f"{protocol} card #{i + 1}", "value", f"expected a whole number 0-15, got {value!r}")
    name = raw.get("name", f"{protocol} {value}")
    extra = set(raw) - {"value", "name", "replaces", *BOXES}
    if extra:
        raise _err(path, name, sorted(extra)[0], "unknown key; expected value, name, top, middle or bottom")
    boxes = {b: parse_box(path, name, b, raw[b], protocol) for b in BOXES if b in raw}
    return CardSpec(name=name, protocol=protocol, set=set_name, value=value, boxes=boxes, source=str(path))


def load_file(path: str | Path) -> ProtocolSpec | VariantSpec:
    """Parse one card file: a protocol (`protocol = ...`) or a variant (`variant = ...`)."""
    path = Path(path)
    raw = read_toml(path)
    if "variant" in raw:
        return _load_variant(path, raw)
    for k in ("protocol", "set", "cards"):
        if k not in raw:
            raise _err(path, None, k, "missing; a protocol file needs protocol, set and [[cards]] "
                       "(a variant file needs variant and [[cards]] with replaces)")
    extra = set(raw) - {"protocol", "set", "cards"}
    if extra:
        raise _err(path, None, sorted(extra)[0], "unknown key; expected protocol, set, cards")
    name, set_name = raw["protocol"], raw["set"]
    if not isinstance(name, str) or not name.strip():
        raise _err(path, None, "protocol", "expected a protocol name")
    if not isinstance(raw["cards"], list) or len(raw["cards"]) != 6:
        n = len(raw["cards"]) if isinstance(raw["cards"], list) else "no"
        raise _err(path, name, "cards", f"expected exactly 6 [[cards]], got {n}")
    cards = [parse_card(path, name, set_name, c, i) for i, c in enumerate(raw["cards"])]
    names = [c.name for c in cards]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise _err(path, sorted(dup)[0], "name", "two cards have this name; give them distinct values or names")
    values = [c.value for c in cards]
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        named = [c.name for c in cards if c.value == twice[0]]
        raise _err(path, named[1], "value", f"value {twice[0]} is also {named[0]}'s; the six cards of a protocol "
                   "have distinct values (a variant file may give a card another card's value)")
    return ProtocolSpec(name=name, set=set_name, cards=cards, source=str(path))


def _load_variant(path: Path, raw: dict[str, Any]) -> VariantSpec:
    extra = set(raw) - {"variant", "cards"}
    if extra:
        raise _err(path, None, sorted(extra)[0], "unknown key in a variant file; expected variant and cards")
    cards = raw.get("cards")
    if not isinstance(cards, list) or not cards:
        raise _err(path, None, "cards", "expected at least one [[cards]] table with replaces = \"Card name\"")
    out: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(cards):
        if not isinstance(c, dict) or not isinstance(c.get("replaces"), str):
            raise _err(path, f"card #{i + 1}", "replaces", "expected the name of the card to replace, e.g. \"Fire 1\"")
        target = c["replaces"].strip()
        earlier = next((n for n in out if n.lower() == target.lower()), None)
        if earlier is not None:
            raise _err(path, f"card #{i + 1}", "replaces", f"{target!r} is already replaced by an earlier [[cards]] "
                       "table of this file; put both changes in one table")
        out[target] = c
    return VariantSpec(name=str(raw["variant"]), replaces=out, source=str(path))


def official_files() -> list[Path]:
    return sorted(OFFICIAL_DIR.glob("*.toml"))


# -- compiling to engine records ------------------------------------------------------------------

def _step_record(step: dict[str, Any], out: list[dict[str, int]]) -> dict[str, int]:
    """The engine record for one step; an `either` compiles its alternatives onto `out`."""
    verb = next(k for k in step if k in KEYWORDS)
    count = step[verb]
    row = vocab.engine_verb(verb, step.get("from"))
    rec = vocab.new_step_record()
    rec["verb"] = row.code
    if row.modes:
        rec["mode"] = list(row.modes).index(step["mode"])
    if isinstance(count, int) and not isinstance(count, bool):
        rec["count_kind"], rec["n"] = K["count"]["n"], count
    elif isinstance(count, str) and count in K["count"]:
        rec["count_kind"], rec["n"] = K["count"][count], 1
    else:
        rec["n"] = 1
    rec["whose"] = K["whose"][step.get("whose", "any")]
    rec["covered"] = K["covered"][step.get("covered", False)]
    rec["face"] = K["face"][step.get("face", "any")]
    rec["other"] = int(step.get("other", False))
    rec["line"] = K["line"][step.get("line", "any")]
    value = step.get("value", [])
    if isinstance(value, list):
        rec["value_mask"] = sum(1 << v for v in value)
    else:
        rec["value_op"], rec["value_expr"] = K["ops"]["=="], K["count"][
            "value_of_that" if value == "that" else "stated"]
    for key, op in (("value_gt", ">"), ("value_lt", "<")):
        if key in step:
            rec["value_op"], rec["value_expr"] = K["ops"][op], K["count"][step[key]]
    rec["min_cards"] = step.get("min_cards", 0)
    rec["pick"] = K["pick"].get(step.get("pick"), 0)
    rec["each"] = K["each"].get(step.get("each"), 0)
    rec["to"] = K["to"][step.get("to", "any")]
    rec["source"] = K["from"][step.get("from", "hand")]
    rec["face_down"] = int(verb == "play" and (step.get("face") == "down"
                                               or step.get("from") in ("deck_top", "opponent_deck")))
    rec["under_this"] = int(step.get("under") == "this")
    rec["who_opp"] = int(step.get("who") == "opponent")
    rec["may"] = int(step.get("may", False))
    cond = step.get("if")
    if cond in K["if"]:
        rec["cond"] = K["if"][cond]
    elif cond is not None:
        a, op, b = parse_condition(cond)
        rec["cond"], rec["cond_a"], rec["cond_op"] = K["cond_cmp"], K["count"][a], K["ops"][op]
        if isinstance(b, int):
            rec["cond_b"], rec["cond_n"] = K["count"]["n"], b
        else:
            rec["cond_b"] = K["count"][b]
    rec["side_opp"] = int(step.get("side") == "opponent")
    rec["random"] = int(step.get("random", False))
    rec["no_middle"] = int(step.get("ignore_middle", False))
    rec["proto_filter"] = {"same": 1, "other": 2}.get(step.get("protocol"), 0)
    rec["into_opp"] = int(step.get("into") == "opponent_trash")
    if row.value == vocab.STEPS:
        for key, branch in zip(("alt_a", "alt_b"), count, strict=True):
            rec[key] = _compile_steps(branch, out)
            rec[key + "_len"] = len(branch)
    return rec


def _compile_steps(steps: list[dict[str, Any]], out: list[dict[str, int]]) -> int:
    """Compile steps into contiguous records (alternatives of an `either` go after them)."""
    start = len(out)
    out.extend({} for _ in steps)
    for i, step in enumerate(steps):
        out[start + i] = _step_record(step, out)
    return start


def compile_card(card: CardSpec, protocol_id: int, steps: list[dict[str, int]]) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "protocol": protocol_id, "value": card.value, "trig": [0, 0, 0], "by_opp": [0, 0, 0],
        "during": [0, 0, 0], "here": [0, 0, 0], "cover_same": [0, 0, 0],
        "step_start": [0, 0, 0], "step_len": [0, 0, 0], "passive": [0, 0, 0],
        "facedown_value": 2, "line_value": 0, "line_value_opp": 0, "line_value_cond": 0,
        "per_facedown": 0, "per_hand": 0, "per_opp_card": 0, "self_play": 0,
    }
    P = K["passive"]
    for b, box_name in enumerate(BOXES):
        box = card.boxes.get(box_name)
        if box is None:
            continue
        if box.when:
            rec["trig"][b] = K["when"][box.when]
            rec["by_opp"][b] = {"you": 0, "opponent": 1, "any": 2}[box.by]
            rec["during"][b] = {None: 0, "your_turn": 1, "opponent_turn": 2}[box.during]
            rec["here"][b] = int(box.where == "this_line")
            rec["cover_same"][b] = int(box.covered_by == "same_protocol")
        if box.do:
            rec["step_start"][b] = _compile_steps(box.do, steps)
            rec["step_len"][b] = len(box.do)
        for m in box.passive:
            for key, field_name in AMOUNT_PASSIVES.items():
                if key in m:
                    rec["passive"][b] |= P[key]
                    rec[field_name] = m[key]
            if "line_value" in m:
                rec["line_value_opp"] = int(m.get("whose", "you") == "opponent")
                rec["line_value_cond"] = int(m.get("if") == "other_protocol_faceup_in_stack")
            if "deny_play" in m:
                rec["passive"][b] |= P[DENY_PASSIVES[m["deny_play"]]]
            for flag in FLAG_PASSIVES:
                if m.get(flag):
                    rec["passive"][b] |= P[flag]
            if m.get("play_anywhere"):
                rec["self_play"] |= K["self_play"]["anywhere"]
            if m.get("play_either_side"):
                rec["self_play"] |= K["self_play"]["either_side" if m["play_either_side"] is True
                                                   else "either_side_down"]
    return rec
