"""The run-folder contract (docs/data.md): run.json declared once (analysis/runs/manifest.py, the
shard entry included), read in one place (runfolder.read_manifest), and a run folder written before
the declaration still reads, writes back byte for byte, opens, verifies and resumes.

tests/fixtures_analysis/main-6c62cce is a complete run folder written by the code of main at
6c62cce (before ShardEntry existed): 4 shards of 4 games, every table."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from analysis.runs import runfolder
from analysis.runs.manifest import ManifestError, ShardEntry
from analysis.runs.open import open_runs

ROOT = Path(__file__).resolve().parents[3]
WRITTEN_BY_MAIN = ROOT / "tests" / "fixtures_analysis" / "main-6c62cce"
PACKAGES = ("sim", "strategies", "analysis", "protolab")
THE_READER = {"analysis/runs/runfolder.py"}  # reads run.json and the journal
THE_DECLARATION = {"analysis/runs/manifest.py"}


@pytest.fixture
def old_run(tmp_path) -> Path:
    d = tmp_path / WRITTEN_BY_MAIN.name
    shutil.copytree(WRITTEN_BY_MAIN, d)
    return d


def test_a_run_json_written_before_the_declaration_writes_back_byte_for_byte(old_run):
    before = (old_run / "run.json").read_bytes()
    m = runfolder.read_manifest(old_run)
    assert all(isinstance(s, ShardEntry) for s in m.shards) and len(m.shards) == 4
    runfolder.write_manifest(old_run, m)
    assert (old_run / "run.json").read_bytes() == before


def test_a_journal_entry_keeps_its_stored_form(old_run):
    """A journal line (sorted keys, as main wrote it) reads back to the same object."""
    m = runfolder.read_manifest(old_run)
    raw = json.loads((old_run / "run.json").read_text())["shards"][2]
    (old_run / runfolder.JOURNAL).write_text(json.dumps(raw, sort_keys=True) + "\n")
    (entry,) = runfolder.read_journal(old_run)
    assert json.dumps(entry.to_json(), sort_keys=True) == json.dumps(raw, sort_keys=True)
    assert runfolder.read_manifest(old_run).shards[2].to_json() == m.shards[2].to_json()


def test_a_run_written_before_the_declaration_opens_and_verifies(old_run):
    runs = open_runs(old_run, verify="full")
    try:
        assert runs.warnings == []
        assert runs.sql("select count(*) as n from games")["n"][0] == 16
    finally:
        runs.close()


@pytest.mark.usefixtures("kept_ray")
def test_a_run_written_before_the_declaration_resumes(old_run):
    """A damaged shard of the old run is played again, to the same rows."""
    from protolab.experiment.run.runner import RunOptions, run

    games = pq.read_table(WRITTEN_BY_MAIN / "games").sort_by("game_index")
    (old_run / "games" / "shard-00002.parquet").unlink()
    res = run(None, RunOptions(resume=str(old_run), workers=1, show_progress=False))
    assert res.status == "complete" and res.computed_shards == 1 and res.kept_shards == 3
    assert res.recomputed and "shard 2" in res.recomputed[0]
    assert pq.read_table(old_run / "games").sort_by("game_index").equals(games)


def _edit_shard(run_dir: Path, at: int, change: dict[str, object]) -> None:
    m = json.loads((run_dir / "run.json").read_text())
    m["shards"][at].update(change)
    (run_dir / "run.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"games": "4"}, "key 'shards[1].games': expected a whole number at least 0, got '4'"),
        ({"index": -1}, "key 'shards[1].index': expected a whole number at least 0, got -1"),
        ({"games_sha256": 12}, "key 'shards[1].games_sha256': expected a string, got 12"),
        ({"cards_bytes": True}, "key 'shards[1].cards_bytes': expected a whole number at least 0, got True"),
        ({"worker": []}, "key 'shards[1].worker': expected an object, got []"),
    ],
)
def test_a_bad_shard_entry_is_one_line_naming_file_and_key(old_run, change, message):
    _edit_shard(old_run, 1, change)
    with pytest.raises(runfolder.RunDirError) as e:
        runfolder.read_manifest(old_run)
    text = str(e.value)
    assert text.startswith(f"{old_run / 'run.json'}: {message}") and "\n" not in text


def test_a_shard_entry_that_is_no_object_is_named():
    with pytest.raises(ManifestError, match=r"^run.json: key 'shards\[0\]': expected a shard entry \(an object\)"):
        ShardEntry.of([1, 2], "run.json", "shards[0]")


def test_a_bad_journal_line_names_the_line_and_key(old_run):
    (old_run / runfolder.JOURNAL).write_text('{"index": 0, "games": 4}\n{"index": 1, "games": null}\n')
    with pytest.raises(runfolder.RunDirError, match=r"shards.jsonl: line 2: key 'games': expected a whole number"):
        runfolder.read_manifest(old_run)


def test_keys_an_older_protolab_wrote_are_kept_in_place():
    raw = {"index": 3, "seconds": 1.5, "games": 2, "games_file": "games/x.parquet"}
    entry = ShardEntry.of(raw, "run.json")
    assert list(entry.to_json()) == list(raw) and entry.to_json() == raw
    assert [f.kind for f in entry.files()] == ["games"]


def test_the_shard_entry_declares_every_table_once():
    """Each table's four keys, and nothing per table beyond them: the files() view covers them all."""
    per_table = {k for k in ShardEntry.model_fields if "_" in k and k.split("_")[0] in runfolder.TABLES}
    want = {f"{kind}_{x}" for kind in runfolder.TABLES for x in ("rows", "file", "bytes", "sha256")}
    assert per_table == want


