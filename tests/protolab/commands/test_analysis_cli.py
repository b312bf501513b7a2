"""`protolab report`, `compare` and `dashboard` from the command line, and bad input."""

import csv
import io
import json
import threading
import urllib.request

import pytest
from fixtures_analysis.known import known_run, planted_run

from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    return known_run(tmp_path_factory.mktemp("cli") / "known")


def test_report_table(capsys, known):
    code, out, err = run(capsys, "report", known)
    assert code == 0, err
    for title in (
        "Balance flags",
        "Protocol win rate",
        "Matchups",
        "Compile timing",
        "Compiles per protocol",
        "Card impact",
        "Turns to win",
    ):
        assert title in out
    assert "First player wins 85.7%" in out and "Holm" in out


def test_report_one_table_in_the_terminal(capsys, known):
    """`--table NAME` without a format: that table alone, under the run's provenance (it once needed
    the overview, which a one-table report does not compute)."""
    code, out, err = run(capsys, "report", known, "--table", "protocols")
    assert code == 0, err
    assert "protocols" in out and "Produced by" in out and "Balance flags" not in out


def test_report_json_has_every_table(capsys, known):
    code, out, _ = run(capsys, "report", known, "--format", "json", "--correction", "bh", "--band", "0.1")
    assert code == 0
    data = json.loads(out)
    assert data["meta"]["correction"] == "bh" and data["meta"]["band"] == 0.1
    fire = next(r for r in data["tables"]["protocols"] if r["protocol"] == "Fire")
    assert (fire["games"], fire["wins"]) == (7, 5)
    card = next(r for r in data["tables"]["card_impact"] if r["card"] == "Hate 0")
    assert card["up_wr"] is None  # NaN becomes null
    assert {"protocol_matchups", "trio_matchups", "compile_curves", "balance_flags", "strategy_ratings"} <= set(
        data["tables"]
    )


def test_report_csv_one_table_or_all(capsys, known, tmp_path):
    code, out, _ = run(capsys, "report", known, "--format", "csv", "--table", "protocol_matchups")
    assert out.startswith("# Produced by ")  # the provenance header (analysis/runs/provenance.py)
    rows = list(csv.DictReader(line for line in io.StringIO(out) if not line.startswith("#")))
    assert code == 0 and len(rows) == 18 and {"protocol", "opponent", "games", "win_rate_low"} <= set(rows[0])
    code, out, _ = run(capsys, "report", known, "--format", "csv", "--out", tmp_path / "csv")
    assert code == 0 and (tmp_path / "csv" / "card_impact.csv").exists()
    assert (tmp_path / "csv" / "protocols.csv").exists()
    code, _, err = run(capsys, "report", known, "--table", "nope")
    assert code == 2 and "unknown table" in err


def test_compare_finds_what_moved(capsys, tmp_path):
    base = planted_run(tmp_path / "base", 400, 200, "base", card=True)
    variant = planted_run(tmp_path / "variant", 400, 280, "variant", card=True)
    code, out, err = run(capsys, "compare", base, variant, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    fire = next(r for r in data["table"] if r["name"] == "Fire")
    assert fire["rate_base"] == 0.5 and fire["rate_variant"] == 0.7 and fire["change"] == pytest.approx(0.2)
    assert fire["change_low"] < 0.2 < fire["change_high"] and fire["significant"]
    card = next(r for r in data["table"] if r["name"] == "Fire 1")
    assert card["significant"] and card["change"] == pytest.approx(0.2)
    fp = next(r for r in data["table"] if r["name"] == "first player")
    assert not fp["significant"]
    assert data["meta"]["tests"] == 6 + 1 + 1
    text = " ".join(data["summary"])
    assert "Fire rose from 50.0% to 70.0%" in text and "Hate fell" in text and "Holm" in text
    code, out, _ = run(capsys, "compare", base, base)
    assert code == 0 and "Nothing moved significantly" in out


def test_dashboard_writes_a_self_contained_page(capsys, known, tmp_path):
    out = tmp_path / "d.html"
    code, text, err = run(capsys, "dashboard", known, "--out", out)
    assert code == 0, err
    page = out.read_text()
    assert "works offline" in text and "Plotly" in page and 'id="cards"' in page
    assert "<script src=" not in page and "<link" not in page  # nothing fetched from anywhere


def test_dashboard_server_binds_loopback_only(known):
    from analysis.pages.shell import make_server
    from analysis.runs.open import open_runs
    from analysis.studies.balance.dashboard import render
    from analysis.studies.balance.report import build_report

    server = make_server(render(build_report(open_runs(known))), port=0)
    assert server.server_address[0] == "127.0.0.1"
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200 and b"protolab balance dashboard" in r.read()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/etc/passwd", timeout=10)
    finally:
        server.shutdown()
        server.server_close()


# -- bad input: one readable line naming the file, exit status 2 ------------------------------------


def one_error(capsys, *argv):
    code, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("protolab: error: "), (code, err)
    return lines[0]


@pytest.mark.parametrize("command", ["report", "dashboard"])
def test_not_a_run_folder(capsys, tmp_path, command):
    assert "no such folder" in one_error(capsys, command, tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    msg = one_error(capsys, command, empty)
    assert str(empty) in msg and "not a run folder" in msg and "run.json" in msg
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert "not a run folder" in one_error(capsys, command, f)


def test_corrupt_files(capsys, tmp_path):
    run_dir = known_run(tmp_path / "r")
    shard = run_dir / "games" / "shard-00001.parquet"
    shard.write_bytes(shard.read_bytes()[: len(shard.read_bytes()) // 2])
    msg = one_error(capsys, "report", run_dir)
    assert str(shard) in msg and "not a readable Parquet file" in msg
    run_dir = known_run(tmp_path / "r2")
    ev = run_dir / "events" / "shard-00000.parquet"
    ev.write_bytes(b"not parquet at all")
    msg = one_error(capsys, "compare", run_dir, run_dir)
    assert str(ev) in msg
    run_dir = known_run(tmp_path / "r3")
    (run_dir / "run.json").write_text("{broken")
    assert str(run_dir / "run.json") in one_error(capsys, "report", run_dir)
    run_dir = known_run(tmp_path / "r4")
    (run_dir / "games" / "shard-00000.parquet").unlink()
    msg = one_error(capsys, "dashboard", run_dir)
    assert "shard-00000.parquet" in msg and "missing" in msg


def test_wrong_schema_names_the_missing_columns(capsys, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_dir = known_run(tmp_path / "r")
    f = run_dir / "games" / "shard-00000.parquet"
    pq.write_table(pa.table({"game_index": [0, 1]}), f)
    msg = one_error(capsys, "report", run_dir)
    assert str(f) in msg and "missing columns" in msg and "winner" in msg


def test_bad_options(capsys, known):
    assert "--alpha" in one_error(capsys, "report", known, "--alpha", "2")
    assert "--band" in one_error(capsys, "report", known, "--band", "0.7")
