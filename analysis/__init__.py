"""Balance analysis over run folders in DuckDB (docs/analysis.md), in four rooms, each importing only
the ones below it (the import-linter contracts in pyproject.toml):

    studies/  what a set of run folders is (one kind each: plain, A/B, card value, tiers, metagame,
              training, balance search), each kind's queries, tables and page beside it
    pages/    the HTML page shell every page shares, the board page of one game, terminal table cells
    stats/    the statistics (intervals, tests, corrections, sequential intervals, power), pure numpy
    runs/     reading and verifying run folders: storage, the folder and its manifest, the schema,
              DuckDB views over the shards, what produced a run (provenance)

protolab/commands/ registers `protolab report`, `compare` and `dashboard` over them."""
