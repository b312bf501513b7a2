"""Bad input to every command ends in one line `protolab: error: ...` on stderr, exit status 2, no
traceback, the culprit named, and existing results untouched; inputs that used to hang or grow
without bound (huge numbers, /dev/zero, a pipe, a user strategy that never returns) end quickly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from fixtures_analysis.known import known_run

import sim
from protolab.cli import main
from strategies.user import TIMEOUT_ENV

ROOT = Path(__file__).resolve().parents[2]
SIM_ROOT = Path(sim.__file__).resolve().parents[1]  # the checkout, or site-packages when installed

SMALL_SPEC = 'name = "small"\nseed = 1\ngames = 4\nshard_games = 2\n'

USER_BOTS = '''
import time

import numpy as np

from strategies.user import Strategy


class NoChoose:
    pass


class NoOverride(Strategy):
    pass


class BadInit(Strategy):
    def __init__(self):
        raise ValueError("cannot start")


class ReturnsText(Strategy):
    def choose(self, observation, decision):
        return "left"


class ReturnsTooBig(Strategy):
    def choose(self, observation, decision):
        return 99


class Raises(Strategy):
    def choose(self, observation, decision):
        raise KeyError("no such line")


class Sleeps(Strategy):
    def choose(self, observation, decision):
        time.sleep(1000)


class SwallowsErrors(Strategy):
    """Never returns, and catches every Exception while looping."""
    def choose(self, observation, decision):
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass


class Argmax(Strategy):
    def choose(self, observation, decision):
        return np.argmax([len(o) for o in decision.options])
'''


@pytest.fixture(scope="module")
def bad(tmp_path_factory) -> SimpleNamespace:
    """Bad input files, a valid small spec, a known run and user strategy modules."""
    d = tmp_path_factory.mktemp("bad")
    b = SimpleNamespace(dir=d)
    b.binary = d / "binary.toml"
    b.binary.write_bytes(b"\xff\xfe not utf-8")
    b.fifo = d / "fifo.toml"
    os.mkfifo(b.fifo)
    b.fifo_run = d / "fifo_run"
    b.fifo_run.mkdir()
    os.mkfifo(b.fifo_run / "run.json")
    b.big = d / "big.toml"
    b.big.write_bytes(b"# padding\n" * 500_000)  # 5 MB of comments: valid TOML, too large
    b.afile = d / "afile.txt"
    b.afile.write_text("not a folder\n")
    official = (ROOT / "datasets/protocols/apathy.toml").read_text()
    b.esc_card = d / "esc_card.toml"
    b.esc_card.write_text(official.replace('protocol = "', 'protocol = "\\u001b[2J', 1))
    b.esc_variant = d / "esc_variant.toml"
    b.esc_variant.write_text(
        'variant = "x"\n[[cards]]\nreplaces = "Fire 1"\nmiddle = { text = "a\\u001b]0;x\\u0007" }\n'
    )
    specs = {
        "small": SMALL_SPEC,
        "huge_games": 'name = "huge"\nseed = 1\ngames = 100000000000000000\n',
        "too_many_games": 'name = "many"\nseed = 1\ngames = 1000000000\n[draft]\nmode = "fixed"\nmatchups = ['
        + ", ".join(['["Fire, Water, Death", "Hate, Light, Life"]'] * 6)
        + "]\n",
        "many_shards": 'name = "shards"\nseed = 1\ngames = 900000000\nevents = false\nshard_games = 2\n',
        "many_arms": 'name = "arms"\nseed = 1\ngames = 2\n' + "".join(f'[[arms]]\nname = "a{i}"\n' for i in range(33)),
        "huge_samples": 'name = "s"\nseed = 1\ngames = 2\n[draft]\nmode = "sampled"\nsamples = 100000000000\n',
        "esc_description": 'name = "e"\nseed = 1\ngames = 2\ndescription = "\\u001b[2J"\n',
        "bad_games_type": 'name = "t"\nseed = 1\ngames = "many"\n',
        "output_not_writable": SMALL_SPEC + 'output = "/proc/protolab-runs"\n',
    }
    for name, text in specs.items():
        (d / f"{name}.toml").write_text(text)
        setattr(b, f"spec_{name}", d / f"{name}.toml")
    # every key run.json must have (analysis/runs/manifest.py), so that each names the one thing wrong
    keys = '"format": 1, "run_id": "x", "complete": false, "spec_hash": "h", "games": 2'
    manifests = {
        "list": "[]",
        "shard_not_object": f'{{{keys}, "spec": {{}}, "shards": [1]}}',
        "spec_not_table": f'{{{keys}, "spec": 5, "shards": []}}',
        "spec_missing_key": f'{{{keys}, "spec": {{"name": "x"}}, "shards": []}}',
        "unknown_key": f'{{{keys}, "spec": {{}}, "shards": [], "shard_cuont": 3}}',
    }
    for name, text in manifests.items():
        (d / f"run_{name}").mkdir()
        (d / f"run_{name}" / "run.json").write_text(text)
    (d / "run_binary").mkdir()
    (d / "run_binary" / "run.json").write_bytes(b"\xff")
    b.known = known_run(d / "known")
    b.strats = d / "strats"
    b.strats.mkdir()
    (b.strats / "clierr_bots.py").write_text(USER_BOTS)
    # each defines Bot (the class is looked for in the source before the module is run), then fails running
    (b.strats / "clierr_raising.py").write_text('raise RuntimeError("broken at import")\nclass Bot:\n    pass\n')
    (b.strats / "clierr_exits.py").write_text("import sys\nsys.exit(3)\nclass Bot:\n    pass\n")
    (b.strats / "clierr_syntax.py").write_text("def broken(:\n")
    return b


@pytest.fixture(autouse=True)
def user_strategies(bad, monkeypatch):
    """User strategy modules importable; the decision time limit restored after each test."""
    monkeypatch.syspath_prepend(str(bad.strats))
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)


def run(capsys, argv: list) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_error(code: int, err: str, *named: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("protolab: error: "), err
    for text in named:
        assert text in lines[0], (text, lines[0])


def ladder(strategy: str, *more: str) -> list[str]:
    return ["ladder", strategy, "random", "--games", "2", "--set", "Main 1", "--set", "Aux 1", *more]


# (id, argv from the fixture `bad`, texts the message must contain)
CASES = [
    # simulate
    ("simulate-seed-negative", lambda b: ["simulate", "--games", "5", "--seed", "-1"], ["--seed", "-1"]),
    ("simulate-seed-2**64", lambda b: ["simulate", "--games", "5", "--seed", 2**64], ["--seed"]),
    ("simulate-games-zero", lambda b: ["simulate", "--games", "0"], ["--games"]),
    ("simulate-games-huge", lambda b: ["simulate", "--games", 10**17], ["--games", "1,000,000"]),
    ("simulate-turn-cap-zero", lambda b: ["simulate", "--games", "5", "--turn-cap", "0"], ["--turn-cap"]),
    ("simulate-games-not-a-number", lambda b: ["simulate", "--games", "many"], ["--games", "'many'"]),
    ("simulate-unknown-option", lambda b: ["simulate", "--gmaes", "5"], ["--gmaes"]),
    ("simulate-decision-timeout-negative", lambda b: ["simulate", "--decision-timeout", "-1"], ["--decision-timeout"]),
    ("simulate-cards-binary", lambda b: ["simulate", "--games", "5", "--cards", b.binary], ["binary.toml", "UTF-8"]),
    # replay
    ("replay-seed-negative", lambda b: ["replay", "--seed", "-1"], ["--seed"]),
    (
        "replay-html-missing-folder",
        lambda b: ["replay", "--seed", "1", "--html", b.dir / "missing" / "g.html"],
        ["--html", "missing"],
    ),
    ("replay-html-is-a-folder", lambda b: ["replay", "--seed", "1", "--html", b.dir], ["--html"]),
    ("replay-seed-2**64", lambda b: ["replay", "--seed", 2**64], ["--seed", "18,446,744,073,709,551,615"]),
    ("replay-turn-cap-negative", lambda b: ["replay", "--seed", "1", "--turn-cap", "-5"], ["--turn-cap"]),
    (
        "replay-trios-share-a-protocol",
        lambda b: ["replay", "--seed", "1", "--protocols", "Fire,Water,Death", "Fire,Light,Life"],
        ["protocols"],
    ),
    # bench
    ("bench-games-negative", lambda b: ["bench", "--games", "-5"], ["--games"]),
    ("bench-repeats-zero", lambda b: ["bench", "--games", "10", "--repeats", "0"], ["--repeats"]),
    ("bench-ray-workers-negative", lambda b: ["bench", "--games", "10", "--ray", "-1"], ["--ray"]),
    ("bench-seed-negative", lambda b: ["bench", "--games", "10", "--seed", "-1"], ["--seed"]),
    # ladder and user strategies
    ("ladder-seed-negative", lambda b: ladder("greedy", "--seed", "-1"), ["--seed"]),
    ("ladder-games-huge", lambda b: ladder("greedy", "--games", 10**17), ["--games"]),
    (
        "ladder-draft-table-dev-zero",
        lambda b: ladder("greedy", "--draft", "table:/dev/zero"),
        ["/dev/zero", "not a regular file"],
    ),
    ("ladder-draft-table-binary", lambda b: ladder("greedy", "--draft", f"table:{b.binary}"), ["binary.toml"]),
    (
        "user-strategy-import-raises",
        lambda b: ladder("clierr_raising:Bot"),
        ["clierr_raising:Bot", "RuntimeError: broken at import", "clierr_raising.py:1"],
    ),
    ("user-strategy-import-exits", lambda b: ladder("clierr_exits:Bot"), ["clierr_exits:Bot", "SystemExit"]),
    ("user-strategy-syntax-error", lambda b: ladder("clierr_syntax:Bot"), ["clierr_syntax:Bot", "SyntaxError"]),
    ("user-strategy-no-choose", lambda b: ladder("clierr_bots:NoChoose"), ["clierr_bots:NoChoose", "choose("]),
    ("user-strategy-choose-not-overridden", lambda b: ladder("clierr_bots:NoOverride"), ["clierr_bots:NoOverride"]),
    ("user-strategy-init-raises", lambda b: ladder("clierr_bots:BadInit"), ["clierr_bots:BadInit", "cannot start"]),
    (
        "user-strategy-returns-text",
        lambda b: ladder("clierr_bots:ReturnsText"),
        ["clierr_bots:ReturnsText", "'left'", "seed 1"],
    ),
    (
        "user-strategy-returns-out-of-range",
        lambda b: ladder("clierr_bots:ReturnsTooBig"),
        ["clierr_bots:ReturnsTooBig", "99", "seed 1"],
    ),
    (
        "user-strategy-choose-raises",
        lambda b: ladder("clierr_bots:Raises"),
        ["clierr_bots:Raises", "KeyError", "clierr_bots.py:", "seed 1"],
    ),
    (
        "user-strategy-never-returns",
        lambda b: ladder("clierr_bots:Sleeps", "--decision-timeout", "0.3"),
        ["clierr_bots:Sleeps", "0.3 s", "seed 1"],
    ),
    (
        "user-strategy-never-returns-catching-exceptions",
        lambda b: ladder("clierr_bots:SwallowsErrors", "--decision-timeout", "0.3"),
        ["clierr_bots:SwallowsErrors", "0.3 s"],
    ),
    (
        "replay-user-strategy-never-returns",
        lambda b: [
            "replay",
            "--seed",
            "7",
            "--strategies",
            "clierr_bots:Sleeps",
            "random",
            "--decision-timeout",
            "0.3",
        ],
        ["clierr_bots:Sleeps", "seed 7"],
    ),
    # card files
    ("cards-check-binary", lambda b: ["cards", "check", b.binary], ["binary.toml", "UTF-8"]),
    ("cards-check-dev-zero", lambda b: ["cards", "check", "/dev/zero"], ["/dev/zero", "not a regular file"]),
    ("cards-check-pipe", lambda b: ["cards", "check", b.fifo], ["fifo.toml", "not a regular file"]),
    ("cards-check-too-large", lambda b: ["cards", "check", b.big], ["big.toml", "larger than 4 MB"]),
    ("cards-check-folder", lambda b: ["cards", "check", b.dir], ["not a regular file"]),
    (
        "cards-check-escape-in-protocol",
        lambda b: ["cards", "check", b.esc_card],
        ["esc_card.toml", "'protocol'", "ESC"],
    ),
    (
        "cards-list-escape-in-variant",
        lambda b: ["cards", "list", "--cards", b.esc_variant],
        ["esc_variant.toml", "cards[0].middle.text", "ESC"],
    ),
    # scenarios
    ("scenario-dev-zero", lambda b: ["scenario", "/dev/zero"], ["/dev/zero", "not a regular file"]),
    ("scenario-binary", lambda b: ["scenario", b.binary], ["binary.toml", "UTF-8"]),
    # run: specs
    ("run-spec-dev-zero", lambda b: ["run", "/dev/zero"], ["/dev/zero", "not a regular file"]),
    ("run-spec-pipe", lambda b: ["run", b.fifo], ["fifo.toml", "not a regular file"]),
    ("run-spec-too-large", lambda b: ["run", b.big], ["big.toml", "larger than"]),
    ("run-spec-binary", lambda b: ["run", b.binary], ["binary.toml", "UTF-8"]),
    (
        "run-spec-escape-in-description",
        lambda b: ["run", b.spec_esc_description],
        ["esc_description.toml", "'description'", "ESC"],
    ),
    ("run-spec-games-10**17", lambda b: ["run", b.spec_huge_games], ["huge_games.toml", "'games'", "1,000,000,000"]),
    ("run-option-games-10**17", lambda b: ["run", b.spec_small, "--games", 10**17], ["--games"]),
    ("run-spec-games-wrong-type", lambda b: ["run", b.spec_bad_games_type], ["bad_games_type.toml", "'games'"]),
    (
        "run-total-games",
        lambda b: ["run", b.spec_too_many_games],
        ["too_many_games.toml", "'games'", "6 matchups", "5,000,000,000"],
    ),
    ("run-too-many-shards", lambda b: ["run", b.spec_many_shards], ["many_shards.toml", "shards", "100,000"]),
    ("run-too-many-arms", lambda b: ["run", b.spec_many_arms], ["many_arms.toml", "'arms'", "32"]),
    ("run-too-many-samples", lambda b: ["run", b.spec_huge_samples], ["huge_samples.toml", "'draft.samples'"]),
    ("run-workers-too-many", lambda b: ["run", b.spec_small, "--workers", "100000"], ["--workers"]),
    ("run-decision-timeout-nan", lambda b: ["run", b.spec_small, "--decision-timeout", "nan"], ["--decision-timeout"]),
    ("run-out-is-a-file", lambda b: ["run", b.spec_small, "--out", b.afile, "--no-progress"], ["--out", "afile.txt"]),
    (
        "run-out-not-writable",
        lambda b: ["run", b.spec_small, "--out", "/proc/protolab-runs", "--no-progress"],
        ["--out /proc/protolab-runs", "cannot create"],
    ),
    (
        "run-spec-output-not-writable",
        lambda b: ["run", b.spec_output_not_writable, "--no-progress"],
        ["output_not_writable.toml", "'output'", "/proc/protolab-runs"],
    ),
    (
        "run-out-under-a-file",
        lambda b: ["run", b.spec_small, "--out", b.afile / "runs", "--no-progress"],
        ["afile.txt"],
    ),
    # run --resume: hand-edited run folders
    ("resume-run-json-a-list", lambda b: ["run", "--resume", b.dir / "run_list"], ["run.json", "JSON object"]),
    (
        "resume-shard-not-an-object",
        lambda b: ["run", "--resume", b.dir / "run_shard_not_object"],
        ["run.json", "shards[0]"],
    ),
    ("resume-spec-not-a-table", lambda b: ["run", "--resume", b.dir / "run_spec_not_table"], ["run.json", "'spec'"]),
    (
        "resume-spec-missing-key",
        lambda b: ["run", "--resume", b.dir / "run_spec_missing_key"],
        ["run.json", "'spec.format'"],
    ),
    ("resume-unknown-key", lambda b: ["run", "--resume", b.dir / "run_unknown_key"], ["run.json", "'shard_cuont'"]),
    ("resume-run-json-binary", lambda b: ["run", "--resume", b.dir / "run_binary"], ["run.json", "UTF-8"]),
    # analysis
    ("report-run-json-is-a-pipe", lambda b: ["report", b.fifo_run], ["run.json", "not a regular file"]),
    ("report-threads-negative", lambda b: ["report", b.known, "--threads", "-1"], ["--threads"]),
    ("report-threads-huge", lambda b: ["report", b.known, "--threads", 10**11], ["--threads"]),
    (
        "report-csv-out-is-a-file",
        lambda b: ["report", b.known, "--format", "csv", "--out", b.afile],
        ["--out", "afile.txt"],
    ),
    ("report-out-without-csv", lambda b: ["report", b.known, "--out", b.dir / "csv"], ["--out", "--format csv"]),
    (
        "report-csv-out-not-writable",
        lambda b: ["report", b.known, "--format", "csv", "--out", "/proc/protolab-csv"],
        ["--out /proc/protolab-csv", "cannot write"],
    ),
    ("compare-limit-negative", lambda b: ["compare", b.known, b.known, "--limit", "-1"], ["--limit"]),
    (
        "dashboard-out-missing-folder",
        lambda b: ["dashboard", b.known, "--out", b.dir / "missing" / "d.html"],
        ["--out", "missing"],
    ),
    ("dashboard-out-is-a-folder", lambda b: ["dashboard", b.known, "--out", b.dir], ["--out", "folder"]),
    (
        "dashboard-out-not-writable",
        lambda b: ["dashboard", b.known, "--out", "/proc/protolab.html"],
        ["--out /proc/protolab.html", "cannot write"],
    ),
    ("dashboard-port-too-large", lambda b: ["dashboard", b.known, "--serve", "--port", "99999"], ["--port", "99999"]),
    ("dashboard-port-negative", lambda b: ["dashboard", b.known, "--serve", "--port", "-1"], ["--port"]),
]


@pytest.mark.parametrize("argv, named", [pytest.param(a, n, id=i) for i, a, n in CASES])
def test_bad_input_is_one_line(capsys, bad, argv, named):
    t0 = time.perf_counter()
    code, _, err = run(capsys, argv(bad))
    assert_one_line_error(code, err, *named)
    assert time.perf_counter() - t0 < 20  # nothing hangs or grows for long


def test_run_out_checked_before_ray_starts(capsys, bad):
    """`--out` is refused before any Ray starts: a Ray a shared session run left in this test process
    (keep_local_ray, end=False) is ended first, so the assertion sees only what the command did."""
    import ray

    from protolab.experiment.session import stop_ray

    stop_ray()
    assert not ray.is_initialized()
    code, _, err = run(capsys, ["run", bad.spec_small, "--out", "/proc/protolab-runs", "--no-progress"])
    assert_one_line_error(code, err, "--out")
    assert not ray.is_initialized()


def test_user_strategy_timeout_ends_quickly(capsys):
    """A strategy that sleeps for ever: the run ends within a few multiples of the limit."""
    t0 = time.perf_counter()
    code, _, err = run(capsys, ladder("clierr_bots:Sleeps", "--decision-timeout", "0.2"))
    assert_one_line_error(code, err, "took longer than 0.2 s")
    assert time.perf_counter() - t0 < 10


def test_user_strategy_timeout_from_environment(capsys, monkeypatch):
    monkeypatch.setenv(TIMEOUT_ENV, "0.2")
    code, _, err = run(capsys, ladder("clierr_bots:Sleeps"))
    assert_one_line_error(code, err, "took longer than 0.2 s")


def test_user_strategy_may_return_numpy_integers(capsys):
    """np.argmax returns numpy.int64: any integral index is accepted."""
    code, out, err = run(capsys, ladder("clierr_bots:Argmax", "--json"))
    assert code == 0, err
    assert '"clierr_bots:Argmax"' in out


def test_dev_zero_is_refused_without_reading_it(capsys):
    t0 = time.perf_counter()
    code, _, err = run(capsys, ["cards", "check", "/dev/zero"])
    assert_one_line_error(code, err, "/dev/zero")
    assert time.perf_counter() - t0 < 5


def test_spec_limit_ends_quickly(capsys, bad):
    t0 = time.perf_counter()
    code, _, err = run(capsys, ["run", bad.spec_huge_games])
    assert_one_line_error(code, err, "'games'")
    assert time.perf_counter() - t0 < 10


def _full_disk(monkeypatch) -> None:
    """Every fsync of a file being written fails as on a full disk."""
    import analysis.runs.runfolder as dataset

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dataset.os, "fsync", no_space)


def test_dashboard_on_a_full_disk_leaves_the_old_file(capsys, bad, tmp_path, monkeypatch):
    out = tmp_path / "dashboard.html"
    out.write_text("the previous dashboard")
    _full_disk(monkeypatch)
    code, _, err = run(capsys, ["dashboard", bad.known, "--out", out])
    assert_one_line_error(code, err, "No space left")
    assert out.read_text() == "the previous dashboard"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dashboard.html"]  # no temporary file left


def test_report_csv_on_a_full_disk_leaves_the_old_files(capsys, bad, tmp_path, monkeypatch):
    (tmp_path / "protocols.csv").write_text("the previous table\n")
    _full_disk(monkeypatch)
    code, _, err = run(capsys, ["report", bad.known, "--format", "csv", "--out", tmp_path])
    assert_one_line_error(code, err, "No space left")
    assert (tmp_path / "protocols.csv").read_text() == "the previous table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["protocols.csv"]


def test_error_message_is_one_line_even_with_control_characters(capsys):
    code, _, err = run(capsys, ["cards", "show", "Fire\n\x1b[2J 1"])
    assert_one_line_error(code, err, "\\x1b")
    assert "\x1b" not in err


def _module_env() -> dict[str, str]:
    """`python -m protolab` in a subprocess imports the `sim` these tests import (the checkout when
    built in place, site-packages when installed), never a checkout without its compiled engine."""
    env = {k: v for k, v in os.environ.items() if k != TIMEOUT_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(SIM_ROOT), env.get("PYTHONPATH", "")])
    return env


def test_broken_pipe_ends_quietly(tmp_path):
    """`protolab replay --seed 1 | head -1`: no traceback when the reader leaves."""
    import fcntl

    p = subprocess.Popen(
        [sys.executable, "-m", "protolab", "replay", "--seed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_module_env(),
        cwd=tmp_path,
    )
    fcntl.fcntl(p.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # smaller than the log: the writer must wait
    assert p.stdout.readline().startswith(b"seed 1")
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141
    assert err == ""


def test_pythonpath_dot_reaches_ray_workers(bad, tmp_path):
    """The documented `PYTHONPATH=. protolab run` with a user strategy mypkg.bots:Bot (one that
    returns numpy integers) plays on a local Ray, whose workers start in another folder."""
    exe = shutil.which("protolab")
    if exe is None:
        pytest.skip("protolab console script not installed in this environment")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "bots.py").write_text(USER_BOTS)
    (tmp_path / "spec.toml").write_text(
        'name = "user"\nseed = 1\ngames = 2\nshard_games = 2\nevents = false\n'
        '[seats]\nstrategies = ["mypkg.bots:Argmax", "random"]\n'
    )
    env = {**_module_env(), "PYTHONPATH": ".", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    r = subprocess.run(
        [exe, "run", "spec.toml", "--workers", "1", "--out", "runs", "--no-progress", "--allow-code"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert len(list((tmp_path / "runs").glob("user-*/games/*.parquet"))) == 1
