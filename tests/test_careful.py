"""Issue 38: every command as careful as `run`.

- code named in a spec runs only with --allow-code, in every command that reads a spec: the
  commands are enumerated from the parser, so a new one cannot skip the rule;
- messages that name the cause (a Python expert in a training spec, model files too large, ...);
- nothing left in the temp folder;
- `cards check` with several files refuses what a run refuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fixtures_store import start_moto

from protolab.cli import build_parser, main

CODE = "codepkg.bots:First"
BOTS = """
import pathlib
print("codepkg.bots ran")
pathlib.Path({marker!r}).write_text("ran")
from strategies.user import Strategy


class First(Strategy):
    def choose(self, observation, decision):
        return 0
"""
PLAIN = (
    f'name = "code"\nseed = 1\ngames = 2\nshard_games = 2\nevents = false\n[seats]\nstrategies = ["{CODE}", "random"]\n'
)
META = (
    f'name = "loop"\nseed = 7\ngames = 2\nevents = false\n[pool]\nsets = ["Main 1"]\n[seats]\n'
    f'strategies = ["{CODE}", "greedy"]\n[draft]\nmode = "round_robin"\n'
    'protocols = ["Darkness", "Death", "Fire", "Gravity", "Life", "Light", "Psychic"]\n[meta]\nstart = 4\n'
)
TUNE = (
    f'name = "tune"\nseed = 7\ngames = 200\n[pool]\nsets = ["Main 1", "Aux 1"]\n[seats]\n'
    f'strategies = ["greedy", "{CODE}"]\nswap = true\n[draft]\nmode = "random"\n'
    '[tune]\nprotocol = "Fire"\ncards = ["Fire 1"]\nkinds = ["count"]\ntrials = 2\nbatch = 100\ngames = 200\n'
)
TRAIN = (
    'name = "t"\nseed = 1\n[pool]\nsets = ["Main 1"]\n[train]\ngenerations = 1\n[train.data]\ngames = 4\n'
    "shard_games = 4\n[train.net]\nhidden = [2]\n[train.fit]\nepochs = 1\n[train.ladder]\n"
    'opponents = ["random", "{opponent}"]\ngames = 2\nshard_games = 2\n'
)


@pytest.fixture
def code(tmp_path, monkeypatch):
    """A package `codepkg` whose package and module each leave a marker file (and print) when they
    run; the working folder is a fresh one, so what a command leaves there can be seen."""
    src = tmp_path / "src" / "codepkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text(
        f"import pathlib\nprint('codepkg ran')\npathlib.Path({str(tmp_path / 'pkg-ran')!r}).write_text('ran')\n"
    )
    (src / "bots.py").write_text(BOTS.format(marker=str(tmp_path / "module-ran")))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield tmp_path
    for name in ("codepkg", "codepkg.bots"):
        sys.modules.pop(name, None)


def run_folder(where: Path, spec) -> str:
    """A run folder whose run.json stores `spec` (as a run would write it), no game played yet."""
    from sim.pool import ENGINE_VERSION

    where.mkdir()
    manifest = {
        "run_id": where.name,
        "format": 1,
        "complete": False,
        "spec": spec.to_dict(),
        "spec_hash": spec.hash,
        "pool_hash": "x",
        "engine_version": ENGINE_VERSION,
        "protolab_version": "0",
        "games": 0,
        "shards": [],
    }
    (where / "run.json").write_text(json.dumps(manifest))
    return str(where)


def _file(name: str, text: str) -> str:
    Path(name).write_text(text)
    return name


def _run_of(spec_text: str) -> str:
    from protolab.experiment.spec import load_spec

    return run_folder(Path("given-run"), load_spec(_file("stored.toml", spec_text)))


def _cardvalue_run() -> str:
    from protolab.experiment.run.cardvalue import card_value_spec

    return run_folder(Path("given-run"), card_value_spec(["Fire 1"], CODE, 2, 1, ["Main 1"]))


def _train_folder() -> str:
    from protolab.experiment.train.trainspec import load_train_spec

    spec = load_train_spec(_file("stored.toml", TRAIN.format(opponent=CODE)))
    Path("given-train").mkdir()
    Path("given-train/train.json").write_text(
        json.dumps({"spec": spec.to_dict(), "spec_hash": spec.hash, "generations": []})
    )
    return "given-train"


# Every command that reads a spec: how to give it one naming CODE, and the key its refusal names.
# The test below checks these are exactly the commands with --allow-code, and that every other
# command of the parser is listed in READS_NO_SPEC with the reason.
READS_SPEC = {
    "run": [
        (lambda: ["run", _file("spec.toml", PLAIN)], "seats.strategies[0]"),
        (lambda: ["run", _file("spec.toml", META)], "seats.strategies[0]"),
        (lambda: ["run", "--resume", _run_of(PLAIN)], "seats.strategies[0]"),
    ],
    "replay": [
        (lambda: ["replay", _run_of(PLAIN), "--game", "0"], "seats.strategies[0]"),
        (lambda: ["replay", _run_of(PLAIN), "--game", "0", "--html", "g.html"], "seats.strategies[0]"),
    ],
    "tune": [(lambda: ["tune", _file("spec.toml", TUNE)], "seats.strategies[1]")],
    "power": [(lambda: ["power", _file("spec.toml", PLAIN), "--pilot", "100"], "seats.strategies[0]")],
    "train": [
        (
            lambda: ["train", _file("spec.toml", TRAIN.format(opponent=CODE)), "--workers", "1"],
            "train.ladder.opponents[1]",
        ),
        (lambda: ["train", "--resume", _train_folder(), "--workers", "1"], "train.ladder.opponents[1]"),
    ],
    "cardvalue": [(lambda: ["cardvalue", "--resume", _cardvalue_run(), "--workers", "1"], "arms[0].strategies[0]")],
}
READS_NO_SPEC = {
    "simulate": "strategies on the command line: the user's explicit choice",
    "scenario": "scenario files name no strategies",
    "cards": "card files only",
    "bench": "strategies on the command line",
    "ladder": "strategies on the command line",
    "report": "reads run folders' rows, plays nothing",
    "compare": "reads run folders' rows, plays nothing",
    "dashboard": "its example games replay with --allow-code unset: refused (skipped), like replay",
    "meta": "reads run folders and loop folders, plays nothing",
    "play": "its opponent is given on the command line, and Python strategies are always refused (no --allow-code)",
}


def commands() -> dict[str, object]:
    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    return dict(sub.choices)


def test_every_command_is_sorted_into_reads_a_spec_or_not():
    cmds = commands()
    assert set(READS_SPEC) | set(READS_NO_SPEC) == set(cmds), "a new command: does it read a spec?"
    assert not set(READS_SPEC) & set(READS_NO_SPEC)
    with_flag = {name for name, p in cmds.items() if any("--allow-code" in a.option_strings for a in p._actions)}
    assert with_flag == set(READS_SPEC)


CASES = [(name, i) for name, cases in READS_SPEC.items() for i in range(len(cases))]


@pytest.mark.parametrize(("name", "i"), CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_a_spec_naming_code_is_refused_before_any_import(code, capsys, name, i):
    make_argv, key = READS_SPEC[name][i]
    argv = make_argv()
    before = sorted(p.name for p in Path.cwd().iterdir())
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"key '{key}'" in err and "--allow-code" in err and "'codepkg.bots'" in err, err
    assert not (code / "pkg-ran").exists() and not (code / "module-ran").exists()
    assert "ran" not in out + err
    assert sorted(p.name for p in Path.cwd().iterdir()) == before, "the refusal left something behind"


def _recorded_expert() -> list[str]:
    """A training folder whose recorded spec (train.json, not checked as a file is) names CODE as expert."""
    from protolab.experiment.train.trainspec import load_train_spec

    spec = load_train_spec(_file("spec.toml", TRAIN.format(opponent="greedy")))
    stored = spec.to_dict()
    stored["data"]["expert"] = CODE
    Path("given-train").mkdir()
    Path("given-train/train.json").write_text(json.dumps({"spec": stored, "spec_hash": spec.hash, "generations": []}))
    return ["--resume", "given-train"]


@pytest.mark.parametrize(
    "given",
    [
        lambda: [
            _file(
                "spec.toml",
                TRAIN.format(opponent="greedy").replace("[train.data]\n", f'[train.data]\nexpert = "{CODE}"\n'),
            )
        ],
        _recorded_expert,
    ],
    ids=["spec", "resume"],
)
def test_a_python_expert_is_refused_in_one_line_even_with_allow_code(code, capsys, given):
    argv = given()
    before = sorted(Path.cwd().rglob("*"))
    assert main(["train", *argv, "--workers", "1", "--allow-code"]) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and "key 'train.data.expert'" in err and "built-in" in err, err
    assert not (code / "module-ran").exists() and sorted(Path.cwd().rglob("*")) == before


# -- nothing left behind ---------------------------------------------------------------------------

TINY_TRAIN = (
    'name = "t"\nseed = 1\n[pool]\nsets = ["Main 1"]\n[train]\ngenerations = 1\n[train.data]\ngames = 8\n'
    "shard_games = 2\n[train.net]\nhidden = [2]\n[train.fit]\nepochs = 1\nvalidation = {share}\n"
    "[train.ladder]\ngames = 2\nshard_games = 2\n"
)


@pytest.mark.parametrize(("share", "status"), [(0.5, 0), (0.01, 2)], ids=["trained", "failed"])
def test_train_leaves_nothing_in_the_temp_folder_nor_a_failed_folder(tmp_path, monkeypatch, capsys, share, status):
    """The ladder of generation 0 plays its model (a model file per job); a share that holds out
    none of the games fails the fit of generation 0 in one line, and its new folder goes with it.
    The temp folder is a private one (what TMPDIR gives a process)."""
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.toml").write_text(TINY_TRAIN.format(share=share))
    rc = main(["train", "t.toml", "--workers", "1", "--out", "run", "--models", "models", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == status, err
    assert list(temp.iterdir()) == []
    if status:
        assert err.count("\n") == 1 and "key 'train.fit.validation'" in err, err
        assert not (tmp_path / "run").exists() and not (tmp_path / "models").exists()
    else:
        assert (tmp_path / "run" / "train.json").exists()


STOPPED_TUNE = TUNE.replace(CODE, "greedy").replace("trials = 2", "trials = 2000\ngeneration = 1")


def test_tunes_stop_line_names_the_trials_it_kept(tmp_path):
    """Ctrl-C once trials are recorded: the stop line counts what the search folder keeps."""
    import os
    import signal
    import subprocess
    import time

    (tmp_path / "t.toml").write_text(STOPPED_TUNE)
    record = tmp_path / "out" / "tune.json"
    p = subprocess.Popen(
        [sys.executable, "-m", "protolab", "tune", "t.toml", "--workers", "1", "--out", "out"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    deadline = time.monotonic() + 60
    while not record.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=30)[1]
    assert p.returncode == 130, err
    n = len(json.loads(record.read_text())["trials"])
    assert n >= 1 and err.strip().splitlines()[-1].startswith(f"protolab: stopped; {n} trial"), err
    assert "before any shard" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["ladder", "learned", "greedy", "--games", "2"],
        ["bench", "--strategy", "learned", "--games", "2", "--repeats", "1"],
    ],
    ids=["ladder", "bench"],
)
def test_ladder_and_bench_say_the_model_plays_another_pool(capsys, argv):
    from strategies.model import load_model

    trained = load_model().meta["pool_hash"]
    assert main([*argv, "--set", "Main 1"]) == 0
    out = capsys.readouterr().out
    assert f"(trained on pool {trained}, not this pool: a variant or another set)" in out, out
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["models"][0]["same_pool"] is True


@pytest.fixture
def moto(tmp_path):
    """Start moto's S3 server on 127.0.0.1: lenient, with a bucket `lab`, or strict, checking every
    request's credentials."""

    def start(strict: bool) -> str:
        proc, endpoint = start_moto(**({"INITIAL_NO_AUTH_ACTION_COUNT": "0"} if strict else {}))
        procs.append(proc)
        import pyarrow.fs as pafs

        if not strict:  # a strict store refuses even this: the probe's write is refused
            pafs.S3FileSystem(
                endpoint_override=endpoint,
                allow_bucket_creation=True,
                region="us-east-1",
                access_key="setup",
                secret_key="setup",
            ).create_dir("lab")
        return endpoint

    procs: list = []
    yield start
    for p in procs:
        p.terminate()
        p.wait(10)


