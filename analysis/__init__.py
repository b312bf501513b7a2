"""Balance analysis over run folders (DuckDB); grows with the analysis issue. For now the quick
summary of a batch lives in sim.summary."""