def _package_files() -> list[tuple[str, str]]:
    return [
        (str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
    ]


# Reading run.json's text, or parsing a manifest or a shard entry from JSON: only the reader does.
_READS_RUN_JSON = re.compile(
    r"""(["']run\.json["']|\bMANIFEST\b)\s*\)?\s*\.\s*(read_text|read_bytes|open_input)\b|open\([^)]*run\.json"""
)
_PARSES = re.compile(r"\b(Manifest|ShardEntry)\.of\(|\bjson\.loads?\([^)]*(run\.json|MANIFEST|JOURNAL)")


def test_run_json_is_read_in_one_place():
    """runfolder.read_manifest is the one reader of run.json (and its journal): no other module of
    the packages reads the file or parses a manifest or a shard entry from its JSON. The worker
    makes its entry through ShardEntry.of too (protolab/experiment/run/shards.py: shard_entry), the
    one writer of an entry."""
    readers = [
        f"{path}: {m.group(0)}"
        for path, text in _package_files()
        if path not in THE_READER | THE_DECLARATION
        for m in [*_READS_RUN_JSON.finditer(text), *_PARSES.finditer(text)]
        if not (path == "protolab/experiment/run/shards.py" and m.group(0) == "ShardEntry.of(")
    ]
    assert readers == []


def test_the_reader_test_sees_a_reader(tmp_path):
    """The patterns above catch the readers this contract removed (so the test above can fail)."""
    removed = [
        'm = json.loads(mf.read_text(MAX_MANIFEST_BYTES))\nreturn Manifest.of(m, str(run / "run.json"))',
        'Manifest.of(json.loads((location(run) / "run.json").read_text(MAX_MANIFEST_BYTES)), str(run))',
        "text = (run_dir / MANIFEST).read_text()",
    ]
    for text in removed:
        assert _READS_RUN_JSON.search(text) or _PARSES.search(text), text


def test_the_end_of_a_run_hands_its_manifest_to_the_report(old_run):
    """`protolab run` ends with its study's report over the run.json it holds in memory (runfolder.
    handed): the file is not parsed again. Here the file on disk is garbage and the report still runs."""
    import io

    from rich.console import Console

    from protolab.experiment.run.runner import RunResult, analyse

    m = runfolder.read_manifest(old_run)
    (old_run / "run.json").write_text("not json")
    with runfolder.handed(old_run, m):
        assert runfolder.read_manifest(old_run).to_json() == m.to_json()
    with pytest.raises(runfolder.RunDirError, match="run.json: cannot be read"):
        runfolder.read_manifest(old_run)  # outside the block, the file is read
    out = io.StringIO()
    analyse(RunResult(old_run, "complete", 16, 0.0, manifest=m), Console(file=out, width=200))
    assert m.run_id in out.getvalue()
