"""Balance analysis over run folders in DuckDB (docs/analysis.md): open.py opens runs as views,
queries.py and flags.py compute the tables, stats.py the statistics, report.py / compare.py /
dashboard.py present them, cli.py registers `protolab report`, `compare` and `dashboard`."""
