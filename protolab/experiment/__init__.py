"""Experiments: a TOML spec in, a reproducible folder out, played on Ray.

One folder per feature: `run/` (a run folder of Parquet files and run.json; card value is one such
run), `train/` (the learned player's training), `tune/` (the balance search), `meta/` (the metagame
loop, runs in a loop). Below them, what every feature shares: `spec/` (a module per
table: draft, arms, meta, tune, stop, strength) reads and validates the spec file, `seeds` derives every
game's seed, `pools` builds a job's pool from card files carried as text, `jobs` maps jobs over Ray
(bounded in flight, retries, progress), `session` starts, joins and ends Ray (`reaper` ends the Ray
of a killed driver), `progress` draws the bar. A feature imports these and no sibling feature (only
`meta/` builds on `run/`), as import-linter's contracts in pyproject.toml check. The spec format is
in docs/experiments.md, the run folder in docs/data.md."""
