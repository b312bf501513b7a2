"""Experiments: a TOML spec in, a reproducible Parquet dataset out, played on Ray.

`spec` reads and validates the spec file, `plan` expands it into matchups and shards, `seeds`
derives every game's seed, `shards` plays one shard (the Ray task), `dataset` owns the Parquet
layout and the run.json manifest, `runner` drives Ray, `report` prints the closing summary and
`cli` registers `protolab run`. The file format is in docs/experiments.md, the dataset in
docs/data.md."""
