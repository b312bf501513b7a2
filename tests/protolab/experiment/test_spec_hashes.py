"""Every shipped experiment spec keeps its hash (Spec.hash, what a run's rows depend on and what
--resume compares): a change to how a spec is read or stored that moves a hash would make every
existing run folder refuse to resume. A hash here changes only with the example file itself (or the
card files it names), on purpose; then update it here in the same commit."""

from __future__ import annotations

import pytest

from protolab.experiment.spec import examples_dir, load_spec

HASHES = {
    "agreement.toml": "5f12cae8587753b2",
    "demo.toml": "c53954c575f1027d",
    "draft_fitted.toml": "b9ff410a963bc27e",
    "fire1_ab.toml": "cb8915b949b71acd",
    "fire1_ab_settled.toml": "894ee1bfd44bae64",
    "meta.toml": "322f5d3dbe7377d9",
    "meta_psro.toml": "8b355ac1cbbb56d9",
    "protocol_balance.toml": "1b32ab0dcbec3ef5",
    "readings_ab.toml": "e6bd52d0937f8e54",
    "tiers.toml": "a29495d68b0d08d1",
    "tune_chaos_lift.toml": "d8cdd8898bcbce29",
    "tune_fire.toml": "7cfaa64f48aaeb20",
    "tune_fire_wide.toml": "1e5c2b4cdc8a55fb",
    "tune_metal_lift.toml": "c36b5e277d2f6730",
    "verdict_guided.toml": "2a56b797198cb48e",
    "verdict_ladder.toml": "f6c45c2c0e79b414",
    "verdict_top.toml": "b6f6e9c9808b9c3c",
    "verdict_learned.toml": "5729b02ad1ccfd71",
}


def test_every_experiment_example_is_pinned() -> None:
    """A new example is added here too (training specs, train_*.toml, are no experiments)."""
    shipped = {p.name for p in examples_dir().glob("*.toml") if not p.name.startswith("train_")}
    assert shipped == set(HASHES)


@pytest.mark.parametrize("name", sorted(HASHES))
def test_example_hash_unchanged(name: str) -> None:
    spec = load_spec(examples_dir() / name)
    assert spec.hash == HASHES[name]
