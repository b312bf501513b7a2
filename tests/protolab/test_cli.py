"""The `protolab` command line, run in-process and as a real console script."""

import json
import shutil
import subprocess
import sys

import pytest

from protolab.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cards_list_json_has_90_encoded(capsys):
    code, out, _ = run(capsys, "cards", "list", "--set", "Main 1", "--set", "Aux 1", "--format", "json")
    assert code == 0
    cards = json.loads(out)
    assert len(cards) == 90 and all(c["encoded"] for c in cards)
    assert {"name", "set", "value", "encoded"} <= set(cards[0])


def test_cards_show_and_check(capsys):
    code, out, _ = run(capsys, "cards", "show", "Fire 1")
    assert code == 0 and "Discard 1 card. If you do, delete 1 card." in out
    code, _, err = run(capsys, "cards", "show", "Fire 9")
    assert code == 2 and "unknown card" in err


def test_cards_check_bad_file(capsys, tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('protocol = "X"\nset = "S"\n')
    code, _, err = run(capsys, "cards", "check", str(f))
    assert code == 2 and str(f) in err and "cards" in err


def test_simulate_json(capsys):
    code, out, _ = run(capsys, "simulate", "--games", "300", "--json")
    s = json.loads(out)
    assert code == 0 and s["games"] == 300 and len(s["protocols"]) == 30


def test_simulate_rejects_bad_games(capsys):
    code, _, err = run(capsys, "simulate", "--games", "0")
    assert code == 2 and "--games" in err


def test_replay_is_reproducible(capsys):
    _, a, _ = run(capsys, "replay", "--seed", "42")
    _, b, _ = run(capsys, "replay", "--seed", "42")
    assert a == b and "Turn 1:" in a and "Result:" in a
    _, c, _ = run(capsys, "replay", "--seed", "43")
    assert c != a


def test_bench_json(capsys):
    code, out, _ = run(capsys, "bench", "--games", "500", "--repeats", "1", "--json")
    res = json.loads(out)
    assert code == 0 and res["games"] == 500 and res["games_per_second"] > 0


def test_console_script_help():
    exe = shutil.which("protolab")
    if exe is None:
        pytest.skip("protolab console script not installed in this environment")
    for argv in ([], ["cards"], ["simulate"], ["replay"], ["scenario"], ["bench"]):
        r = subprocess.run([exe, *argv, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "usage: protolab" in r.stdout


def test_module_entry_point(tmp_path):
    """`python -m protolab` works from any folder, using the same sim package as the tests."""
    import os
    from pathlib import Path

    import sim

    env = {**os.environ, "PYTHONPATH": str(Path(sim.__file__).resolve().parents[1])}
    r = subprocess.run(
        [sys.executable, "-m", "protolab", "cards", "show", "Hate 2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0 and "highest value" in r.stdout


def test_the_help_names_the_players_simulate_plays_unless_told(capsys):
    """`protolab --help` says simulate's default players, the ones its parser defaults to."""
    from protolab.cli import build_parser

    args = build_parser(["simulate"]).parse_args(["simulate"])
    with pytest.raises(SystemExit) as done:
        build_parser(["--help"]).parse_args(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and f"({' vs '.join(args.strategies)} unless told)" in " ".join(out.split())
