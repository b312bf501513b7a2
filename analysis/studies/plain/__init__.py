"""The plain study: run folders pooled into the balance report (report.py over queries.py, flags.py
and picks.py), its notes on rule-taken choices (rule_note.py), and its dashboard (dashboard.py with
its summary and card pages). Every other kind reads its runs or arms through this report."""
