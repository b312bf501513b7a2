"""`protolab cards check FILE...`: the files loaded together as a run loads them, and every box a run
would refuse listed in one pass (sim/cards/refusals.py), with the boxes whose text reads to other steps
than the ones written beside it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.cards.agreement import check_box
from sim.cards.loader import BOXES, CardSpec, ProtocolSpec, VariantSpec, load_file
from sim.cards.refusals import Refusal, refusals
from sim.cards.selfloops import self_loops
from sim.pool import DEFAULT_SETS, Pool, load_pool


@dataclass
class FileReport:
    """What `cards check` says of one file: its heading line, its boxes, what is wrong or worth a look."""

    file: str
    heading: str
    boxes: int = 0
    refused: list[Refusal] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)  # the text reads to other steps
    notes: list[str] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)  # boxes whose own steps can set them off again


def _checked_boxes(card: CardSpec, names: tuple[str, ...]) -> tuple[list[dict[str, Any]], list[str]]:
    """Of these boxes written with both text and steps: those whose text reads to other steps
    (warnings), and those whose text does not read or reads to steps that play the same (notes)."""
    warnings, notes = [], []
    for name in names:
        box = card.boxes.get(name)
        if box is None or not box.text or box.read or not box.encoded:
            continue
        c = check_box(card, name)
        if c.verdict == "differs":
            warnings.append({"card": c.card, "box": name, "text": c.text, "read": c.read, "encoding": c.encoding})
        elif c.verdict != "agree":
            said = f": {c.error}" if c.error else ""
            notes.append(f"{c.card}: {name}: the text is not read to exactly its steps ({c.verdict}{said})")
    return warnings, notes


def _report(f: str, spec: ProtocolSpec | VariantSpec, cards: list[CardSpec], pool: Pool) -> FileReport:
    if isinstance(spec, ProtocolSpec):
        read = sum(b.read for c in cards for b in c.boxes.values())
        heading = f"protocol {spec.name} ({spec.set}), {len(cards)} cards" + (
            f"; {read} boxes read from their text" if read else ""
        )
    else:
        heading = f"variant {spec.name!r} replacing {', '.join(spec.replaces)}"
    out = FileReport(f, heading, boxes=sum(len(c.boxes) for c in cards), refused=refusals(cards))
    for card in cards:
        named = BOXES if isinstance(spec, ProtocolSpec) else tuple(b for b in BOXES if b in _given(spec, card))
        warnings, notes = _checked_boxes(card, named)
        out.warnings += warnings
        out.notes += notes
        out.loops += self_loops(card)
        if isinstance(spec, VariantSpec):
            same = [o.name for o in pool.cards if o.protocol == card.protocol and o.value == card.value]
            if len(same) > 1:
                out.notes.append(f"{card.name} now has value {card.value}, like {', '.join(set(same) - {card.name})}")
    return out


def _given(spec: VariantSpec, card: CardSpec) -> dict[str, Any]:
    """The keys the variant names for this card."""
    return next(raw for name, raw in spec.replaces.items() if name.lower() == card.name.lower())


def check_files(files: list[str], sets: list[str] | None) -> list[FileReport]:
    """Each file's report; the files are loaded together, as a run loads them (so a problem no file
    has alone is refused, CardDataError), except that refused boxes are listed rather than refused."""
    pool = load_pool(sets or DEFAULT_SETS, cards=files, require_encoded=False)
    reports = []
    for f in files:
        spec = load_file(f)
        source = str(Path(f))
        cards = [pool.specs[c.id] for c in pool.cards if str(Path(c.source)) == source]
        reports.append(_report(f, spec, cards, pool))
    return reports


def _summary(reports: list[FileReport]) -> tuple[int, int]:
    boxes = sum(r.boxes for r in reports)
    return boxes, sum(len(r.refused) for r in reports)


def print_reports(reports: list[FileReport], fmt: str) -> int:
    """Print the reports (table or json); exit status 1 when any box is refused, else 0."""
    boxes, refused = _summary(reports)
    if fmt == "json":
        print(json.dumps(_as_data(reports, boxes, refused), indent=1))
        return 1 if refused else 0
    for rep in reports:
        print("\n".join(_report_lines(rep)))
    print(f"{boxes - refused} of {boxes} boxes encoded; {refused} refused")
    return 1 if refused else 0


def _as_data(reports: list[FileReport], boxes: int, refused: int) -> dict[str, Any]:
    """The reports as one JSON object: the counts, then every file's findings of each kind."""
    return {
        "boxes": boxes,
        "encoded": boxes - refused,
        "refused": [r.as_data() for rep in reports for r in rep.refused],
        "warnings": [w for rep in reports for w in rep.warnings],
        "notes": [n for rep in reports for n in rep.notes],
        "loops": [n for rep in reports for n in rep.loops],
    }


def _report_lines(rep: FileReport) -> list[str]:
    """One file's report as the table prints it: its heading line, then its findings indented."""
    return (
        [f"{rep.file}: {'OK' if not rep.refused else 'REFUSED'}, {rep.heading}"]
        + [f"  refused: {r.line()}" for r in rep.refused]
        + [
            f"  warning: {w['card']}: {w['box']}: the text reads to other steps than its "
            f"do/passive: reads as {json.dumps(w['read'])}, written as {json.dumps(w['encoding'])}"
            for w in rep.warnings
        ]
        + [f"  loop: {n}" for n in rep.loops]
        + [f"  note: {n}" for n in rep.notes]
    )
