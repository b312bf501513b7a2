"""The balance report every study kind reads its runs through, and no kind of its own: the tables of a
pool of games (queries.py), the balance flags (flags.py), draft picks (picks.py), loop draws (loops.py),
people's games (played.py), notes on rule-taken choices (rule_note.py over choice_changes.py), card values
(card_values.py) and the metagame (meta.py over solvers.py, shown by meta_report.py), gathered by report.py
and drawn by dashboard.py (with its summary and card pages); pooled.py reads it as a study, which A/B arms
never are (arms.py). It imports no study kind (pyproject: the import contracts)."""
