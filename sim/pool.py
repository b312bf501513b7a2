"""A card pool: the protocols a game may use, compiled once and shared by every game."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.cards.compiler import compile_card
from sim.cards.loader import (
    BOXES,
    CardDataError,
    CardSpec,
    ProtocolSpec,
    VariantSpec,
    load_file,
    official_files,
    parse_card,
)
from sim.cards.refusals import refusal_message, refusals
from sim.cards.vocabulary import first_release_form
from sim.engine._core import MAX_PROTOCOLS, CorePool

ALL_SETS = ("Main 1", "Aux 1", "Main 2", "Aux 2")
DEFAULT_SETS = ALL_SETS
FIRST_BOX = ("Main 1", "Aux 1")  # the golden trace's pool (Main 1 + Aux 1, 90 cards)
ENGINE_VERSION = "0.1.0"


@dataclass(frozen=True)
class CardInfo:
    """One card of the pool as a designer reads it."""

    id: int
    name: str
    protocol: str
    set: str
    value: int
    top: str
    middle: str
    bottom: str
    encoded: bool
    source: str


# Card record fields added after the first release (Main 2 / Aux 2), with their defaults: they
# enter the content hash only when a card uses them, so a pool's hash (and the runs keyed by it)
# does not change when the vocabulary grows. Step records do the same by their declaration
# (vocabulary.first_release_form).
LATER_CARD_FIELDS = {
    "during": [0, 0, 0],
    "here": [0, 0, 0],
    "cover_same": [0, 0, 0],
    "line_value_cond": 0,
    "per_hand": 0,
    "per_opp_card": 0,
    "self_play": 0,
    "deny": [0, 0, 0],
    "deny_whose": [0, 0, 0],
    "deny_face": [0, 0, 0],
    "deny_by": [0, 0, 0],
    "deny_line": [0, 0, 0],
    "deny_values": [0, 0, 0],
    "deny_protocol": [0, 0, 0],
    "deny_covered": [0, 0, 0],
}


def _hashed(rec: dict, later: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in later or v != later[k]}


class Pool:
    """Protocols (by id), their cards (by def id) and the compiled engine tables."""

    def __init__(self, protocols: Sequence[ProtocolSpec], variants: Sequence[str] = ()):
        self.protocols = [p.name for p in protocols]
        self.protocol_sets = {p.name: p.set for p in protocols}
        self.variants = list(variants)
        self.specs: list[CardSpec] = []
        steps: list[dict[str, int]] = []
        cards: list[dict] = []
        proto_cards: list[list[int]] = []
        for pid, proto in enumerate(protocols):
            six = []
            for spec in sorted(proto.cards, key=lambda c: (c.value, c.name)):
                six.append(len(cards))
                cards.append(compile_card(spec, pid, steps))
                self.specs.append(spec)
            proto_cards.append(six)
        self.cards = [
            CardInfo(
                id=i,
                name=s.name,
                protocol=s.protocol,
                set=s.set,
                value=s.value,
                top=s.text("top"),
                middle=s.text("middle"),
                bottom=s.text("bottom"),
                encoded=s.encoded,
                source=s.source,
            )
            for i, s in enumerate(self.specs)
        ]
        self.by_name = {c.name.lower(): c for c in self.cards}
        self.protocol_id = {n.lower(): i for i, n in enumerate(self.protocols)}
        canonical = json.dumps(
            {
                "protocols": self.protocols,
                "cards": [_hashed(c, LATER_CARD_FIELDS) for c in cards],
                "steps": [first_release_form(s) for s in steps],
                "names": [c.name for c in self.cards],
            },
            sort_keys=True,
        )
        self.hash = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        # The compiled engine records, kept for inspection (what a card compiles to, tests).
        self.card_records, self.step_records = cards, steps
        self.core = CorePool(cards, steps, proto_cards)

    def card(self, name: str) -> CardInfo:
        try:
            return self.by_name[name.strip().lower()]
        except KeyError:
            raise KeyError(
                f"unknown card {name!r}: not in this pool (protocols: {', '.join(self.protocols)})"
            ) from None

    def protocol(self, name: str) -> int:
        try:
            return self.protocol_id[name.strip().lower()]
        except KeyError:
            raise KeyError(f"unknown protocol {name!r}; this pool has: {', '.join(self.protocols)}") from None

    def __repr__(self) -> str:
        return f"Pool({len(self.protocols)} protocols, {len(self.cards)} cards, hash {self.hash})"


def _apply_variant(protos: dict[str, ProtocolSpec], var: VariantSpec, replaced: dict[str, str]) -> None:
    """Replace cards by the variant's tables: a replacement changes exactly the keys it names (a
    box key such as `middle.do` replaces that key only) and inherits every other key of the card,
    except that a box naming its `text` and neither `do` nor `passive` is read from that text: the
    new wording is what plays, so none of the box's old steps or trigger keys are kept (_merged_box).
    `replaced`: card (lower case) -> the variant file that replaced it; a second replacement of one
    card is refused, since one of the two would silently be lost."""
    index = {c.name.lower(): (p, i) for p in protos.values() for i, c in enumerate(p.cards)}
    for target, raw in var.replaces.items():
        if target.lower() not in index:
            raise CardDataError(f"{var.source}: card '{target}': key 'replaces': no such card in the pool")
        if target.lower() in replaced:
            raise CardDataError(
                f"{var.source}: card '{target}': key 'replaces': already replaced by "
                f"{replaced[target.lower()]}; expected each card replaced by one variant file "
                "(merge the two replacements into one)"
            )
        replaced[target.lower()] = var.source
        proto, i = index[target.lower()]
        merged = proto.cards[i].as_data()
        for k, v in raw.items():
            if k == "replaces":
                continue
            if k in BOXES and isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = _merged_box(merged[k], v)
            else:
                merged[k] = v
        proto.cards[i] = parse_card(Path(var.source), proto.name, proto.set, merged, i)
        proto.cards[i].source = var.source


def _merged_box(kept: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A replaced box: the keys given over the kept ones; a new text without steps is the whole box
    (read from the text, keys given beside it winning, as in a protocol file)."""
    if "text" in given and not {"do", "passive"} & set(given):
        return dict(given)
    return {**kept, **given}


