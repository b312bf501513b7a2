"""Experiments: a TOML spec in, a reproducible run folder (Parquet files and run.json) out, played on Ray.

`spec` reads and validates the spec file, `plan` expands it into matchups and shards, `seeds`
derives every game's seed, `shards` plays one shard (the Ray task) and builds its tables from
analysis/schema.py, `runner` drives Ray and writes through analysis/runfolder.py (the folder's
layout and manifest, which the analysis reads), `report` prints what the run was, `psro` loops
runs for the metagame, `cardvalue` builds the card-value experiment, `replay` replays one row.
The spec format is in docs/experiments.md, the run folder in docs/data.md."""
