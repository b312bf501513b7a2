"""Faults from the reliability audit (issue 27): a good run exits 0, deep nesting and full disks
are one line, and the smaller cases each end in their fix or one readable error."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fixtures_analysis.known import known_run

from protolab.cli import main
from sim.cards.loader import CardDataError
from sim.inputs import MAX_NESTING, parse_toml
from sim.pool import load_pool

ROOT = Path(__file__).resolve().parents[2]

EXIT_RACE = """
import sys, time
import duckdb, pandas, pyarrow  # a finalization that takes a while, like protolab's
from strategies.user import _time_limit
t0 = time.monotonic()
with _time_limit(10):             # the decision clock ticks every second from here
    pass
time.sleep(max(0.0, 0.95 - (time.monotonic() - t0) + float(sys.argv[1])))
"""


def test_decision_clock_does_not_kill_a_finished_process(tmp_path):
    # Exit just before the clock's next tick: the tick lands while the interpreter shuts down, after it
    # put back the default SIGALRM action; the process must still exit 0 (not 142, "Alarm clock").
    script = tmp_path / "exit_race.py"
    script.write_text(EXIT_RACE)
    for delay in ("-0.02", "0", "0.03"):
        done = subprocess.run(
            [sys.executable, str(script), delay], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (delay, done.returncode, done.stderr[-500:])


DEEP = 100_000  # a 200 KB file, well under the 4 MB input limit


@pytest.mark.parametrize(
    "command, text",
    [
        (["run"], 'name = "x"\nseed = 1\ngames = 2\nextra = ' + "[" * DEEP + "]" * DEEP + "\n"),
        (["cards", "check"], 'protocol = "X"\ncards = ' + "[" * DEEP + "]" * DEEP + "\n"),
        (["scenario"], "x = " + "{a=" * 40 + "1" + "}" * 40 + "\n"),
    ],
    ids=["spec", "card-file", "scenario"],
)
def test_deeply_nested_toml_is_one_line(tmp_path, capsys, command, text):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    code = main([*command, str(path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err[-2000:]
    assert "deep.toml" in err and "nested" in err and "Traceback" not in err


def test_parse_toml_keeps_shallow_values_and_refuses_deep_ones():
    assert parse_toml("a = [[1, 2], {b = {c = 3}}]") == {"a": [[1, 2], {"b": {"c": 3}}]}
    parse_toml("a = " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1))
    for n in (MAX_NESTING, 300, 5000):
        with pytest.raises(tomllib.TOMLDecodeError, match="nested"):
            parse_toml("a = " + "[" * n + "]" * n)


def test_a_full_disk_under_the_output_is_one_line(tmp_path):
    # `protolab report RUN > file` on a full disk: /dev/full answers every write with ENOSPC
    run = known_run(tmp_path / "known")
    for argv in (["report", str(run)], ["dashboard", str(run), "--out", str(tmp_path / "d.html")]):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "protolab", *argv],
                cwd=tmp_path,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
            )
        assert done.returncode == 2, done.stderr[-3000:]
        assert done.stderr == "protolab: error: cannot write the output: No space left on device\n"
    assert (run / "run.json").is_file()


VARIANT = 'variant = "{0}"\n[[cards]]\nreplaces = "Fire 1"\nvalue = {1}\n'


def test_two_variant_files_replacing_one_card_are_refused(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(VARIANT.format("worth 3", 3))
    b.write_text(VARIANT.format("worth 4", 4))
    assert load_pool(cards=[a]).card("Fire 1").value == 3  # one alone is fine
    with pytest.raises(CardDataError, match=r"b.toml: card 'Fire 1': key 'replaces': already replaced by .*a.toml"):
        load_pool(cards=[a, b])


def test_a_bad_set_is_blamed_on_the_sets_key(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nseed = 1\ngames = 2\n[pool]\nsets = ["Main 1", "Nope"]\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "s.toml: key 'pool.sets': unknown set 'Nope'" in err and "pool.cards" not in err, err


def test_the_dashboard_server_answers_only_its_own_host_names():
    import http.client
    import threading

    from analysis.pages.shell import make_server

    server = make_server("<html>page</html>", port=0)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:

        def get(host: str) -> int:
            con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            con.putrequest("GET", "/", skip_host=True)
            con.putheader("Host", host)
            con.endheaders()
            status = con.getresponse().status
            con.close()
            return status

        assert get(f"127.0.0.1:{port}") == 200 and get(f"localhost:{port}") == 200
        assert get(f"attacker.example:{port}") == 421 and get("attacker.example") == 421
        assert get(f"127.0.0.1:{port + 1}") == 421
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("games", ["3", "1"])
def test_ladder_games_must_be_paired(capsys, games):
    assert main(["ladder", "random", "greedy", "--games", games]) == 2
    err = capsys.readouterr().err
    assert err.startswith("protolab: error: --games: expected an even number") and f"got {games}" in err, err


@pytest.mark.parametrize("after", [0.3, 0.6])
def test_ctrl_c_while_starting_up_is_one_line(tmp_path, after):
    # protolab's layers take a second or two to import; Ctrl-C then is the same one line as later
    import signal
    import time

    # `run` imports Ray before it can finish, so the signal finds it still starting (a command
    # that had already ended would say nothing about Ctrl-C)
    proc = subprocess.Popen(
        [sys.executable, "-m", "protolab", "run", "demo", "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after)
    assert proc.poll() is None, "protolab ended before the signal: nothing was tested"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err[-3000:]
    # 130, or ended by SIGINT itself (-2, which a shell also shows as 130)
    assert proc.returncode in (130, -signal.SIGINT) and err == "protolab: interrupted\n", (proc.returncode, err)


def test_a_folder_named_like_an_example_does_not_shadow_it(tmp_path, monkeypatch):
    from protolab.experiment.spec import SpecError, find_spec, load_spec

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiers").mkdir()
    assert find_spec("tiers").parent.name == "experiments" and any(a.tier for a in load_spec("tiers").arms)
    with pytest.raises(SpecError, match=r"\./tiers: not a regular file"):  # a path is taken as a path
        find_spec("./tiers")


def test_a_full_disk_at_the_run_dashboard_is_one_line_and_keeps_the_run(tmp_path):
    # the run folder on a real small disk (a 2 MB tmpfs): the games fit, the page (plotly inlined) does not
    disk = tmp_path / "small"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        spec = tmp_path / "s.toml"
        spec.write_text('name = "s"\nseed = 1\ngames = 200\n[pool]\nsets = ["Main 1"]\n')
        done = subprocess.run(
            [sys.executable, "-m", "protolab", "run", str(spec), "--out", str(disk), "--workers", "1", "--no-progress"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr[-3000:]
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
        assert "dashboard.html" in done.stderr and "No space left on device" in done.stderr, done.stderr
        (run,) = [d for d in disk.iterdir() if d.is_dir()]
        assert not (run / "dashboard.html").exists()
        assert json.loads((run / "run.json").read_text())["complete"]  # every game kept
        again = subprocess.run(
            [sys.executable, "-m", "protolab", "report", str(run), "--format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stderr[-2000:]
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
