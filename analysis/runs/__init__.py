"""Reading and verifying run folders (docs/data.md): where a run lives (storage), its files and
manifest (runfolder, manifest, schema, tallies), checking them (verify), opening them as DuckDB
views (open), and what a run says of itself: its pool, its models, its provenance, its card texts.
Nothing here computes a balance figure; the runner (protolab/experiment/) writes through it too."""
