"""`protolab cards list|show|check`: the card pool as a designer reads it, and checks of card files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from protolab.commands.cardfiles import check_files, print_reports
from protolab.commands.common import UsageError, add_format, add_pool_args, console, pool_from, print_csv
from protolab.commands.registry import command_parser
from sim.cards.agreement import VERDICTS, BoxCheck, check_cards, read_all_seconds
from sim.pool import official_protocols


def card_row(c: Any) -> dict[str, Any]:
    """A card as one row of `cards list` and `cards show --format csv`: its name, where it is from, its texts."""
    return {
        "name": c.name,
        "protocol": c.protocol,
        "set": c.set,
        "value": c.value,
        "top": c.top,
        "middle": c.middle,
        "bottom": c.bottom,
        "encoded": c.encoded,
    }


def cmd_cards_list(args: argparse.Namespace) -> int:
    pool = pool_from(args, require_encoded=False)
    rows = [c for c in pool.cards if not args.set or c.set in args.set or c.source in (args.cards or [])]
    data = [card_row(c) for c in rows]
    if args.format == "json":
        print(json.dumps(data, indent=1))
        return 0
    if args.format == "csv":
        print_csv(data)
        return 0
    t = Table(title=f"{len(rows)} cards (pool {pool.hash})")
    for col in ("card", "set", "value", "top", "middle", "bottom", "encoded"):
        t.add_column(col, overflow="fold")
    for c in rows:
        t.add_row(c.name, c.set, str(c.value), c.top, c.middle, c.bottom, "yes" if c.encoded else "NO")
    console().print(t)
    return 0


def cmd_cards_show(args: argparse.Namespace) -> int:
    pool = pool_from(args, require_encoded=False)
    try:
        c = pool.card(args.name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    data = pool.specs[c.id].as_data()
    if args.format == "json":
        print(
            json.dumps(
                {**data, "protocol": c.protocol, "set": c.set, "source": c.source, "encoded": c.encoded}, indent=1
            )
        )
        return 0
    if args.format == "csv":
        print_csv([{**card_row(c), "source": c.source}])
        return 0
    print(f"{c.name}  ({c.set}, value {c.value}, from {c.source})")
    for box in ("top", "middle", "bottom"):
        if box not in data:
            continue
        keys = dict(data[box])
        spec_box = pool.specs[c.id].boxes[box]
        read = " (steps read from the text)" if spec_box.read else ""
        print(f"  {box}: {keys.pop('text', '')}{read}")
        if spec_box.refused:
            print(f"    refused: {spec_box.refused}")
        for key, value in keys.items():
            for item in value if isinstance(value, list) else [value]:
                print(f"    {key}: {item}")
    print(f"  encoded: {'yes' if c.encoded else 'no'}")
    return 0


def _agreement(checks: list[BoxCheck], seconds: float) -> dict:
    """The counts of `cards check` (text against encoding) and every box that does not agree."""
    out: dict[str, Any] = {"boxes": len(checks), "agree": sum(c.agree for c in checks)}
    out.update({v.replace(" ", "_"): sum(c.verdict == v for c in checks) for v in VERDICTS if v != "agree"})
    out["written_back"] = sum(c.round_trip for c in checks)
    out["written_as_printed"] = sum(c.same_text for c in checks)
    out["read_seconds"] = round(seconds, 3)
    out["disagreements"] = [
        {
            "card": c.card,
            "box": c.box,
            "verdict": c.verdict,
            "text": c.text,
            "encoding": c.encoding,
            "read": c.read,
            "error": c.error,
        }
        for c in checks
        if not c.agree
    ]
    out["boxes_checked"] = [
        {"card": c.card, "box": c.box, "verdict": c.verdict, "written": c.written, "written_as_printed": c.same_text}
        for c in checks
    ]
    return out


def _print_agreement(title: str, report: dict, every: bool) -> None:
    n = report["boxes"]
    print(
        f"{title}: {report['agree']} of {n} boxes read to exactly their encoding "
        f"({100 * report['agree'] / max(n, 1):.1f}%); "
        + ", ".join(f"{report[v.replace(' ', '_')]} {v}" for v in VERDICTS if v != "agree")
    )
    print(
        f"  written back: {report['written_back']} of {n} read to the same play again, "
        f"{report['written_as_printed']} word for word; reading took {report['read_seconds']} s"
    )
    t = Table(show_header=True)
    for col in ("card", "box", "verdict", "text", "reads to / error", "encoding"):
        t.add_column(col, overflow="fold")
    for d in report["disagreements"]:
        t.add_row(
            d["card"], d["box"], d["verdict"], d["text"], d["error"] or json.dumps(d["read"]), json.dumps(d["encoding"])
        )
    if report["disagreements"]:
        console().print(t)
    if every:
        for b in report["boxes_checked"]:
            print(f"  {b['card']} {b['box']}: {b['verdict']}; written back: {b['written']}")


def cmd_cards_check(args: argparse.Namespace) -> int:
    if not args.files:
        cards = [c for p in official_protocols() for c in p.cards]
        report = _agreement(check_cards(cards), read_all_seconds(cards))
        if args.format == "json":
            print(json.dumps(report, indent=1))
        else:
            _print_agreement("official pool", report, args.all)
        return 0
    # the files together, exactly as a run loads them (sim.pool.load_pool with its sets): every refusal
    # of the loader, including those no file has alone (two variants replacing one card), is this
    # command's, one line and exit status 2; boxes a run cannot play are all listed, exit status 1
    return print_reports(check_files(args.files, args.set), args.format)


def add_commands(sub: argparse._SubParsersAction) -> None:
    cards = command_parser(sub, "cards")
    csub = cards.add_subparsers(dest="cards_command", required=True, metavar="SUBCOMMAND")
    p = csub.add_parser("list", help="list the cards of the pool")
    add_format(p, "one row per card")
    add_pool_args(p)
    p.set_defaults(func=cmd_cards_list)
    p = csub.add_parser("show", help='one card and every key it is encoded with: protolab cards show "Fire 1"')
    p.add_argument("name")
    add_format(p, "the card; json: as data, the keys a card file would write; csv: one row, its texts")
    add_pool_args(p)
    p.set_defaults(func=cmd_cards_show)
    p = csub.add_parser(
        "check",
        help="validate protocol or variant files, listing every box a run would refuse (exit status 1 if "
        "any); with no FILE, check that every official box's text reads to exactly its encoding",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="protocol or variant files, checked together as a run loads them (in this order)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="SET",
        help="with FILE: the sets of the pool they are loaded into (repeatable; default all four, as a spec's)",
    )
    add_format(
        p,
        "with no FILE, the counts (boxes, agree, ...), each disagreement and every box; with FILEs, "
        "the boxes, those encoded, every refused box, warnings and notes",
        csv=False,
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="(with no FILE) one line per box: its verdict and its encoding written back to text",
    )
    p.set_defaults(func=cmd_cards_check)
