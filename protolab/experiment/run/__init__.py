"""`protolab run` (and `protolab cardvalue`, one ordinary run of a built spec): a spec in, a run
folder out. `plan` expands the spec into matchups and shards, `shards` plays one shard (the Ray
task) and builds its tables, `shardloop` hands the shards out through jobs.py, `ledger` records
them, `stopping` ends an A/B run once settled, `runner` drives it all, `report` prints what the run
was, `replay` plays one recorded game again, `cardvalue` builds the card-value experiment."""
