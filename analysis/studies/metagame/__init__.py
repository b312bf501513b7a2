"""The metagame study: a metagame loop folder (meta.json) read as the metagame of its runs (the payoff
model and solvers in analysis/studies/balance/meta.py and solvers.py, their tables in meta_report.py)."""