@pytest.mark.parametrize("strict", [False, True], ids=["missing", "rejected"])
def test_object_store_credentials_missing_or_rejected_are_named(moto, tmp_path, monkeypatch, strict):
    from analysis.runs.storage import StorageError, check_read_write, location

    endpoint = moto(strict)
    for k in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_PROFILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    if strict:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "nobody")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    with pytest.raises(StorageError) as e:
        check_read_write(location("s3://lab/runs"))
    assert ("refused access: check its credentials" if strict else "no credentials for the object store") in str(e)


# -- checks that agree with runs -------------------------------------------------------------------


def _variant(name: str, card: str, body: str = "value = 5") -> str:
    return f'variant = "{name}"\n[[cards]]\nreplaces = "{card}"\n{body}\n'


def _protocol(name: str, first_card: str = "") -> str:
    from sim.cards.loader import official_files

    text = next(f for f in official_files() if f.name == "apathy.toml").read_text()
    text = text.replace('protocol = "Apathy"', f'protocol = "{name}"')
    return (
        text.replace("[[cards]]\nvalue = 0\n", f'[[cards]]\nvalue = 0\nname = "{first_card}"\n', 1)
        if first_card
        else text
    )


# Each refusal sim.pool.load_pool has for files that are fine one by one: (files, sets, words of its message).
TOGETHER = {
    "replaced-twice": ([_variant("a", "Fire 1"), _variant("b", "Fire 1", "value = 4")], [], "already replaced by"),
    "no-such-card-in-the-sets": ([_variant("a", "Fire 1")], ["Main 2"], "no such card in the pool"),
    "text-without-steps": (
        [_variant("a", "Fire 1", 'middle.text = "Zorp the glorp."\nmiddle.do = []')],
        [],
        "would play it as blank",
    ),
    "one-name-twice": ([_protocol("Blaze", "Spark"), _protocol("Ember", "Spark")], [], "already has a card of this"),
    "too-many-protocols": (
        [_protocol(f"Extra{chr(65 + i // 26)}{chr(65 + i % 26)}") for i in range(35)],
        [],
        "at most 64 protocols",
    ),
    "unknown-set": ([_variant("a", "Fire 1")], ["Main 9"], "unknown set 'Main 9'"),
}