def _check_names(protos: Iterable[ProtocolSpec]) -> None:
    """Two cards of one name would shadow each other in every table keyed by name."""
    seen: dict[str, CardSpec] = {}
    for proto in protos:
        for card in proto.cards:
            other = seen.setdefault(card.name.lower(), card)
            if other is not card:
                raise CardDataError(
                    f"{card.source}: {card.name}: key 'name': the pool already has a card of this "
                    f"name (from {other.source}); card names must be unique"
                )


def official_protocols() -> list[ProtocolSpec]:
    """The official card files, each a protocol (never a variant)."""
    out = []
    for p in official_files():
        spec = load_file(p)
        assert isinstance(spec, ProtocolSpec), f"{p}: an official card file is a protocol"
        out.append(spec)
    return out


def check_sets(sets: Iterable[str], official: list[ProtocolSpec] | None = None) -> None:
    """Every set name is one of the official sets, else CardDataError naming it and the choices."""
    official = official if official is not None else official_protocols()
    known_sets = sorted({p.set for p in official})
    for s in sets:
        if s not in known_sets:
            raise CardDataError(f"unknown set {s!r}; expected one of {', '.join(known_sets)}")


def load_pool(
    sets: Iterable[str] = DEFAULT_SETS, cards: Iterable[str | Path] = (), require_encoded: bool = True
) -> Pool:
    """The official protocols of these sets plus designer files (new protocols or variants).

    A protocol file whose name matches an official protocol replaces it; a variant file replaces
    single cards. Files are applied in the order given. A box whose text the reader refused, or
    that has text and no steps, would play as blank, so a pool with any is refused, every such box
    named (sim/cards/refusals.py), unless `require_encoded` is False (the `cards` commands, which
    show such boxes as not encoded).

    Args:
        sets: the official sets to draw protocols from ("Main 1", "Aux 1", "Main 2", "Aux 2"); all
            four by default.
        cards: protocol or variant files (TOML, docs/cards.md), applied in order after the sets.
        require_encoded: refuse a pool holding a box that would play as blank.

    Returns:
        The compiled pool: protocols, cards, their compiled records and the pool's hash.

    Raises:
        CardDataError: a bad set name, a bad card file (one line naming the file and the key), too
            few or too many protocols, or a box that would play as blank.

    Example:
        >>> pool = load_pool(["Main 1"])
        >>> len(pool.protocols), len(pool.cards)
        (12, 72)
        >>> pool.protocols[:3]
        ['Darkness', 'Death', 'Fire']
    """
    sets = list(sets)
    official = official_protocols()
    check_sets(sets, official)
    protos: dict[str, ProtocolSpec] = {p.name: p for p in official if p.set in sets}
    variants = []
    replaced: dict[str, str] = {}
    for f in cards:
        spec = load_file(f)
        if isinstance(spec, VariantSpec):
            _apply_variant(protos, spec, replaced)
            variants.append(f"{spec.name} ({f})")
        else:
            protos[spec.name] = spec
            variants.append(f"{spec.name} ({f})")
    if len(protos) < 6:
        raise CardDataError(f"a game needs at least 6 protocols; sets {sets} give {len(protos)}")
    if len(protos) > MAX_PROTOCOLS:
        raise CardDataError(
            f"a pool holds at most {MAX_PROTOCOLS} protocols; sets {sets} and the "
            f"{len(variants)} card files give {len(protos)}"
        )
    order = sorted(protos.values(), key=lambda p: p.name)
    _check_names(protos.values())  # official first: a clash is blamed on the file that adds it
    refused = refusals(c for p in order for c in p.cards)
    if require_encoded and refused:
        raise CardDataError(refusal_message(refused))
    return Pool(order, variants)
