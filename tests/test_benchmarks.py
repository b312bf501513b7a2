"""Every benchmark runs, at its smallest size: a benchmark nobody runs rots (report_scale.py once wrote
a run.json the report refused). Their speed figures are not checked here (speed targets live in the
benchmarks themselves); that they run, and produce what they say, is."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

# each script, its smallest arguments ({tmp}: a fresh folder), and a line its output must have
SMALL = {
    "cli_startup.py": (["--repeats", "1"], r"simulate --help\s+best [\d.]+ s"),
    "driver.py": (["--mode", "ledger", "--shards", "40"], r"mode ledger: 40 shards of 2 games"),
    "fit_model.py": (
        ["--games", "40", "--epochs", "1", "--out", "{tmp}/model.json"],
        r"model\.json: hash [0-9a-f]{12}, \d+ rows",
    ),
    "may_share.py": (["--games", "20"], r"fire3_discard_2 .*% of"),
    "play_hash.py": (["--divide", "1000"], r"greedy-greedy\s+20 [0-9a-f]{64}"),
    "play_api.py": (["--games", "2", "--opponent", "greedy"], r"2 ended .* 2 of 2 replay exactly"),
    "turn_cap.py": (["--games", "100"], r"greedy vs greedy, 100 games: \d+ at the turn cap"),
    "text_reader.py": (["--repeats", "1"], r"read 180 cards' boxes in [\d.]+ s"),
    "report_scale.py": (
        ["{tmp}/scale", "--shards", "4", "--games", "50", "--base", "2", "--played", "100"],
        r"4 shards",
    ),
}


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


# scripts that need what only another test makes (a search folder), or whose small run is the claim of
# another test (the fault benchmarks): the test that runs them
ELSEWHERE = {
    "tune_check.py": "tests/protolab/experiment/tune/test_tune.py",
    "sigint_sweep.py": "tests/protolab/experiment/run/test_faults.py",
    "chaos_run.py": "tests/protolab/experiment/run/test_faults.py",
}
# modules the scripts import, not scripts: the script that imports each
MODULES = {"runrows.py": "chaos_run.py"}


def test_every_benchmark_script_is_run_by_a_test():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted([*SMALL, *ELSEWHERE, *MODULES])
    for script, test in ELSEWHERE.items():
        assert f'"{script}"' in (ROOT / test).read_text(), (script, test)
    for module, script in MODULES.items():
        assert f"from {module.removesuffix('.py')} import" in (BENCH / script).read_text(), (module, script)


@pytest.mark.parametrize("script", sorted(SMALL))
def test_a_benchmark_runs_at_its_smallest_size(script, tmp_path):
    args, expect = SMALL[script]
    done = run([str(BENCH / script), *(a.format(tmp=tmp_path) for a in args)], ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(expect, done.stdout), done.stdout[-2000:]


def test_the_fabricated_run_of_report_scale_is_read_by_the_report(tmp_path):
    """The run folder it writes for the report's scale figure is one the report accepts as whole."""
    made = run([str(BENCH / "report_scale.py"), str(tmp_path / "s"), "--shards", "3", "--games", "40"], ROOT)
    assert made.returncode == 0, made.stderr[-2000:]
    report = run(["-m", "protolab", "report", str(tmp_path / "s" / "run"), "--format", "json"], tmp_path)
    assert report.returncode == 0, report.stderr[-2000:]
    (provenance,) = json.loads(report.stdout)["meta"]["provenance"]
    assert provenance["games"] == 120 and provenance["spec_hash"]


def test_the_instruction_count_script_parses():
    """callgrind is too slow for the suite; the script is checked as shell (bash -n)."""
    done = subprocess.run(["bash", "-n", str(BENCH / "instructions.sh")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_rows_hash_reads_dictionary_columns_and_ignores_their_encoding(tmp_path):
    """benchmarks/runrows.py on a run with a cards table (dictionary-encoded card, arm, protocol): it
    sorts and hashes it, and the same rows written without dictionaries hash the same."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq
    from fixtures_analysis.known import known_run

    sys.path.insert(0, str(BENCH))
    try:
        from runrows import rows_hash
    finally:
        sys.path.remove(str(BENCH))
    run_dir = known_run(tmp_path / "dict", cards=True)
    shutil.rmtree(run_dir / "events")  # written without the runner's `seq`, which the events' order needs
    files = sorted((run_dir / "cards").glob("*.parquet"))
    assert files and any(pa.types.is_dictionary(f.type) for f in pq.read_schema(files[0]))
    plain = shutil.copytree(run_dir, tmp_path / "plain")
    for f in sorted((plain / "cards").glob("*.parquet")):
        t = pq.read_table(f)
        values = [pa.field(x.name, getattr(x.type, "value_type", x.type)) for x in t.schema]
        pq.write_table(t.cast(pa.schema(values)), f)
    assert rows_hash(run_dir) == rows_hash(plain)
    other = shutil.copytree(run_dir, tmp_path / "other")
    t = pq.read_table(files[0])
    pq.write_table(
        t.set_column(t.schema.get_field_index("up"), "up", pa.array([9] * len(t), pa.int64())),
        other / "cards" / files[0].name,
    )
    assert rows_hash(other) != rows_hash(run_dir)
