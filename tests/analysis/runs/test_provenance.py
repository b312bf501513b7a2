"""Every output names what produced it (analysis/runs/provenance.py): a greedy run's report and page and a
search run's differ in their headers and name their bots. One tiny real tier study on a local Ray
(greedy and search tiers on shared seeds) gives both runs; its tiers are opened as `RUN#tier`."""

import io
import json

import pandas as pd
import pytest

from analysis.runs.manifest import Manifest, ManifestError
from analysis.runs.provenance import describe, provenance
from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

SPEC = """
name = "prov"
seed = 9
games = 20
shard_games = 20
tiers = ["greedy", "search:sims=2,depth=1"]
[pool]
sets = ["Main 1", "Aux 1"]
[seats]
swap = true
"""
SEARCH = "search-sims-2-depth-1"


@pytest.fixture(scope="module")
def tier_run(tmp_path_factory):
    from protolab.experiment.run.runner import RunOptions, run

    d = tmp_path_factory.mktemp("prov")
    (d / "prov.toml").write_text(SPEC)
    res = run(str(d / "prov.toml"), RunOptions(workers=2, out=str(d / "runs"), show_progress=False))
    assert res.status == "complete" and res.games == 40
    from rich.console import Console

    from protolab.experiment.run.runner import analyse

    analyse(res, Console(file=io.StringIO(), width=160))  # what `protolab run` ends with: the tier page
    return res.run_dir


def out_of(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def header(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("Produced by", "# Produced by"))]


def manifest(**keys) -> Manifest:
    """A run.json with the keys every one has, and `keys`."""
    return Manifest.of(
        {
            "run_id": "bare",
            "format": 1,
            "complete": True,
            "spec": {},
            "spec_hash": "s",
            "games": 0,
            "shards": [],
            **keys,
        },
        "run.json",
    )


def test_manifest_block_names_everything():
    m = manifest(
        run_id="r1",
        spec={
            "seed": 7,
            "draft": {"mode": "random"},
            "arms": [
                {
                    "name": "base",
                    "sets": ["Main 1"],
                    "strategies": ["greedy", "random"],
                    "cards": [{"path": "fire1.toml", "sha256": "ab"}],
                }
            ],
        },
        pool_hash="p0",
        protolab_version="9.9",
        shards=[{"index": 0, "games": 30}, {"index": 1, "games": 12}],
    )
    p = provenance(m)
    assert (p["seed"], p["games"], p["pool_hash"], p["design"]) == (7, 42, "p0", "single")
    assert describe(p) == (
        "r1: strategies: seat 0 greedy, seat 1 random; sets Main 1; variant files fire1.toml; "
        "pool p0; master seed 7; 42 games; protolab 9.9"
    )
    assert "strategies not recorded" in describe(provenance(manifest()))
    assert provenance(None, "batch")["path"] == "batch" and "not recorded" in describe(provenance(None))
    with pytest.raises(ManifestError, match=r"run.json: key 'spec.arms\[0\].strategies': expected a list of strings"):
        manifest(spec={"arms": [{"name": "a", "strategies": "greedy"}]})


@pytest.mark.slow
def test_greedy_and_search_reports_differ_in_their_headers(tier_run, capsys):
    greedy = header(out_of(capsys, "report", f"{tier_run}#greedy"))
    search = header(out_of(capsys, "report", f"{tier_run}#{SEARCH}"))
    assert greedy != search and len(greedy) == len(search) == 1
    assert "strategies: greedy on both seats" in greedy[0] and "search:sims=2,depth=1 on both seats" in search[0]
    for line in greedy + search:
        assert "sets Main 1, Aux 1" in line and "master seed 9" in line and "20 games" in line and "protolab " in line
    csv = out_of(capsys, "report", f"{tier_run}#{SEARCH}", "--format", "csv")
    assert header(csv) == ["# " + search[0]]
    assert "protocol" in pd.read_csv(io.StringIO(csv), comment="#").columns
    meta = json.loads(out_of(capsys, "report", f"{tier_run}#greedy", "--format", "json"))["meta"]
    assert meta["provenance"][0]["strategies"] == {"greedy": ["greedy", "greedy"]}


def test_pages_and_comparisons_name_their_bots(tier_run, capsys, tmp_path):
    pages = {}
    for tier in ("greedy", SEARCH):
        out = tmp_path / f"{tier}.html"
        out_of(capsys, "dashboard", f"{tier_run}#{tier}", "--out", out)
        pages[tier] = out.read_text()
    assert "greedy on both seats" in pages["greedy"] and "search:sims=2,depth=1" not in pages["greedy"]
    assert "search:sims=2,depth=1 on both seats" in pages[SEARCH]
    compared = header(out_of(capsys, "compare", f"{tier_run}#greedy", f"{tier_run}#{SEARCH}"))
    assert len(compared) == 2 and "greedy on both seats" in compared[0] and "search:sims=2" in compared[1]
    meta = json.loads(out_of(capsys, "compare", f"{tier_run}#greedy", f"{tier_run}#{SEARCH}", "--format", "json"))
    assert [p["arm"] for p in meta["meta"]["provenance"]] == ["greedy", SEARCH]
    # the run's own page is the tier page, naming both tiers' bots
    page = (tier_run / "dashboard.html").read_text()
    assert "tier study" in page and "greedy on both seats" in page and "search:sims=2,depth=1 on both seats" in page
