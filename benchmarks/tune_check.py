"""Check a balance search's folder against what issue 37 asks of it (docs/experiments.md, "Balance
search"): every proposed variant's changed boxes read as sentences and read back to their encoding,
each protocol keeps distinct values, every proposal changes the target significantly and ends nearer
balance than the official cards, its name agrees with its file, and the target's paired change with
its interval is in the terminal report, the JSON, the CSV and the page.

    python benchmarks/tune_check.py SEARCH_DIR [SEARCH_DIR ...]

Prints one line per folder and per candidate; exit status 1 when a check fails."""

from __future__ import annotations

import csv
import io
import json
import sys
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

from protolab.cli import main as cli
from sim.cards.agreement import check_box
from sim.cards.loader import BOXES
from sim.cards.wording import wording_faults
from sim.pool import load_pool


def _out(*argv: str) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli(list(argv)) == 0, argv
    return buf.getvalue()


def _csv_row(text: str, rank: int, t: dict) -> bool:
    """Whether the candidates CSV holds the candidate's target, baseline and paired change first."""
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    row = next(r for r in rows if int(r["rank"]) == rank)
    return list(row)[:7] == ["rank", "target", "baseline", "after", "change", "change_low", "change_high"] and all(
        abs(float(row[k]) - t[v]) < 1e-9
        for k, v in (("change", "change"), ("change_low", "low"), ("change_high", "high"))
    )


def check(folder: Path) -> list[str]:
    record = json.loads((folder / "tune.json").read_text())
    sets = record["spec"]["arms"][0]["sets"] if "arms" in record["spec"] else record["provenance"]["sets"]
    target, base = record["target"], record["baseline"]
    problems: list[str] = []
    terminal = _out("report", str(folder))
    data = json.loads(_out("report", str(folder), "--format", "json"))
    table = _out("report", str(folder), "--table", "candidates", "--format", "csv")
    page = folder / "check-page.html"
    _out("dashboard", str(folder), "--out", str(page))
    html = page.read_text()
    files = sorted(p.name for p in (folder / "variants").glob("*.toml"))
    if files != sorted(f"candidate-{c['rank']}.toml" for c in record["candidates"]):
        problems.append(f"files {files} are not the proposed candidates")
    print(f"{folder.name}: {record['answer']}")
    for c in record["candidates"]:
        path = Path(c["variant"])
        text = path.read_text()
        name_ok = path.name == f"candidate-{c['rank']}.toml" and tomllib.loads(text)["variant"].endswith(
            f"candidate {c['rank']}"
        )
        pool = load_pool(sets, cards=[path])
        changed = {x["card"] for x in c["changes"]}
        texts_ok = all(
            not wording_faults(card.boxes[b].text) and check_box(card, b).verdict in ("agree", "same play")
            for card in pool.specs
            if card.name in changed
            for b in BOXES
            if b in card.boxes and card.boxes[b].text
        )
        values_ok = all(
            len({x.value for x in pool.specs if x.protocol == p}) == sum(x.protocol == p for x in pool.specs)
            for p in {x.protocol for x in pool.specs}
        )
        t = c["target_change"]
        better = (t["low"] > 0 or t["high"] < 0) and c["imbalance"] < base["imbalance"]
        shown = f"{100 * t['change']:+.1f}"
        interval = f"{100 * t['low']:+.1f} to {100 * t['high']:+.1f}"
        formats = {
            "terminal": shown in terminal and interval in terminal,
            "json": data["candidates"][c["rank"] - 1]["target_change"] == t,
            "csv": _csv_row(table, c["rank"], t),
            "page": f"{shown} ({interval})" in html,
        }
        checks = {"text": texts_ok, "values": values_ok, "significant and nearer": better, "name": name_ok, **formats}
        bad = [k for k, ok in checks.items() if not ok]
        problems += [f"candidate {c['rank']}: {k}" for k in bad]
        print(
            f"  candidate {c['rank']}: {target} {shown} points ({interval}); imbalance "
            f"{100 * c['imbalance']:.1f} vs {100 * base['imbalance']:.1f}; "
            + ("all checks pass" if not bad else "FAILS " + ", ".join(bad))
        )
    for c in record.get("rejected", []):
        print(f"  not proposed: {'; '.join(x['card'] + ' ' + x['key'] for x in c['changes'])}: {c['why']}")
    page.unlink()
    return problems


if __name__ == "__main__":
    failed = [p for d in sys.argv[1:] for p in check(Path(d))]
    for p in failed:
        print("FAIL", p)
    sys.exit(1 if failed else 0)