# The refusals `cards check` lists (every such box of the files at once) rather than stops at.
LISTED = {"text-without-steps"}


def _files(texts: list[str]) -> list[str]:
    return [_file(f"f{i:02d}.toml", t) for i, t in enumerate(texts)]


@pytest.mark.parametrize("case", list(TOGETHER))
def test_cards_check_refuses_what_a_run_refuses(tmp_path, monkeypatch, capsys, case):
    from sim.cards.loader import CardDataError, load_file
    from sim.pool import load_pool

    monkeypatch.chdir(tmp_path)
    texts, sets, words = TOGETHER[case]
    files = _files(texts)
    if case != "unknown-set":
        for f in files:
            load_file(f)  # each file is fine alone
    with pytest.raises(CardDataError, match=words):  # the run's loader refuses them together
        load_pool([*sets] or ["Main 1", "Aux 1", "Main 2", "Aux 2"], cards=files)
    sets_args = [a for s in sets for a in ("--set", s)]
    check_status = main(["cards", "check", *files, *sets_args])
    check = capsys.readouterr()
    assert main(["simulate", "--games", "2", *(a for f in files for a in ("--cards", f)), *sets_args]) == 2
    run = capsys.readouterr().err
    assert len(run.splitlines()) == 1 and words in run
    if case in LISTED:  # a box a run cannot play: `cards check` lists it with the others, exit status 1
        assert check_status == 1 and f"  refused: {run.removeprefix('protolab: error: ').strip()}\n" in check.out
    else:
        assert check_status == 2 and check.err == run


def test_cards_check_accepts_what_a_run_accepts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    files = _files([_variant("a", "Fire 1"), _variant("b", "Fire 2", "value = 4"), _protocol("Blaze", "Spark")])
    assert main(["cards", "check", *files]) == 0
    assert main(["simulate", "--games", "2", *(a for f in files for a in ("--cards", f))]) == 0


def test_every_refusal_of_the_loader_is_tested():
    """The loader's refusals (sim/pool.py, besides one file's own, which `cards check` reads with the
    same load_file): one case each above, and 'fewer than 6 protocols', which only sets can cause."""
    import inspect

    import sim.pool

    assert inspect.getsource(sim.pool).count("raise CardDataError") == len(TOGETHER) + 1


def test_play_refuses_a_python_opponent_before_any_import(code, capsys):
    """`play` has no --allow-code: a Python opponent is one line, exit 2, and nothing of it runs."""
    rc = main(["play", "--opponent", CODE, "--port", "0", "--out", "pt"])
    out, err = capsys.readouterr()
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "'codepkg.bots'" in err, err
    assert not (code / "pkg-ran").exists() and not (code / "module-ran").exists() and "ran" not in out + err
    assert not Path("pt").exists()
