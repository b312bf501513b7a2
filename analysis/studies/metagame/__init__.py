"""The metagame study: which trios a player who can be countered should choose (meta.py), the game
solvers it uses (solvers.py), and its terminal, JSON, CSV and page forms (report.py)."""
