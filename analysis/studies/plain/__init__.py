"""The plain study (study.py): run folders pooled into the balance report (analysis/studies/balance/), and
the fitting of a draft table from their games (draft_table.py, `python -m analysis.studies.plain.draft_table`)."""
